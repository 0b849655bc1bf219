"""Normalisation before flattening: inlining, hoisting of invariant statements out of lambdas,
fusion of a map into the reduce or scan that consumes it (redomap / scanomap), and dead-code removal.

Each pass is a pure function from program to program, and a stage of the pipeline (incflat.pipeline lists
them, in order); the result is valid source IR, so the reference interpreter can run it.
"""

import dataclasses

from incflat.ir import source as S
from incflat.ir.analysis import free_in_body, free_in_exp, has_assertions, has_inner_soacs, type_size_names, use_counts
from incflat.ir.rename import NameSource, Renamer, all_names
from incflat.ir.traverse import map_bodies, map_nested, unsafe_body
from incflat.ir.types import BOOL, I64, Array, Scalar, array_of, shape_of


# ---- inlining ----

def inline_calls(prog: S.Program) -> S.Program:
    """Replaces every call of a user-defined function by its body (functions are non-recursive). Only the entry
    points remain: the other functions are not called any more. Each call is expanded once, in the body it
    is inlined into, so the work is linear in the size of the result."""
    names = NameSource(all_names(prog))
    funs = {f.name: f for f in prog.funs}
    entries = tuple(dataclasses.replace(f, body=_inline_body(f.body, funs, names)) for f in prog.funs if f.entry)
    return dataclasses.replace(prog, funs=entries)


def _inline_body(body: S.Body, funs: dict, names: NameSource) -> S.Body:
    stms = []
    pending = list(reversed(body.stms))  # a stack: a call's inlined statements go back on it (chains are long)
    while pending:
        stm = pending.pop()
        if isinstance(stm.exp, S.Apply):
            e = stm.exp
            callee = funs[e.fn]
            subst = {p.name: a for p, a in zip(callee.params, e.args)}
            for p, a in zip(callee.params, e.args):  # size parameters from the arguments' shapes
                for d_callee, d_arg in zip(getattr(p.type, "shape", ()), getattr(a.type, "shape", ())):
                    if isinstance(d_callee, str) and d_callee in callee.size_params:
                        subst[d_callee] = _dim_atom(d_arg)
            inlined = Renamer(names, subst).body(callee.body)
            if stm.loc is not None and stm.loc.unsafe:  # as Futhark: a call inside #[unsafe] is inlined unsafe
                inlined = unsafe_body(inlined)
            results = [S.Stm((p,), S.AtomExp(r), stm.loc) for p, r in zip(stm.pat, inlined.result)]
            pending.extend(reversed(results))
            pending.extend(reversed(inlined.stms))
        else:
            stms.append(S.Stm(stm.pat, map_nested(stm.exp, lambda b: _inline_body(b, funs, names)), stm.loc))
    return S.Body(tuple(stms), body.result)


def _dim_atom(d):
    return S.Const(d, I64) if isinstance(d, int) else S.Var(d, I64)


# ---- hoisting ----

def hoist_invariants(prog: S.Program) -> S.Program:
    """Moves statements of a map lambda that do not depend on its parameters out of the map, so that
    invariant work (a transpose, say) runs once, and the lambda body is a perfect nest where possible; and
    statements of a loop's body that depend on nothing the loop changes out of the loop (an `iota` a map of
    each iteration walks is made once, not in every iteration). A map or a loop may run no iteration, where
    an iota or a replicate of a negative size does not fail: moved out, its size is checked only if the map or
    the loop runs (S.Replicate's `checked`)."""
    names = NameSource(all_names(prog))
    return map_bodies(prog, lambda body: _hoist_body(body, names, frozenset()))


def _sizes_of(params) -> frozenset:
    return frozenset().union(*(type_size_names(p.type) for p in params))


def _hoist_body(body: S.Body, names: NameSource, sizes: frozenset) -> S.Body:
    """sizes: size names known to be at least 0 here (dimensions of the enclosing maps' parameters)."""
    stms = []
    for stm in body.stms:
        inner = sizes | _sizes_of(stm.exp.lam.params) if isinstance(stm.exp, S.Map) else sizes
        e = map_nested(stm.exp, lambda b: _hoist_body(b, names, inner))
        if isinstance(e, S.Map):
            hoisted, lam_body = _split_invariant(e.lam.body, {p.name for p in e.lam.params}, _count_runs(e.width),
                                                 names, inner)
            stms.extend(hoisted)
            e = dataclasses.replace(e, lam=dataclasses.replace(e.lam, body=lam_body))
        elif isinstance(e, S.Loop):
            variant = {p.name for p in e.params} | set(e.size_params)
            if isinstance(e.form, S.ForLoop):
                variant.add(e.form.i.name)
                runs = _count_runs(e.form.bound)
            else:
                runs = _while_runs(e)
            hoisted, loop_body = _split_invariant(e.body, variant, runs, names, sizes)
            stms.extend(hoisted)
            e = dataclasses.replace(e, body=loop_body)
        stms.append(S.Stm(stm.pat, e, stm.loc))
    return S.Body(tuple(stms), body.result)


