"""Which updates and scatters inside a kernel's sequential loop may write into the loop's array state in place.

A loop whose body returns `state with [i] = v` (or a chain of updates and scatters, with reshapes between
them: NW's `scatter_2d`, a scatter of the flattened block) would otherwise copy the whole array at every
iteration (O(n) per step: the Brownian bridge of OptionPricing, LU's diagonal block, NW's blocks). An update
writes into the array it updates when nothing reads that array, or any view of its memory, after the update:
then no one can tell the old array from the new. The analysis is syntactic, on the loop's body alone.

Outside a loop's chain, `Owner` follows the arrays a body makes as its code is written: one that a statement of
the body wrote into memory of its own (LUD's and NW's blocks, copied in and then updated) and that one statement
alone reads may be written into by that statement (an update, a scatter) or kept (a loop's initial state).
"""

from incflat.codegen.kernel import View
from incflat.ir import source as S
from incflat.ir.analysis import free_in_exp, use_counts

# Expressions whose result may be a view of their array argument (share its memory in a kernel).
VIEWS = (S.Index, S.Rearrange, S.Reshape, S.AtomExp)
WRITES = (S.Update, S.Scatter)  # what may write into its array: its array is `written`'s


def written(e) -> S.Var:
    return e.arr if isinstance(e, S.Update) else e.dest


def view_args(stm: S.Stm) -> list:
    """Inside a kernel: the arrays whose memory a statement's array results may share (a view's array)."""
    return _array_args(stm.exp) if isinstance(stm.exp, VIEWS) and _array_args(stm.exp) else []


def in_place_updates(loop: S.Loop, shares=view_args) -> set:
    """The names bound by the updates and scatters of `loop`'s body that may write into the loop's array state,
    and the results they make: the chains `p1 = p with ..., p2 = reshape p1, p3 = scatter p2 ..., ..., result`
    from an array parameter p to its result. `shares(stm)`: the arrays whose memory stm's results may share
    (view_args inside a kernel; the host's own rule for its statements)."""
    body = loop.body
    binder = {v.name: (t, stm) for t, stm in enumerate(body.stms) for v in stm.pat}
    memory = memories(body, shares)
    chosen = set()
    for param, result in zip(loop.params, body.result):
        if not isinstance(result, S.Var) or sum(isinstance(r, S.Var) and r.name == result.name
                                                for r in body.result) != 1:
            continue
        chain, current = [], result.name
        while current in binder:
            t, stm = binder[current]
            if isinstance(stm.exp, WRITES):
                chain.append((t, stm))
                current = written(stm.exp).name
            elif isinstance(stm.exp, S.Reshape):
                current = stm.exp.arr.name
            else:
                break
        if chain and current == param.name and all(unread_after(body, t, stm, memory) for t, stm in chain):
            chosen |= {stm.pat[0].name for _, stm in chain} | {result.name}
    return chosen


def memories(body: S.Body, shares) -> dict:
    """Each variable's memory: the variables that may share it with it (views of one another, either way)."""
    groups = {}
    for stm in body.stms:
        shared = shares(stm)
        if shared:
            joined = set().union(*(groups.get(n, {n}) for n in list(shared) + [p.name for p in stm.pat]))
            for name in joined:
                groups[name] = joined
    return groups


def unread_after(body: S.Body, t: int, stm: S.Stm, memory: dict) -> bool:
    """Whether no statement after position t, nor the body's results, nor the write's own values reads the
    memory that the update or scatter at t writes into."""
    target = written(stm.exp).name
    aliases = memory.get(target, {target})
    own = [stm.exp.value] if isinstance(stm.exp, S.Update) else [stm.exp.idxs, stm.exp.vals]
    if any(isinstance(a, S.Var) and a.name in aliases for a in own):
        return False
    later = set()
    for after in body.stms[t + 1:]:
        later |= set(free_in_exp(after.exp))
    later |= {a.name for a in body.result if isinstance(a, S.Var)} - {stm.pat[0].name}
    return not (later & aliases)


def _array_args(e) -> list:
    if isinstance(e, S.AtomExp):
        return [e.x.name] if isinstance(e.x, S.Var) else []
    return [e.arr.name]


class Owner:
    """The arrays of one body being written (codegen.opencl's KernelWriter.body) that own their memory: made by
    a statement of the body into memory allocated while it was written, or by an update, a scatter or a loop
    that took over such an array, or a view of one that the view alone reads. Such an array that the body reads
    once is its reader's to write into."""

    def __init__(self, body: S.Body):
        self.once = {name for name, n in use_counts(body).items() if n == 1}
        self.owning = set()

    def consumable(self, name: str) -> bool:
        return name in self.owning and name in self.once

    def bound(self, stm: S.Stm, env: dict, allocated: list):
        """Notes the arrays that `stm` bound (env: their views) which own their memory; `allocated`: the
        memories allocated while it was written."""
        e = stm.exp
        consumed = {env[n].mem for n in free_in_exp(e) if self.consumable(n) and isinstance(env.get(n), View)}
        for p in stm.pat:
            view = env.get(p.name)
            if type(view) is not View:
                continue
            if view.mem in allocated or view.mem in consumed:
                self.owning.add(p.name)
