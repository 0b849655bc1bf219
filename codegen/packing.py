"""Several points per workgroup in an intra-group version.

An intra-group version gives each point of its context a workgroup as wide as its widest level-0 segop.
Where that is narrow (LocVolCalib's y sweep solves rows of 32), one point per workgroup leaves the device
mostly idle: a multiprocessor holds only so many workgroups, so 32-thread ones fill a fraction of its threads.
A packed kernel runs `group_rows` points in one workgroup, each on a slice of its threads and of its local
memory (codegen.opencl.KernelWriter.pack_rows).

The points share the workgroup's barriers, so every barrier must be reached by all of them alike: the control
flow around barriers must not depend on the point. `packable` checks this conservatively: the bounds of the
loops run by the workgroup, the conditions of its branches and the widths of its level-0 scans (the one
level-0 segop that loops around barriers) must be computed only from the kernel's inputs, constants and
the indices of such loops. A workgroup-level while loop is never packed.
"""

from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import free_in_exp

SCALAR_EXPS = (S.BinOp, S.UnOp, S.PrimCall, S.AtomExp)


def packable(op: T.SegMap) -> bool:
    """Whether points of this intra-group segmap may share a workgroup (see the module's docstring)."""
    inputs = set(free_in_exp(op))
    return _uniform_body(op.body, inputs)


def _uniform_body(body: S.Body, uniform: set) -> bool:
    uniform = set(uniform)

    def same_for_all(e) -> bool:
        return all(name in uniform for name in free_in_exp(e))

    for stm in body.stms:
        e = stm.exp
        if isinstance(e, SCALAR_EXPS):
            if same_for_all(e):
                uniform |= {p.name for p in stm.pat}
        elif isinstance(e, S.Loop):
            if not isinstance(e.form, S.ForLoop) or not same_for_all(S.AtomExp(e.form.bound)):
                return False
            if not _uniform_body(e.body, uniform | {e.form.i.name}):
                return False
        elif isinstance(e, S.If):
            if not same_for_all(S.AtomExp(e.cond)):
                return False
            if not (_uniform_body(e.then, uniform) and _uniform_body(e.else_, uniform)):
                return False
        elif isinstance(e, T.SegScan) and e.level == 0:
            if not same_for_all(S.AtomExp(e.ctx[-1].width)):
                return False
    return True