# `runs(names, loc)`: (statements, atom) that tell whether a map's or a loop's body runs at all, the atom None
# where it surely does; placed before the map or the loop, with the statements moved out of its body.

def _count_runs(count):
    """A map's or a for loop's: whether its count is above 0."""
    def runs(names: NameSource, loc):
        if isinstance(count, S.Const):
            return (), None if count.value > 0 else S.Const(False, BOOL)
        v = S.Var(names.fresh("runs"), BOOL)
        return (S.Stm((v,), S.BinOp(">", count, S.Const(0, count.type), BOOL), loc),), v
    return runs


def _while_runs(loop: S.Loop):
    """A while loop's: its condition on the initial values, computed once more before it (the loop computes it
    first thing); None (unknown) where the condition is more than scalar arithmetic or reads a size of the
    loop's parameters."""
    cond = loop.form.cond
    if not all(isinstance(s.exp, (S.AtomExp, S.BinOp, S.UnOp, S.PrimCall)) for s in cond.stms) \
            or set(free_in_body(cond)) & set(loop.size_params):
        return None

    def runs(names: NameSource, loc):
        first = Renamer(names, {p.name: a for p, a in zip(loop.params, loop.init)}).body(cond)
        return first.stms, first.result[0]
    return runs


def _split_invariant(body: S.Body, variant: set, runs, names: NameSource, sizes: frozenset):
    """`runs`: how to tell whether the body runs at all (see _count_runs), None where nothing can; `sizes`:
    size names known to be at least 0 (see _hoist_body)."""
    variant = set(variant)
    out, keep = [], []
    ran = []  # [the atom telling whether the body runs], once a size check moved out needs it
    guarded = False  # after an assertion, only what cannot fail is hoisted: it guards what follows (a range's
    # iota, say); an iota as long as an array's dimension cannot fail (pathfinder_batch's `iota cols` after
    # its `1..<rows` check), nor can the arithmetic of an array's size (`1 + m` of a concatenation after a
    # range: a kernel cannot make an array whose size it computes)
    size_arithmetic = _size_arithmetic(body)
    for stm in body.stms:
        guarded = guarded or has_assertions(stm.exp)
        e = stm.exp
        sized = isinstance(e, (S.Iota, S.Replicate)) and not _cannot_fail(e, sizes)
        cannot_fail = _cannot_fail(e, sizes) or any(p.name in size_arithmetic for p in stm.pat)
        if (guarded and not cannot_fail) or set(free_in_exp(e)) & variant \
                or not _safe_to_hoist(e) or (sized and runs is None):
            keep.append(stm)
            variant |= {p.name for p in stm.pat}
            continue
        if sized:
            if not ran:
                stms, atom = runs(names, stm.loc)
                out.extend(stms)
                ran.append(atom)
            e = _checked_if(e, ran[0], out, names, stm.loc)
        out.append(S.Stm(stm.pat, e, stm.loc))
    return out, S.Body(tuple(keep), body.result)


def _checked_if(e, runs, out: list, names: NameSource, loc):
    """The iota or replicate e, moved out of a body, with its size checked only if that body runs (`runs`;
    None: it surely does); a statement combining conditions goes to `out`."""
    if runs is None:
        return e
    checked = runs
    if e.checked is not None:  # moved out of an inner body before: checked only if both run
        checked = S.Var(names.fresh("runs"), BOOL)
        out.append(S.Stm((checked,), S.BinOp("&&", e.checked, runs, BOOL), loc))
    return dataclasses.replace(e, checked=checked)


