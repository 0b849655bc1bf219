"""Time tiling of stencil loops: several steps of a sequential loop over a map in one launch.

A loop at host level whose every step maps over the one array it carries, each element reading the
previous step's elements at most R places away,

    loop (x: [n]t) for step < steps do
      (scalar statements and slices, not reading x)
      map (\\i ... -> ... x[i + c] ... x[(i - c) % n] ...) (iota n) ... x ...

launches a kernel a step (Rodinia's pathfinder: 99 launches of a 100,096-element step, bound by the launches).
`tile_stencil_loops` rewrites it to take K steps a launch, as Rodinia's own pathfinder does (ghost zones):
the array, padded to blocks of B elements, is cut into tiles of W = B + 2KR elements (a block and the halo
its K steps depend on), each tile steps K times on its own, and keeps its middle B elements:

    loop (p: [nb*B]t, step0) while step0 < steps do
      let k_steps = min K (steps - step0)
      let tiles = map (\\b -> let tile = map (\\l -> p[(b*B - KR + l) % n]) (iota W)
                              let tile = loop tile for k < k_steps do
                                let step = step0 + k  (and the step's statements)
                                in map (\\l -> if (k+1)R <= l < W - (k+1)R then the element's step
                                               else tile[l]) (iota W)
                              in tile[KR:KR+B]) (iota nb)
      in (flatten tiles, step0 + k_steps)

Flattening then gives the map over blocks its versions; the one inside a workgroup keeps a tile in local
memory and runs its K steps between barriers. Every element a tile computes is one the loop computes, at
the same step, from the same inputs (a tile's valid part shrinks by R a step, and nothing outside it is
computed), so values and errors are the loop's: an element's reads of x keep their bounds checks, and
read the tile at the same offset. K (`FUN.stencil_steps_N`) and W (`FUN.stencil_width_N`) are tuning
parameters (`#[param]`'s class; the tuner's --tune-sizes tunes them), K = 1 being one step a launch as before.
"""

from __future__ import annotations

import dataclasses

from incflat.flatten.normalize import remove_dead_code
from incflat.ir import source as S
from incflat.ir.analysis import exp_atoms, free_in_exp, has_inner_soacs
from incflat.ir.rename import NameSource, all_names
from incflat.ir.runtime.tuning import stencil_param_name
from incflat.ir.traverse import map_nested, nested
from incflat.ir.types import BOOL, I64, Array, Scalar, array_of

MOST_RADIUS = 8  # reads further than this from an element's own position are not tiled
DEFAULT_WIDTH = 256  # a tile's elements, a workgroup's threads
STEPS_TIMES_RADIUS = 16  # K = 16 / R by default: the halo is an eighth of a 256-element tile
# what a step's statements outside the map may be: cheap scalar work and slices, repeated in every tile
_CHEAP = (S.AtomExp, S.BinOp, S.UnOp, S.PrimCall, S.Index, S.Assert)


def tile_stencil_loops(prog: S.Program) -> S.Program:
    names = NameSource(all_names(prog))
    funs, tiled = [], 0
    for fun in prog.funs:
        tiler = _Tiler(names, fun.name)
        funs.append(dataclasses.replace(fun, body=tiler.body(fun.body)))
        tiled += tiler.count
    prog = dataclasses.replace(prog, funs=tuple(funs))
    return remove_dead_code(prog) if tiled else prog  # the index arithmetic of the reads now of the tile


@dataclasses.dataclass(frozen=True)
class _Stencil:
    """A loop found to be a stencil: its parts, and how its map's body reads the array it carries."""
    carried: S.Var  # x: [n]t
    init: S.Atom  # x's value before the loop
    width: S.Atom  # n
    steps: S.Atom  # the loop's bound
    counter: S.Var
    step_stms: tuple  # the statements of a step before the map
    lam: S.Lambda
    inputs: tuple  # per lambda parameter: "center" (x), "index" (iota n) or the array read at the element
    offsets: dict  # each i64 of the map's body that is the element's position i plus c modulo n -> (c, in [0, n))
    radius: int


