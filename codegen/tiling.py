"""Block tiling in local memory for a level-1 segmap whose body folds rows that each vary with only one
of the two innermost map dimensions: matmul's V3, `map (\\xs -> map (\\ys -> dotprod xs ys) yss') xss`.

A workgroup of tile x tile threads computes a tile x tile block of the result. In steps of `tile`
elements along the fold, it loads the block's rows of each such array into local memory once, coalesced
(along the fold when its elements are adjacent, across the rows otherwise: a transposed array), and
each thread folds from local memory. Every row is then read from global memory by one workgroup a block
instead of by each of the block's threads. The tile size is a tuning parameter (`tile_size`).

Threads past the edge of the result take the nearest row and column, so that the whole workgroup runs
the body and reaches every barrier; they write nothing.
"""

from dataclasses import dataclass

from incflat.codegen.cscalar import CTYPES
from incflat.codegen.kernel import INDEX, Kernel, LocalParam, View
from incflat.codegen.opencl import KernelWriter
from incflat.ir.runtime.prims import CTYPE_SIZES
from incflat.codegen.segops import kernel_inputs
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import free_in_exp
from incflat.ir.types import Array, Scalar


@dataclass(frozen=True)
class TilePlan:
    """The redomaps of the body that are tiled, by position: for each of its arrays, "y" (a row bound by
    the outer of the two dimensions), "x" (by the inner), or None (read as it is)."""
    folds: dict


def tile_plan(op: T.SegMap):
    """How to tile op, or None when its shape does not allow it: at least two map dimensions, scalar
    results, and redomaps at the top of the body (all threads reach them) whose width the whole grid
    shares and which fold a row bound by one of the two innermost dimensions."""
    if op.level != 1 or len(op.ctx) < 2 or any(isinstance(t, Array) for t in op.types[len(op.ctx):]):
        return None
    if T.level0_segops(op.body):
        return None
    outer_bound = {p.name for b in op.ctx[:-2] for p in b.params}
    y, x = op.ctx[-2], op.ctx[-1]
    y_params, x_params = {p.name for p in y.params}, {p.name for p in x.params}
    if any(a.name in y_params for a in x.arrs):  # the columns must not depend on the row
        return None
    shared = set(free_in_exp(op)) | outer_bound
    folds = {}
    for i, stm in enumerate(op.body.stms):
        e = stm.exp
        if (not isinstance(e, S.Redomap) or any(isinstance(a.type, Array) for a in e.neutral)
                or (isinstance(e.width, S.Var) and e.width.name not in shared)):
            continue
        sides = tuple("y" if a.name in y_params and is_row(a) else "x" if a.name in x_params and is_row(a)
                      else None for a in e.arrs)
        if any(sides):
            folds[i] = sides
    return TilePlan(folds) if folds else None


def is_row(a: S.Var) -> bool:
    return isinstance(a.type, Array) and a.type.rank == 1 and isinstance(a.type.elem, Scalar)