def _cannot_fail(e, sizes: set) -> bool:
    """Whether an array that _safe_to_hoist allows is made without error whatever the values: an iota or a
    replicate whose length is a constant or one of `sizes`. (Other scalars after the check stay, but for the
    arithmetic of array sizes (_size_arithmetic): the kernels that compute them need no argument for them.)"""
    return isinstance(e, (S.Iota, S.Replicate)) and (
        (isinstance(e.n, S.Const) and e.n.value >= 0) or (isinstance(e.n, S.Var) and e.n.name in sizes))


def _size_arithmetic(body: S.Body) -> set:
    """The names a body binds by scalar arithmetic that cannot fail (no division) and that an array's size
    (of the body, or of a body inside it) is computed from."""
    names = set()

    def visit(b: S.Body) -> S.Body:
        for stm in b.stms:
            for p in stm.pat:
                names.update(type_size_names(p.type))
            map_nested(stm.exp, visit)
        return b
    visit(body)
    arithmetic = set()
    for stm in reversed(body.stms):
        if any(p.name in names for p in stm.pat) and isinstance(stm.exp, (S.AtomExp, S.UnOp, S.BinOp, S.PrimCall)) \
                and _safe_to_hoist(stm.exp):
            arithmetic.update(p.name for p in stm.pat)
            names.update(free_in_exp(stm.exp))
    return arithmetic


def _safe_to_hoist(e) -> bool:
    """Hoisting out of a map that may run zero times must not introduce a failure."""
    if isinstance(e, S.BinOp):
        return e.op not in ("/", "%", "//", "%%")
    return isinstance(e, (S.AtomExp, S.UnOp, S.PrimCall, S.Rearrange, S.Iota, S.Replicate, S.TuningParam))


def sink_index_arithmetic(prog: S.Program) -> S.Program:
    """Moves the index arithmetic of a map's body that only its inner map reads into that map: in
    `map (\\r -> let i = r - 1 let top = r > 0 in map (\\c -> ... i ... top ...) cs) rs` each point of the
    inner map computes `i` and `top` itself. The nest becomes perfect, so its flattened version is one kernel
    over both levels (NW's rebuilt matrix: not a kernel writing `r - 1` and `r > 0` per row, and a second
    loading them per element). Only integer and boolean arithmetic that cannot fail moves: a thread per row
    would otherwise repeat costly work per element."""
    return map_bodies(prog, _sink_body)


def _sink_body(body: S.Body) -> S.Body:
    return S.Body(tuple(S.Stm(s.pat, _sink_exp(s.exp), s.loc) for s in body.stms), body.result)


def _sink_exp(e):
    e = map_nested(e, _sink_body)
    return dataclasses.replace(e, lam=dataclasses.replace(e.lam, body=_sunk(e.lam.body))) if isinstance(e, S.Map) else e


def _sunk(body: S.Body) -> S.Body:
    """A lambda body ending in an inner map whose result is the body's: its index arithmetic that nothing else
    of the body reads moved into the inner map's body (the rest stays before the map)."""
    if len(body.stms) < 2 or body.stms[-1].pat != body.result or not isinstance(body.stms[-1].exp, S.Map):
        return body
    lead, last = body.stms[:-1], body.stms[-1]
    inner = last.exp
    moving = [stm for stm in lead if _index_arithmetic(stm)]
    # the inner map's width and arrays, and the sizes its types name, are read outside its body
    outside = {a.name for a in inner.arrs + (inner.width,) if isinstance(a, S.Var)}
    outside |= set().union(*(type_size_names(t) for t in
                             tuple(p.type for p in inner.lam.params + last.pat) + tuple(inner.lam.ret)))
    while True:  # nothing that stays may read what moves
        staying = [stm for stm in lead if stm not in moving]
        read = outside | {n for stm in staying for n in free_in_exp(stm.exp)}
        kept = [stm for stm in moving if stm.pat[0].name in read]
        if not kept:
            break
        moving = [stm for stm in moving if stm not in kept]
    if not moving:
        return body
    lam = dataclasses.replace(inner.lam, body=S.Body(tuple(moving) + inner.lam.body.stms, inner.lam.body.result))
    return S.Body(tuple(staying) + (S.Stm(last.pat, dataclasses.replace(inner, lam=lam), last.loc),), body.result)


