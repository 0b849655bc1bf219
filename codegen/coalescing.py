"""Memory layouts for thread-level segmaps whose threads walk whole rows (Futhark's "babysitting").

In a segmap at the thread level, thread t of the context works sequentially on its own rows: a row of an
input array, and the rows of its array results. Stored row-major, neighbouring threads touch addresses a
whole row apart at every step. Laid out interleaved instead (the context's dimensions innermost: element
r of thread t at r * threads + t), the threads of a warp touch neighbouring addresses at each step, which
the memory system serves in one transaction. Results of such segmaps are allocated interleaved; inputs that
a thread walks through more than once are given to the kernel interleaved (the runtime's `coalesced`
transposes them, unless they already are: the result of the previous step of a loop usually is). Every kernel
reads arrays through their strides, so a layout changes no result, only speed.
"""

from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import free_in_exp
from incflat.ir.types import Array


def interleaved_results(op: T.SegMap) -> tuple[bool, ...]:
    """For each result, whether to allocate it interleaved: an array per thread, written by the thread."""
    if not T.walks_rows(op):
        return tuple(False for _ in op.types)
    return tuple(isinstance(t, Array) and t.rank > len(op.ctx) for t in op.types)


def coalesced_inputs(op: T.SegMap) -> dict[str, int]:
    """The host arrays to pass interleaved: name -> the number of context dimensions to put innermost. An
    array qualifies when the context indexes it at every level, outermost first, and the row each thread
    gets is traversed by the body (used other than by indexing single elements)."""
    if not T.walks_rows(op):
        return {}
    rows = T.whole_rows(op.ctx)
    return {rows[p.name].name: len(op.ctx) for p in op.ctx[-1].params
            if isinstance(p.type, Array) and p.name in rows and traversals(op.body, p.name) >= 2}


def traversals(body: S.Body, name: str) -> int:
    """How many times, at least, the body walks through the array `name`: each statement that uses it other
    than by reading single elements counts once, a loop twice. The transposing copy costs a pass over the
    array, so a row walked once is better read where it lies (the cache serves a thread's next elements);
    a thread's rows written, on the other hand, are always interleaved (interleaved_results)."""
    count = 0
    for stm in body.stms:
        e = stm.exp
        if isinstance(e, S.Index) and e.arr.name == name:
            if any(isinstance(i, S.DimSlice) for i in e.idxs) or len(e.idxs) < e.arr.type.rank:
                count += 2  # a slice or a row that goes on: where it goes is not followed
        elif isinstance(e, S.If):
            count += max(traversals(e.then, name), traversals(e.else_, name))
        elif name in free_in_exp(e):
            count += 2 if isinstance(e, S.Loop) else 1
    return count + sum(isinstance(a, S.Var) and a.name == name for a in body.result)
