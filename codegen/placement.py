"""Which kernel results are made where an in-place update then writes them: Futhark's memory short-circuiting.

`let mat[s + 1:, s + 1:] = inner` (LUD's inner blocks, a step) copies the kernel's result into the array it
updates. Where the update writes in place (a loop's state, codegen.in_place), the kernel may write its result
straight into that region instead, and the update has nothing to copy. The kernel must not read what it
overwrites: each of its threads reads the updated array only at the point it writes (a map over the region,
element by element), or not at all, and nothing between the kernel and the update reads the region. This
module decides that much from the code; the rest only the run knows, and the runtime's `empty_in_region`
checks it (the region's layout, and that the views the kernel reads are the region itself or lie elsewhere),
allocating anew where it cannot tell. `update` and `update_many` copy nothing where the value already lies at
its target.
"""

from dataclasses import dataclass

from incflat.codegen import coalescing, tiling
from incflat.codegen.host_bodies import scalar_statement
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import free_in_body, free_in_exp
from incflat.ir.types import Array, Scalar


@dataclass(frozen=True)
class Placement:
    """A segmap result to make in `root[idxs]`, the region an in-place update writes it into."""
    root: S.Var  # the array the chain of in-place updates starts from
    idxs: tuple  # the update's indices (atoms and DimSlices)
    others: tuple  # the indices of the chain's other updates: their regions must not meet this one
    same: tuple  # arrays the kernel reads at the very points it writes: the region itself, or another buffer
    apart: tuple  # arrays read while the result is in the region: in another buffer, or elsewhere in root's
    points: int  # the dimensions of the kernel's context, which it writes through each point's indices


def placements(body: S.Body, uses: dict, in_place: set) -> dict:
    """The segmap results of a body's statements (at any depth of their guards) that in-place updates of
    the body write into an array: result name -> Placement."""
    binder = {p.name: t for t, stm in enumerate(body.stms) for p in stm.pat}
    found = {}
    for t, stm in enumerate(body.stms):
        e = stm.exp
        if not (isinstance(e, S.Update) and stm.pat[0].name in in_place and isinstance(e.value, S.Var)
                and isinstance(e.value.type, Array) and uses.get(e.value.name) == 1 and e.value.name in binder):
            continue
        made = binder[e.value.name]
        chain = _chain(body, binder, t, made, in_place)
        if chain is None:
            continue
        root, links = chain
        if not all(_bound_before(a, binder, made) for link in links for a in _index_atoms(link.exp.idxs)):
            continue
        between = _reads_between(body, binder, made, t, {id(link) for link in links})
        if between is None:
            continue
        producer = body.stms[made]
        k = [p.name for p in producer.pat].index(e.value.name)
        for name, same, reads, points in _leaves(producer, k):
            found[name] = Placement(root, e.idxs, tuple(link.exp.idxs for link in links if link is not stm),
                                    tuple(sorted(same)), tuple(sorted((set(reads) | between) - same)), points)
    return found


def _chain(body: S.Body, binder: dict, t: int, made: int, in_place: set):
    """The in-place updates of one array that the update at t belongs to (codegen.host.chained writes them
    as one), and the array they start from, which must exist before the value is made (position `made`);
    None where it does not."""
    links, current = [body.stms[t]], body.stms[t].exp.arr
    while current.name in binder and binder[current.name] > made:
        before = body.stms[binder[current.name]]
        if not (isinstance(before.exp, S.Update) and before.pat[0].name in in_place):
            return None
        links.insert(0, before)
        current = before.exp.arr
    following = body.stms[t].pat[0].name
    for later in body.stms[t + 1:]:
        if isinstance(later.exp, S.Update) and later.exp.arr.name == following and later.pat[0].name in in_place:
            links.append(later)
            following = later.pat[0].name
    return current, links


def _index_atoms(idxs) -> list:
    return [a for i in idxs for a in ((i.start, i.end, i.stride, i.size) if isinstance(i, S.DimSlice) else (i,))]


def _bound_before(a, binder: dict, position: int) -> bool:
    return not isinstance(a, S.Var) or binder.get(a.name, -1) < position


def _reads_between(body: S.Body, binder: dict, made: int, t: int, links: set):
    """The arrays that the statements between the value's and the update's read (besides the chain's
    updates), all made before the value; None where one reads an array made after it."""
    reads = set()
    for stm in body.stms[made + 1:t]:
        if id(stm) in links:
            continue
        for name, v in free_in_exp(stm.exp).items():
            if isinstance(v.type, Array):
                if not _bound_before(v, binder, made):
                    return None
                reads.add(name)
    return reads


def _leaves(stm: S.Stm, k: int):
    """The segmaps that make result k of stm, through its guards' versions: (their result's name, the arrays
    their kernel reads pointwise, every array it reads, the dimensions of its context). A version whose result
    something else makes, or that runs anything but scalar statements after making it, has none."""
    e = stm.exp
    if isinstance(e, T.Guard):
        for body in (e.then, e.else_):
            r = body.result[k]
            t = next((t for t, s in enumerate(body.stms) if isinstance(r, S.Var)
                      and any(p.name == r.name for p in s.pat)), None)
            if t is not None and all(scalar_statement(s) for s in body.stms[t + 1:]):
                inner = body.stms[t]
                yield from _leaves(inner, [p.name for p in inner.pat].index(r.name))
    elif (isinstance(e, T.SegMap) and e.level == 1 and tiling.tile_plan(e) is None
          and not coalescing.interleaved_results(e)[k]):
        # (a tiled kernel's threads past the edge read their neighbours' points, which may be written)
        reads = {n for n, v in free_in_exp(e).items() if isinstance(v.type, Array)}
        yield stm.pat[k].name, {a for a in reads if _pointwise(e.ctx, e.body, a)}, reads, len(e.ctx)


def _pointwise(ctx: tuple, body: S.Body, array: str, rows_allowed: bool = True) -> bool:
    """Whether each point of a segop's context reads `array` only at that point: the array is bound level by
    level down to its innermost parameters, which are scalars, or (an intra-group version, `rows_allowed`)
    rows that one workgroup-level segmap, the body's last and the one making its results, reads pointwise in
    turn, down to scalars."""
    names, seen, between = {array}, {array}, set()
    for level, b in enumerate(ctx):
        bound = {p.name for p, a in zip(b.params, b.arrs) if isinstance(a, S.Var) and a.name in names}
        if any(isinstance(a, S.Var) and a.name in seen - names for a in b.arrs):
            return False  # a row of an outer level bound again deeper: other points' elements
        if level < len(ctx) - 1:
            between |= bound
        names = bound
        seen |= bound
    free = free_in_body(body)
    if array in free or between & set(free):
        return False
    params = {p.name: p for b in ctx for p in b.params}
    rows = [n for n in names if not isinstance(params[n].type, Scalar)]
    if not rows:
        return True
    if not rows_allowed:
        return False
    users = [t for t, s in enumerate(body.stms) if set(rows) & set(free_in_exp(s.exp))]
    if len(users) != 1:
        return False
    stm = body.stms[users[0]]
    made = {p.name for p in stm.pat}
    return (isinstance(stm.exp, T.SegMap) and stm.exp.level == 0
            and all(scalar_statement(s) for s in body.stms[users[0] + 1:])
            and all(isinstance(r, S.Var) and r.name in made for r in body.result if isinstance(r.type, Array))
            and all(_pointwise(stm.exp.ctx, stm.exp.body, row, rows_allowed=False) for row in rows))