def _index_arithmetic(stm: S.Stm) -> bool:
    """Integer or boolean arithmetic that cannot fail (a division only by a constant other than 0)."""
    e = stm.exp
    if not (len(stm.pat) == 1 and isinstance(stm.pat[0].type, Scalar)
            and (stm.pat[0].type.is_int or stm.pat[0].type.name == "bool")):
        return False
    if isinstance(e, S.BinOp) and e.op in ("/", "%", "//", "%%"):
        return isinstance(e.y, S.Const) and e.y.value != 0
    return isinstance(e, (S.BinOp, S.UnOp, S.AtomExp))


# ---- fusion ----

def fuse_into_reductions(prog: S.Program) -> S.Program:
    """Vertical fusion: `let t = map f xs in map g t` becomes one map of `g . f`, and `let t = map f xs in
    reduce op ne t` a redomap (a scan likewise a scanomap), when no result of the producer is used anywhere
    else. A producer may have several results (`let (a, b) = map ...`); a reduction or a scan must then take
    all of them, while a map may take some: the fused map also gives the others (`let (c, b) = map ...`, in
    the consumer's place, so nothing between the two may read them). Each body is fused before the bodies
    nested in it, so that maps which an outer fusion brings together (the inner maps of
    `map2 (map2 f) (map g xss) yss`) are fused in turn."""
    names = NameSource(all_names(prog))
    return map_bodies(prog, lambda body: _fuse_body(body, names))


def _fuse_body(body: S.Body, names: NameSource) -> S.Body:
    counts = use_counts(body)
    producers = {}  # output name -> (index in stms, the producing statement)
    stms = []
    for stm in body.stms:
        e, pat = stm.exp, stm.pat
        prod = _sole_producer(e, producers, counts, stms)
        if prod is not None:
            idx, p = prod
            if isinstance(e, S.Map):
                e, also = _compose(p, e, names)
                pat = pat + also
            elif isinstance(e, S.Reduce):
                e = S.Redomap(e.width, e.lam, _results_in_order(p, e.arrs), e.neutral, p.exp.arrs, e.commutative)
            else:
                e = S.Scanomap(e.width, e.lam, _results_in_order(p, e.arrs), e.neutral, p.exp.arrs)
            stms[idx] = None
            for v in p.pat:
                del producers[v.name]
        if isinstance(e, S.Map):
            for v in pat:
                producers[v.name] = (len(stms), S.Stm(pat, e, stm.loc))
        stms.append(S.Stm(pat, e, stm.loc))
    stms = _fuse_siblings([s for s in stms if s is not None])
    return S.Body(tuple(S.Stm(s.pat, map_nested(s.exp, lambda b: _fuse_body(b, names)), s.loc)
                        for s in stms), body.result)


def _fuse_siblings(stms: list) -> list:
    """Horizontal fusion: adjacent maps of one width, with no parallelism inside and the second not reading
    the first's results, become one map with the results of both (one pass where a thread runs them, one
    kernel where they are flattened)."""
    out = []
    for stm in stms:
        prev = out[-1] if out else None
        if (prev is not None and isinstance(stm.exp, S.Map) and isinstance(prev.exp, S.Map)
                and stm.exp.width == prev.exp.width
                and not has_inner_soacs(stm.exp.lam.body) and not has_inner_soacs(prev.exp.lam.body)
                and not {p.name for p in prev.pat} & set(free_in_exp(stm.exp))):
            a, b = prev.exp, stm.exp
            lam = S.Lambda(a.lam.params + b.lam.params,
                           S.Body(a.lam.body.stms + b.lam.body.stms, a.lam.body.result + b.lam.body.result),
                           a.lam.ret + b.lam.ret)
            out[-1] = S.Stm(prev.pat + stm.pat, S.Map(a.width, lam, a.arrs + b.arrs), prev.loc)
        else:
            out.append(stm)
    return out


def _sole_producer(e, producers: dict, counts: dict, before: list):
    """The map statement (with its index in `before`, the statements so far) that `e` can absorb: a map of the
    same width whose results `e` takes are each read once, by `e`; for a reduce or scan, all its results and
    its whole input; for a map, the results it does not take are read neither by `e` nor by the statements
    between the two. None if there is no such map."""
    if not isinstance(e, (S.Map, S.Reduce, S.Scan)):
        return None
    found = {producers[a.name][0]: producers[a.name] for a in e.arrs if a.name in producers}
    if len(found) != 1:
        return None
    ((idx, prod),) = found.values()
    outputs = {v.name for v in prod.pat}
    taken = [a.name for a in e.arrs if a.name in outputs]
    if (len(set(taken)) != len(taken) or any(counts.get(n) != 1 for n in taken)
            or prod.exp.width != e.width):
        return None
    if not isinstance(e, S.Map):
        return (idx, prod) if sorted(taken) == sorted(outputs) and len(taken) == len(e.arrs) else None
    others = outputs - set(taken)
    if others & (set(free_in_exp(e)) | {n for s in before[idx + 1:] if s is not None for n in free_in_exp(s.exp)}):
        return None
    return idx, prod