class _Tiler:
    def __init__(self, names: NameSource, fun: str):
        self.names, self.fun, self.count = names, fun, 0
        self.defs = {}  # name -> the expression that binds it, at host level

    def body(self, body: S.Body) -> S.Body:
        stms = []
        for stm in body.stms:
            for v in stm.pat:
                self.defs[v.name] = stm.exp
            stencil = _stencil(stm, self.defs) if isinstance(stm.exp, S.Loop) else None
            if stencil is None:  # only host-level code: not inside a SOAC's lambda
                e = stm.exp if isinstance(stm.exp, S.SOACS) else map_nested(stm.exp, self.body)
                stms.append(S.Stm(stm.pat, e, stm.loc))
            else:
                stms.extend(self.tiled(stm, stencil))
        return S.Body(tuple(stms), body.result)

    # ---- the rewrite ----

    def var(self, base: str, t) -> S.Var:
        return S.Var(self.names.fresh(base), t)

    def bind(self, out: list, base: str, e, t=I64, loc=None) -> S.Var:
        v = self.var(base, t)
        out.append(S.Stm((v,), e, loc))
        return v

    def binop(self, out: list, op: str, x, y, t=I64, base="tmp") -> S.Var:
        return self.bind(out, base, S.BinOp(op, x, y, t), t)

    def call(self, out: list, fn: str, *args) -> S.Var:
        return self.bind(out, "tmp", S.PrimCall(fn, tuple(args), I64))

    def tiled(self, stm: S.Stm, st: _Stencil) -> list:
        out, loc = [], stm.loc
        elem = st.carried.type.elem
        n, r = st.width, st.radius
        k = self.count
        self.count += 1
        steps_param = self.bind(out, "stencil_steps", S.TuningParam(
            stencil_param_name(self.fun, "steps", k), S.Const(max(1, STEPS_TIMES_RADIUS // r), I64)), loc=loc)
        width_param = self.bind(out, "stencil_width", S.TuningParam(
            stencil_param_name(self.fun, "width", k), S.Const(DEFAULT_WIDTH, I64)), loc=loc)
        # W >= 2R + 1 and 1 <= K <= (W - 1) / 2R: a block of B = W - 2KR >= 1 elements
        width = self.call(out, "i64.max", width_param, S.Const(2 * r + 1, I64))
        most_steps = self.binop(out, "/", self.binop(out, "-", width, S.Const(1, I64)), S.Const(2 * r, I64))
        tile_steps = self.call(out, "i64.max", S.Const(1, I64), self.call(out, "i64.min", steps_param, most_steps))
        halo = self.binop(out, "*", tile_steps, S.Const(r, I64), base="halo")
        block = self.binop(out, "-", width, self.binop(out, "*", halo, S.Const(2, I64)), base="block")
        blocks = self.binop(out, "/", self.binop(out, "-", self.binop(out, "+", n, block), S.Const(1, I64)), block,
                            base="blocks")
        padded_n = self.binop(out, "*", blocks, block, base="padded_n")
        padded_t = array_of(elem, (padded_n.name,))
        block_ends = self.binop(out, "+", halo, block)
        block_positions = self.bind(out, "blocks_i", S.Iota(blocks, I64), array_of(I64, (blocks.name,)))
        tile_positions = self.bind(out, "tile_i", S.Iota(width, I64), array_of(I64, (width.name,)))
        padded_positions = self.bind(out, "padded_i", S.Iota(padded_n, I64), array_of(I64, (padded_n.name,)))
        padded = self.bind(out, "padded", self.padding(st, padded_n, padded_positions), padded_t, loc)

        # the loop over launches: K steps each
        p = self.var("tiled", padded_t)
        step0 = self.var("step0", I64)
        cond_stms = []
        more = self.binop(cond_stms, "<", step0, st.steps, BOOL)
        launch = []
        rest = self.binop(launch, "-", st.steps, step0)
        k_steps = self.call(launch, "i64.min", tile_steps, rest)
        tile_t = array_of(elem, (width.name,))
        b = self.var("b", I64)
        in_block = []
        lo = self.binop(in_block, "-", self.binop(in_block, "*", b, block), halo, base="lo")
        l0 = self.var("l", I64)
        load = []
        g0 = self.binop(load, "%", self.binop(load, "+", lo, l0), n, base="g")
        first = self.bind(load, "elem", S.Index(p, (g0,)), elem)
        tile0 = self.bind(in_block, "tile", S.Map(width, S.Lambda((l0,), S.Body(tuple(load), (first,)), (elem,)),
                                                   (tile_positions,)), tile_t)
        tile = self.var("tile", tile_t)
        kk = self.var("k", I64)
        step_body = self.step(st, tile, kk, step0, lo, width, tile_positions)
        stepped = self.bind(in_block, "tile", S.Loop((), (tile,), (tile0,), S.ForLoop(kk, k_steps), step_body),
                            tile_t, loc)
        block_t = array_of(elem, (block.name,))
        kept = self.bind(in_block, "kept", S.Index(stepped, (S.DimSlice(halo, block_ends, S.Const(1, I64), block),)),
                         block_t)
        tiles_t = array_of(elem, (blocks.name, block.name))
        tiles = self.bind(launch, "tiles", S.Map(blocks, S.Lambda((b,), S.Body(tuple(in_block), (kept,)), (block_t,)),
                                                 (block_positions,)), tiles_t, loc)
        flat = self.bind(launch, "tiled", S.Reshape((padded_n,), tiles), padded_t)
        step1 = self.binop(launch, "+", step0, k_steps, base="step0")
        loop = S.Loop((), (p, step0), (padded, S.Const(0, I64)), S.WhileLoop(S.Body(tuple(cond_stms), (more,))),
                      S.Body(tuple(launch), (flat, step1)))
        final = self.var("tiled", padded_t)
        out.append(S.Stm((final, self.var("step0", I64)), loop, loc))
        whole = S.DimSlice(S.Const(0, I64), n, S.Const(1, I64), n)
        out.append(S.Stm(stm.pat, S.Index(final, (whole,)), loc))
        return out

    def padding(self, st: _Stencil, padded_n: S.Var, positions: S.Var) -> S.Map:
        """The loop's initial array padded to whole blocks (the padding is never read)."""
        elem = st.carried.type.elem
        j = self.var("j", I64)
        inside = []
        below = self.binop(inside, "<", j, st.width, BOOL)
        read = []
        x0 = self.bind(read, "elem", S.Index(st.init, (j,)), elem)
        pick = self.bind(inside, "elem", S.If(below, S.Body(tuple(read), (x0,)), S.Body((), (_zero(elem),)), (elem,)),
                         elem)
        return S.Map(padded_n, S.Lambda((j,), S.Body(tuple(inside), (pick,)), (elem,)), (positions,))

    def step(self, st: _Stencil, tile: S.Var, k: S.Var, step0: S.Var, lo: S.Var, width: S.Var,
             tile_positions: S.Var) -> S.Body:
        """One step of a tile: the loop's step statements, then the map over the tile's elements, computing
        those whose inputs are valid after k steps and keeping the others."""
        elem = st.carried.type.elem
        stms = [S.Stm((st.counter,), S.BinOp("+", step0, k, I64))]
        stms += st.step_stms
        valid_from = self.binop(stms, "*", self.binop(stms, "+", k, S.Const(1, I64)), S.Const(st.radius, I64))
        valid_to = self.binop(stms, "-", width, valid_from)
        l = self.var("l", I64)
        point = []
        after = self.binop(point, "<=", valid_from, l, BOOL)
        before = self.binop(point, "<", l, valid_to, BOOL)
        valid = self.binop(point, "&&", after, before, BOOL)
        compute = []
        g = self.binop(compute, "%", self.binop(compute, "+", lo, l), st.width, base="g")
        for param, source in zip(st.lam.params, st.inputs):
            if source == "center":
                compute.append(S.Stm((param,), S.Index(tile, (l,))))
            elif source == "index":
                compute.append(S.Stm((param,), S.AtomExp(g)))
            else:
                compute.append(S.Stm((param,), S.Index(source, (g,))))
        body = _TileReads(self, st, tile, l).body(st.lam.body)
        keep = []
        old = self.bind(keep, "elem", S.Index(tile, (l,)), elem)
        new = self.bind(point, "elem", S.If(valid, S.Body(tuple(compute) + body.stms, body.result),
                                            S.Body(tuple(keep), (old,)), (elem,)), elem)
        tile_t = tile.type
        stepped = self.bind(stms, "tile", S.Map(width, S.Lambda((l,), S.Body(tuple(point), (new,)), (elem,)),
                                                (tile_positions,)), tile_t)
        return S.Body(tuple(stms), (stepped,))


class _TileReads:
    """The map's body with each read of x, `x[j]` (j = i + c modulo n), turned into a read of the tile at
    l + c, after the read's own bounds check (an assertion, unless the read is unsafe or j is `... % n`)."""

    def __init__(self, tiler: _Tiler, st: _Stencil, tile: S.Var, l: S.Var):
        self.tiler, self.st, self.tile, self.l = tiler, st, tile, l

    def body(self, body: S.Body) -> S.Body:
        stms = []
        for stm in body.stms:
            e = stm.exp
            if isinstance(e, S.Index) and e.arr.name == self.st.carried.name:
                stms.extend(self.read(stm))
            else:
                stms.append(S.Stm(stm.pat, map_nested(e, self.body), stm.loc))
        return S.Body(tuple(stms), body.result)

    def read(self, stm: S.Stm) -> list:
        j, = stm.exp.idxs
        offset, in_range = self.st.offsets[j.name]
        out = []
        unsafe = stm.loc is not None and stm.loc.unsafe
        if not (in_range or unsafe):
            n = self.st.width
            low = self.tiler.binop(out, "<=", S.Const(0, I64), j, BOOL)
            high = self.tiler.binop(out, "<", j, n, BOOL)
            ok = self.tiler.binop(out, "&&", low, high, BOOL)
            out.append(S.Stm((), S.Assert(ok, "Index [{0}] out of bounds for array of shape [{1}].", (j, n)),
                             stm.loc))
        at = self.tiler.binop(out, "+", self.l, S.Const(offset, I64)) if offset else self.l
        # (in the tile: an element's step runs only where its neighbours up to R away are valid)
        loc = dataclasses.replace(stm.loc, unsafe=True) if stm.loc is not None else None
        out.append(S.Stm(stm.pat, S.Index(self.tile, (at,)), loc))
        return out


# ---- recognising a stencil loop ----

def _stencil(stm: S.Stm, defs: dict) -> _Stencil | None:
    e = stm.exp
    if not (isinstance(e.form, S.ForLoop) and len(e.params) == 1 and not e.size_params
            and e.form.bound.type == I64):
        return None
    x = e.params[0]
    if not (isinstance(x.type, Array) and x.type.rank == 1 and isinstance(x.type.elem, Scalar)):
        return None
    if not e.body.stms or e.body.stms[-1].pat != tuple(v for v in e.body.result if isinstance(v, S.Var)):
        return None
    *step_stms, last = e.body.stms
    m = last.exp
    if not (isinstance(m, S.Map) and len(last.pat) == 1 and S.dim_of(m.width) == x.type.shape[0]
            and m.lam.ret == (x.type.elem,)):
        return None
    if any(not isinstance(s.exp, _CHEAP) or x.name in free_in_exp(s.exp) for s in step_stms):
        return None
    if has_inner_soacs(m.lam.body):
        return None
    inputs, offsets = [], {}
    for arr, param in zip(m.arrs, m.lam.params):
        if arr.name == x.name:
            inputs.append("center")
        elif _is_positions(defs.get(arr.name), m.width):
            inputs.append("index")
            offsets[param.name] = (0, True)
        else:
            inputs.append(arr)
    reads = {}
    if not _collect_reads(m.lam.body, x.name, m.width, offsets, reads):
        return None
    if not reads:
        return None
    radius = max(abs(c) for c in reads.values())
    if not 1 <= radius <= MOST_RADIUS:
        return None
    return _Stencil(x, e.init[0], m.width, e.form.bound, e.form.i, tuple(step_stms), m.lam, tuple(inputs), offsets,
                    radius)


def _is_positions(e, width) -> bool:
    """Whether e is `iota width` (the positions 0 .. width-1)."""
    return isinstance(e, S.Iota) and e.elem == I64 and e.n == width


def _collect_reads(body: S.Body, x: str, n, offsets: dict, reads: dict) -> bool:
    """Fills `offsets` (a name -> (c, known in [0, n)) for each i64 that is the element's position plus c,
    modulo n) and `reads` (each read of x -> its offset); False where x is used otherwise, or read at an
    index of unknown offset."""
    for stm in body.stms:
        e = stm.exp
        if isinstance(e, S.Index) and e.arr.name == x:
            if len(e.idxs) != 1 or not isinstance(e.idxs[0], S.Var) or e.idxs[0].name not in offsets:
                return False
            reads[stm.pat[0].name] = offsets[e.idxs[0].name][0]
            continue
        if x in {a.name for a in exp_atoms(e) if isinstance(a, S.Var)}:
            return False
        if len(stm.pat) == 1:
            form = _offset_form(e, offsets, n)
            if form is not None:
                offsets[stm.pat[0].name] = form
        for inner in nested(e):
            if not _collect_reads(inner.body, x, n, offsets, reads):
                return False
    return True


def _offset_form(e, offsets: dict, n):
    """(c, in range) where e is the position plus c modulo n, from positions plus constants."""
    def known(a):
        return offsets.get(a.name) if isinstance(a, S.Var) else None
    if isinstance(e, S.AtomExp):
        return known(e.x)
    if not (isinstance(e, S.BinOp) and e.type == I64):
        return None
    if e.op == "+" and isinstance(e.y, S.Const) and known(e.x) is not None:
        return known(e.x)[0] + e.y.value, False
    if e.op == "+" and isinstance(e.x, S.Const) and known(e.y) is not None:
        return known(e.y)[0] + e.x.value, False
    if e.op == "-" and isinstance(e.y, S.Const) and known(e.x) is not None:
        return known(e.x)[0] - e.y.value, False
    if e.op in ("%", "%%") and e.y == n and known(e.x) is not None:
        return known(e.x)[0], e.op == "%"  # n > 0 wherever a tile is computed
    return None


def _zero(t: Scalar) -> S.Const:
    return S.Const(False if t == BOOL else 0.0 if t.name.startswith("f") else 0, t)