def tiled_segmap_kernel(name: str, op: T.SegMap, plan: TilePlan, errors: list,
                        computed: dict | None = None) -> Kernel:
    w = KernelWriter(name, errors)
    kernel_inputs(w, op, computed)
    outs = [w.output_param(i, t) for i, t in enumerate(op.types)]
    tile = w.index_param("tile")
    tiles = {}  # a block of rows in local memory for each array that some tiled redomap folds
    for i, sides in plan.folds.items():
        for a, side in zip(op.body.stms[i].exp.arrs, sides):
            if side and a.name not in tiles:
                tiles[a.name] = w.fresh("tile")
                ctype = CTYPES[a.type.elem.name]
                w.k.params.append(LocalParam(tiles[a.name], ctype, CTYPE_SIZES[ctype], tile=True))
    y, x = op.ctx[-2], op.ctx[-1]
    height, width = w.declare(INDEX, w.atom(y.width), "height"), w.declare(INDEX, w.atom(x.width), "width")
    lid = w.declare(INDEX, "get_local_id(0)", "lid")
    ly, lx = w.declare(INDEX, f"{lid} / {tile}", "ly"), w.declare(INDEX, f"{lid} % {tile}", "lx")
    across = w.declare(INDEX, f"({width} + {tile} - 1) / {tile}", "blocks_x")
    per_outer = w.declare(INDEX, f"{across} * (({height} + {tile} - 1) / {tile})", "blocks")
    gid = w.declare(INDEX, "get_group_id(0)", "gid")
    rest = w.declare(INDEX, f"{gid} % {per_outer}", "rest")
    row0 = w.declare(INDEX, f"({rest} / {across}) * {tile}", "row0")
    col0 = w.declare(INDEX, f"({rest} % {across}) * {tile}", "col0")
    gy, gx = w.declare(INDEX, f"{row0} + {ly}", "gy"), w.declare(INDEX, f"{col0} + {lx}", "gx")
    outer = w.bind_ctx(op.ctx[:-2], f"{gid} / {per_outer}") if len(op.ctx) > 2 else []
    w.bind_elems(y.params, y.arrs, f"min({gy}, {height} - 1)")
    w.bind_elems(x.params, x.arrs, f"min({gx}, {width} - 1)")
    sources = {p.name: (w.env[a.name], first, count)  # a tiled row's array of rows, where the block starts
               for b, first, count in ((y, row0, height), (x, col0, width))
               for p, a in zip(b.params, b.arrs) if p.name in tiles}

    for i, stm in enumerate(op.body.stms):
        if i not in plan.folds:
            w.stm(stm, (None,) * len(stm.pat), False)
            continue
        e = stm.exp
        own = {a.name: ly if side == "y" else lx for a, side in zip(e.arrs, plan.folds[i]) if side}
        accs = [w.declare(CTYPES[a.type.name], w.atom(a), "acc") for a in e.neutral]
        m = w.declare(INDEX, w.atom(e.width), "m")
        kk = w.fresh("kk")
        with w.block(f"for ({INDEX} {kk} = 0; {kk} < {m}; {kk} += {tile})"):
            for name in dict.fromkeys(own):
                load_tile(w, tiles[name], *sources[name], kk, m, tile, ly, lx)
            w.emit("barrier(CLK_LOCAL_MEM_FENCE);")
            k = w.fresh("k")
            with w.block(f"for ({INDEX} {k} = 0; {k} < min({tile}, {m} - {kk}); {k}++)"):
                for p, a in zip(e.map_lam.params, e.arrs):
                    value = (f"{tiles[a.name]}[{own[a.name]} * ({tile} + 1) + {k}]" if a.name in own
                             else w.env[a.name].elem([f"{kk} + {k}"]))
                    w.env[p.name] = w.declare(CTYPES[p.type.name], value, p.name)
                w.fold(e, accs, w.body(e.map_lam.body))
            w.emit("barrier(CLK_LOCAL_MEM_FENCE);")
        for p, acc in zip(stm.pat, accs):
            w.env[p.name] = acc
    with w.block(f"if ({gy} < {height} && {gx} < {width})"):
        for o, r in zip(outs, op.body.result):
            w.emit(f"{o.elem(list(outer) + [gy, gx])} = {w.atom(r)};")
    return w.k


def load_tile(w: KernelWriter, mem: str, rows: View, first: str, count: str, kk: str, m: str, tile: str,
              ly: str, lx: str):
    """Rows first..first+tile-1 of `rows` (count of them), elements kk..kk+tile-1, into mem
    (tile x (tile + 1): a padding column, so that reading a column conflicts on no bank). Adjacent
    threads take adjacent elements: along the row when its elements are adjacent, else across rows."""
    def load(r, c):
        element = rows.elem([f"min({first} + {r}, {count} - 1)", f"min({kk} + {c}, {m} - 1)"])
        w.emit(f"{mem}[{r} * ({tile} + 1) + {c}] = {element};")
    if rows.strides[1] == "1":
        return load(ly, lx)
    w.if_else(f"({rows.strides[1]}) == 1", lambda: load(ly, lx), lambda: load(lx, ly))