def _results_in_order(producer: S.Stm, arrs) -> S.Lambda:
    """The producer's lambda, its results reordered to follow `arrs` (a permutation of its outputs)."""
    lam = producer.exp.lam
    position = {v.name: k for k, v in enumerate(producer.pat)}
    order = [position[a.name] for a in arrs]
    return S.Lambda(lam.params, S.Body(lam.body.stms, tuple(lam.body.result[k] for k in order)),
                    tuple(lam.ret[k] for k in order))


def _compose(producer: S.Stm, consumer: S.Map, names: NameSource) -> tuple:
    """One map computing `consumer` over the elements that `producer` computes into its outputs, and also the
    producer's outputs that `consumer` does not take; with the pattern of those, which follows the
    consumer's."""
    lam = producer.exp.lam
    made = {v.name: r for v, r in zip(producer.pat, lam.body.result)}
    keep = [(p, a) for p, a in zip(consumer.lam.params, consumer.arrs) if a.name not in made]
    bound = {p.name: made[a.name] for p, a in zip(consumer.lam.params, consumer.arrs) if a.name in made}
    inner = Renamer(names, bound).body(consumer.lam.body)
    params = tuple(lam.params) + tuple(p for p, _ in keep)
    taken = {a.name for a in consumer.arrs}
    also = [(v, r, t) for v, r, t in zip(producer.pat, lam.body.result, lam.ret) if v.name not in taken]
    body = S.Body(tuple(lam.body.stms) + tuple(inner.stms), tuple(inner.result) + tuple(r for _, r, _ in also))
    fused = S.Map(consumer.width, S.Lambda(params, body, tuple(consumer.lam.ret) + tuple(t for _, _, t in also)),
                  tuple(producer.exp.arrs) + tuple(a for _, a in keep))
    return fused, tuple(v for v, _, _ in also)


def reductions_to_redomaps(prog: S.Program) -> S.Program:
    """A reduce (scan) that fusion did not reach becomes a redomap (scanomap) with an identity map, so
    that flattening handles one form."""
    def fix(body: S.Body) -> S.Body:
        stms = []
        for stm in body.stms:
            e = map_nested(stm.exp, fix)
            if isinstance(e, (S.Reduce, S.Scan)):
                params = tuple(S.Var(f"{a.name}_elem", a.type.row()) for a in e.arrs)
                ident = S.Lambda(params, S.Body((), params), tuple(p.type for p in params))
                e = (S.Redomap(e.width, e.lam, ident, e.neutral, e.arrs, e.commutative)
                     if isinstance(e, S.Reduce) else S.Scanomap(e.width, e.lam, ident, e.neutral, e.arrs))
            stms.append(S.Stm(stm.pat, e, stm.loc))
        return S.Body(tuple(stms), body.result)
    return _rename_fresh(map_bodies(prog, fix))


def _rename_fresh(prog: S.Program) -> S.Program:
    """Gives every bound variable a fresh name (restores global uniqueness after a pass invents names)."""
    names = NameSource(all_names(prog))  # parameters keep their names: they are the interface
    return _rename_functions(prog, lambda: Renamer(names, {}))


def _rename_functions(prog: S.Program, renamer) -> S.Program:
    """Each function's body renamed by a fresh `renamer()`, and its result types with it: a result's size may be
    a variable of the body (an existential size)."""
    funs = []
    for f in prog.funs:
        r = renamer()
        body = r.body(f.body)
        funs.append(dataclasses.replace(f, body=body, ret=tuple(r.type(t) for t in f.ret)))
    return dataclasses.replace(prog, funs=tuple(funs))


# ---- G4: a reduction or scan of arrays becomes a map of them over the transposed array ----

def interchange_array_reductions(prog: S.Program) -> S.Program:
    """`reduce (map2 op) ne xss` (column sums, say) becomes `map2 (\\col n -> reduce op n col) (transpose
    xss) ne` (rule G4), and `scan (map2 op) ne xss` the transpose of such a map of scans: the operator's
    inner parallelism becomes an outer map. Applied again inside, for operators like `map2 (map2 op)`."""
    names = NameSource(all_names(prog))
    return map_bodies(prog, lambda body: _g4_body(body, names))


