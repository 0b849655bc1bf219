"""Scalars that kernels compute from other kernels' scalar results stay on the device.

A segop's scalar result (a reduction's total, say) is left in device memory. Reading it back makes the host
wait for every kernel launched so far: the host no longer runs ahead of the device, and on a GPU each wait
costs tens of microseconds besides. SRAD read two totals back in each of its iterations only to compute the
scalar that the iteration's next kernels read. Like Futhark's ReduceDeviceSyncs, the `sink_scalars` stage
moves host scalar statements (arithmetic, primitive functions, copies) that read kernels' scalar results, and
whose values only kernels read, into the kernels that read them: each thread computes them from values every
thread reads at the same address, a few operations. A kernel takes a scalar left on the device as its buffer
(`codegen.kernel.DeviceScalarParam`), and the host reads one back only where host code uses it: a size, a
guard's parallelism, a branch's or a loop's condition, a host operation, a result.
"""

import dataclasses

from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import exp_atoms, free_in_body, type_size_names
from incflat.ir.rename import NameSource, Renamer, all_names
from incflat.ir.traverse import map_bodies, map_nested, nested, walk_exps
from incflat.ir.types import Array

# Host statements that a kernel can compute as well: scalar arithmetic, primitive functions, copies.
SINKABLE = (S.BinOp, S.UnOp, S.PrimCall, S.AtomExp)
# The expressions whose bodies are host code too.
HOST_CONTROL = (S.If, S.Loop, T.Guard)


def resident_scalars(body: S.Body, read_by_host=None) -> set:
    """The scalars of an entry point's host code that are rank-0 arrays in device memory: the segops' scalar
    results, and the results of branches (and copies) that are such a scalar on every path, unless the host
    reads them (`read_by_host`, by default host_uses but for what is only passed on: they are then read back
    once, where the paths join)."""
    host = host_uses(body, passed=False) if read_by_host is None else read_by_host
    found = set()
    for stm in host_statements(body):
        e = stm.exp
        if isinstance(e, T.SEGOPS):
            found.update(p.name for p in stm.pat if not isinstance(p.type, Array))
            continue
        if isinstance(e, (S.If, T.Guard)):
            sources = zip(stm.pat, zip(e.then.result, e.else_.result))
        elif isinstance(e, S.AtomExp):
            sources = ((stm.pat[0], (e.x,)),)
        else:
            continue
        found.update(p.name for p, atoms in sources if p.name not in host and not isinstance(p.type, Array)
                     and all(isinstance(a, S.Var) and a.name in found for a in atoms))
    return found


def host_uses(body: S.Body, skip=frozenset(), passed=True) -> set:
    """The names an entry point's host code reads (but not the reads of the host statements named in
    `skip`, nor, unless `passed`, the values it only passes on: branches' and loop bodies' results, the entry
    point's): everything but what only kernel bodies read. A size that a type inside a kernel names counts
    (the host allocates by it), as do a workgroup-level segop's widths (the host sizes the workgroup by
    them) and whatever a reduction's or a scan's operator reads."""
    used = set()

    def var_names(atoms):
        used.update(a.name for a in atoms if isinstance(a, S.Var))

    for stm in host_statements(body):
        e = stm.exp
        if isinstance(e, SINKABLE) and stm.pat[0].name in skip:
            continue
        var_names(exp_atoms(e))
        if isinstance(e, HOST_CONTROL):
            if passed:
                var_names(r for inner in nested(e) for r in inner.body.result)
        elif isinstance(e, T.SEGOPS):
            for inner in nested(e)[1:]:  # the operator
                used.update(free_in_body(inner.body))
            for inner in walk_exps(e.body):
                if isinstance(inner, T.SEGOPS):
                    var_names(binding.width for binding in inner.ctx)
        else:  # a filter's or a histogram's operator, which the host's own code runs a kernel of
            for inner in nested(e):
                used.update(free_in_body(inner.body))
    if passed:
        var_names(body.result)
    used.update(_size_names(body))
    return used


def _size_names(body: S.Body) -> set:
    """Every name that a type in the body names as a size."""
    sizes = set()
    for stm in body.stms:
        for p in stm.pat:
            sizes |= type_size_names(p.type)
        for a in exp_atoms(stm.exp):
            sizes |= type_size_names(a.type)
        for inner in nested(stm.exp):
            for t in tuple(p.type for p in inner.binds) + tuple(inner.ret):
                sizes |= type_size_names(t)
            sizes |= _size_names(inner.body)
    return sizes


def sink_scalars(prog: T.Program) -> T.Program:
    """The sink_scalars stage (target IR to target IR)."""
    names = NameSource(all_names(prog))
    return map_bodies(prog, lambda body: _sink(body, names))


def _sink(body: S.Body, names: NameSource) -> S.Body:
    moved = _movable(body)
    if not moved:
        return body

    def host_body(b: S.Body) -> S.Body:
        stms = []
        for stm in b.stms:
            if isinstance(stm.exp, SINKABLE) and stm.pat[0].name in moved:
                continue
            e = stm.exp
            if isinstance(e, T.SEGOPS):
                e = _with_own_scalars(e, moved, names)
            elif isinstance(e, HOST_CONTROL):
                e = map_nested(e, host_body)
            stms.append(S.Stm(stm.pat, e, stm.loc))
        return S.Body(tuple(stms), b.result)
    return host_body(body)


def _movable(body: S.Body) -> dict:
    """The host scalar statements to move into kernels, name -> statement, in program order: those that read
    a kernel's scalar result (or such a statement's value), and whose values nothing but kernels and other
    such statements read."""
    on_device = resident_scalars(body, read_by_host=frozenset())
    candidates, readers = {}, {}  # name -> statement; name -> the candidates that read it
    for stm in host_statements(body):
        e = stm.exp
        if isinstance(e, SINKABLE) and len(stm.pat) == 1 and not isinstance(stm.pat[0].type, Array):
            operands = {a.name for a in exp_atoms(e) if isinstance(a, S.Var)}
            if operands & (on_device | set(candidates)) and stm.pat[0].name not in on_device:
                candidates[stm.pat[0].name] = stm
                for n in operands:
                    readers.setdefault(n, set()).add(stm.pat[0].name)
    host = host_uses(body, skip=set(candidates))
    moved = dict(candidates)
    changed = True
    while changed:  # a candidate that a kept one reads is kept too
        changed = False
        for name in list(moved):
            if name in host or readers.get(name, set()) - set(moved):
                del moved[name]
                changed = True
    return moved


def host_statements(body: S.Body):
    """The host statements of a target body, those of the branches and loops in it (host code too) before the
    branch's or the loop's own."""
    for stm in body.stms:
        if isinstance(stm.exp, HOST_CONTROL):
            for inner in nested(stm.exp):
                yield from host_statements(inner.body)
        yield stm


def _with_own_scalars(op, moved: dict, names: NameSource):
    """The segop with its own copies of the moved statements its body reads (and of those they read), at the
    start of its per-point body, under fresh names."""
    needed = set()
    pending = [n for n in free_in_body(op.body) if n in moved]
    while pending:
        n = pending.pop()
        if n not in needed:
            needed.add(n)
            pending += [a.name for a in exp_atoms(moved[n].exp) if isinstance(a, S.Var) and a.name in moved]
    if not needed:
        return op
    renamer = Renamer(names, {})
    own = [renamer.stm(moved[n]) for n in moved if n in needed]  # program order: operands first
    body = renamer.body(op.body)
    return dataclasses.replace(op, body=S.Body(tuple(own) + body.stms, body.result))