def _g4_body(body: S.Body, names: NameSource) -> S.Body:
    stms = []
    replicated = {}  # arrays made by `replicate k d` of a scalar d: the neutral element is then d itself
    for stm in body.stms:
        e = map_nested(stm.exp, lambda b: _g4_body(b, names))
        if isinstance(e, S.Replicate) and not isinstance(e.x.type, Array):
            replicated[stm.pat[0].name] = e.x
        inner = _elementwise_operator(e) if isinstance(e, (S.Redomap, S.Scanomap)) else None
        if inner is None:
            stms.append(S.Stm(stm.pat, e, stm.loc))
            continue
        width, op = inner
        (ne,) = e.neutral
        row = ne.type.row()  # the type of one column's elements
        n = e.width
        swap = (1, 0) + tuple(range(2, 2 + len(shape_of(row))))
        if _is_identity(e.map_lam) and len(e.arrs) == 1:
            src = e.arrs[0]
        else:
            src = S.Var(names.fresh("rows"), array_of(row, (S.dim_of(n), S.dim_of(width))))
            stms.append(S.Stm((src,), S.Map(n, e.map_lam, e.arrs), stm.loc))
        cols = S.Var(names.fresh("cols"), array_of(row, (S.dim_of(width), S.dim_of(n))))
        stms.append(S.Stm((cols,), S.Rearrange(swap, src), stm.loc))
        col = S.Var(names.fresh("col"), array_of(row, (S.dim_of(n),)))
        ne_j = S.Var(names.fresh("ne"), row)
        x = S.Var(names.fresh("x"), row)
        ident = S.Lambda((x,), S.Body((), (x,)), (row,))
        op = Renamer(names, {}).lam(op)
        d = replicated.get(getattr(ne, "name", None))
        params, arrs = ((col,), (cols,)) if d is not None else ((col, ne_j), (cols, ne))
        column_ne = (d if d is not None else ne_j,)
        if isinstance(e, S.Redomap):
            r = S.Var(names.fresh("r"), row)
            column = S.Redomap(n, op, ident, column_ne, (col,), e.commutative)
        else:
            r = S.Var(names.fresh("r"), col.type)
            column = S.Scanomap(n, op, ident, column_ne, (col,))
        per_column = S.Lambda(params, _g4_body(S.Body((S.Stm((r,), column, stm.loc),), (r,)), names), (r.type,))
        if isinstance(e, S.Redomap):
            stms.append(S.Stm(stm.pat, S.Map(width, per_column, arrs), stm.loc))
        else:
            scanned = S.Var(names.fresh("scanned"), array_of(row, (S.dim_of(width), S.dim_of(n))))
            stms.append(S.Stm((scanned,), S.Map(width, per_column, arrs), stm.loc))
            stms.append(S.Stm(stm.pat, S.Rearrange(swap, scanned), stm.loc))
    return S.Body(tuple(stms), body.result)


def _elementwise_operator(e):
    """(width, op) when the operator of a reduction or scan is `\\a b -> map2 op a b` on arrays."""
    lam = e.red if isinstance(e, S.Redomap) else e.scan
    if len(lam.params) != 2 or len(e.neutral) != 1 or len(lam.body.stms) != 1:
        return None
    a, b = lam.params
    stm = lam.body.stms[0]
    m = stm.exp
    if not (isinstance(m, S.Map) and isinstance(a.type, Array)
            and tuple(v.name for v in m.arrs) == (a.name, b.name) and stm.pat == lam.body.result
            and len(m.lam.params) == 2
            and not (isinstance(m.width, S.Var) and m.width.name in (a.name, b.name))):
        return None
    return m.width, m.lam


def _is_identity(lam: S.Lambda) -> bool:
    return not lam.body.stms and tuple(lam.body.result) == tuple(lam.params)


# ---- G5: a map of a rearrange is a rearrange ----

def rearrange_maps(prog: S.Program) -> S.Program:
    """`map (\\x -> rearrange perm x) xs` becomes `rearrange (0, 1+perm) xs` (rule G5, e.g. a map of
    transposes is one permutation of the dimensions), innermost maps first."""
    return map_bodies(prog, _g5_body)


def _g5_body(body: S.Body) -> S.Body:
    stms = []
    for stm in body.stms:
        e = map_nested(stm.exp, _g5_body)
        if isinstance(e, S.Map) and len(e.lam.params) == 1 and len(e.lam.body.stms) == 1:
            inner = e.lam.body.stms[0]
            if isinstance(inner.exp, S.Rearrange) and inner.exp.arr == e.lam.params[0] \
                    and inner.pat == e.lam.body.result:
                e = S.Rearrange((0,) + tuple(1 + k for k in inner.exp.perm), e.arrs[0])
        stms.append(S.Stm(stm.pat, e, stm.loc))
    return S.Body(tuple(stms), body.result)


# ---- replicates inside maps are maps ----

def _positions(width: S.Atom, names: NameSource, stms: list, base: str, checked=None, loc=None) -> S.Var:
    """A fresh `iota width` bound in stms: the positions a map without other arrays maps over."""
    positions = S.Var(names.fresh(base), array_of(I64, (S.dim_of(width),)))
    stms.append(S.Stm((positions,), S.Iota(width, I64, checked), loc))
    return positions


def _with_inputs(e: S.Map, arrs: list, params: list, first: list) -> S.Map:
    """The map over these arrays with these parameters, its body starting with the statements `first`."""
    body = S.Body(tuple(first) + e.lam.body.stms, e.lam.body.result)
    return dataclasses.replace(e, lam=dataclasses.replace(e.lam, params=tuple(params), body=body), arrs=tuple(arrs))


def replicates_as_maps(prog: S.Program) -> S.Program:
    """Inside a map's lambda, `replicate n x` becomes `map (\\_ -> x) (iota n)`: a parallel statement that
    distribution (G6) makes a nest of its own, one thread an element, where a replicate would be run by each
    point of the enclosing nest alone (LocVolCalib's per-strike grids: 256 threads each writing 65,536
    elements). At the host level a replicate stays a fill."""
    names = NameSource(all_names(prog))
    return map_bodies(prog, lambda body: _replicates_body(body, names, False))


def _replicates_body(body: S.Body, names: NameSource, in_map: bool) -> S.Body:
    stms = []
    for stm in body.stms:
        e = stm.exp
        inner = in_map or isinstance(e, S.Map)
        e = map_nested(e, lambda b: _replicates_body(b, names, inner))
        if in_map and isinstance(e, S.Replicate):
            positions = _positions(e.n, names, stms, "replicated_i", e.checked, stm.loc)
            ignored = S.Var(names.fresh("i"), I64)
            e = S.Map(e.n, S.Lambda((ignored,), S.Body((), (e.x,)), (e.x.type,)), (positions,))
        stms.append(S.Stm(stm.pat, e, stm.loc))
    return S.Body(tuple(stms), body.result)


# ---- rotations read through their index function ----

def index_rotations(prog: S.Program) -> S.Program:
    """A map over `rotate k a` maps over `iota n` instead and reads `a[(i + k) % n]`: the rotation is an
    index function of the kernel's reads, as in Futhark, not a copy (the rotate left unused goes with the
    dead code). Other uses of a rotation keep it (the runtime rotates on the device)."""
    names = NameSource(all_names(prog))
    return map_bodies(prog, lambda body: _rotations_body(body, {}, names))


def _rotations_body(body: S.Body, rotations: dict, names: NameSource) -> S.Body:
    rotations = dict(rotations)  # name -> its Rotate, for the rotations bound here and around here
    stms = []
    for stm in body.stms:
        e = map_nested(stm.exp, lambda inner: _rotations_body(inner, rotations, names))
        if isinstance(e, S.Rotate):
            rotations[stm.pat[0].name] = e
        elif isinstance(e, S.Map) and any(a.name in rotations for a in e.arrs):
            e = _read_rotations(e, rotations, names, stms)
        stms.append(S.Stm(stm.pat, e, stm.loc))
    return S.Body(tuple(stms), body.result)


def _read_rotations(e: S.Map, rotations: dict, names: NameSource, stms: list) -> S.Map:
    """The map with each rotated input replaced by an iota of its width (bound in stms) and read by index."""
    positions = _positions(e.width, names, stms, "rotated_i")
    arrs, params, reads = [], [], []
    for arr, param in zip(e.arrs, e.lam.params):
        rotation = rotations.get(arr.name)
        if rotation is None:
            arrs.append(arr)
            params.append(param)
            continue
        i = S.Var(names.fresh("i"), I64)
        shifted, wrapped = S.Var(names.fresh("j"), I64), S.Var(names.fresh("j"), I64)
        reads += [S.Stm((shifted,), S.BinOp("+", i, rotation.amount, I64)),
                  S.Stm((wrapped,), S.BinOp("%", shifted, e.width, I64)),  # i < n: n is not 0 here
                  S.Stm((param,), S.Index(rotation.arr, (wrapped,)))]
        arrs.append(positions)
        params.append(i)
    return _with_inputs(e, arrs, params, reads)


# ---- maps over replicates ----

def read_replicates(prog: S.Program) -> S.Program:
    """A map over `replicate n x` binds its parameter to x instead of reading an element of the replicate, as
    Futhark's simplifier does; a copy of a replicate counts as one. LocVolCalib's constant coefficient grids
    (`replicate numY (replicate numX 0.0)`, one a strike) are then never written nor read: the dead code goes."""
    names = NameSource(all_names(prog))
    return map_bodies(prog, lambda body: _replicates_body_read(body, {}, names))


def _replicates_body_read(body: S.Body, replicated: dict, names: NameSource) -> S.Body:
    replicated = dict(replicated)  # name -> the atom its replicate repeats, for those bound here and around here
    stms = []
    for stm in body.stms:
        e = stm.exp
        if isinstance(e, S.Map) and any(a.name in replicated for a in e.arrs):
            e = _map_over_replicates(e, replicated, names, stms)
        e = map_nested(e, lambda inner: _replicates_body_read(inner, replicated, names))
        if isinstance(e, S.Replicate):
            replicated[stm.pat[0].name] = e.x
        elif isinstance(e, S.AtomExp) and isinstance(e.x, S.Var) and e.x.name in replicated \
                and stm.pat[0].type == e.x.type:  # not a coercion (`:>`): its size check must stay
            replicated[stm.pat[0].name] = replicated[e.x.name]
        stms.append(S.Stm(stm.pat, e, stm.loc))
    return S.Body(tuple(stms), body.result)


def _map_over_replicates(e: S.Map, replicated: dict, names: NameSource, stms: list) -> S.Map:
    """The map with each replicated input's parameter bound to the replicated atom; where no input is left, it
    maps over an iota of its width (bound in stms)."""
    arrs, params, binds = [], [], []
    for arr, param in zip(e.arrs, e.lam.params):
        if arr.name in replicated:
            binds.append(S.Stm((param,), S.AtomExp(replicated[arr.name])))
        else:
            arrs.append(arr)
            params.append(param)
    if not arrs:
        arrs, params = [_positions(e.width, names, stms, "replicated_i")], [S.Var(names.fresh("i"), I64)]
    return _with_inputs(e, arrs, params, binds)


# ---- copy propagation ----

class _CopyPropagator(Renamer):
    """Renames freshly, and replaces each variable bound by a copy (`let x = y`) with what it copies. A
    copy that changes the type's sizes (a coercion, `y :> [n]t`) stays: it is a run-time size check."""

    def stm(self, stm: S.Stm):
        if isinstance(stm.exp, S.AtomExp) and len(stm.pat) == 1:
            source = self.atom(stm.exp.x)
            if self.type(stm.pat[0].type) == source.type:
                self.subst[stm.pat[0].name] = source
                return None
        return super().stm(stm)


def propagate_copies(prog: S.Program) -> S.Program:
    names = NameSource(all_names(prog))
    return _rename_functions(prog, lambda: _CopyPropagator(names, {}))


# ---- dead code ----

def remove_dead_code(prog: S.Program) -> S.Program:
    return map_bodies(prog, _dce_body)


def _dce_body(body: S.Body) -> S.Body:
    body = S.Body(tuple(S.Stm(s.pat, map_nested(s.exp, _dce_body), s.loc) for s in body.stms), body.result)
    live = {a.name for a in body.result if isinstance(a, S.Var)}
    kept = []
    for stm in reversed(body.stms):
        if any(p.name in live for p in stm.pat) or has_assertions(stm.exp):
            kept.append(stm)
            live |= set(free_in_exp(stm.exp))
            live |= set().union(*(type_size_names(p.type) for p in stm.pat))  # sizes its types name
    return S.Body(tuple(reversed(kept)), body.result)

