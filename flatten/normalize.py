"""Normalisation before flattening: inlining, hoisting of invariant statements out of lambdas,
fusion of a map into the reduce or scan that consumes it (redomap / scanomap), and dead-code removal.

Each pass is a pure function from program to program; the result is valid source IR, so the reference
interpreter can run it.
"""

import dataclasses

from ir import source as S
from ir.analysis import free_in_exp, use_counts
from ir.rename import NameSource, Renamer, all_names


# ---- inlining ----

def inline_calls(prog: S.Program) -> S.Program:
    """Replaces every call of a user-defined function by its body (functions are non-recursive)."""
    names = NameSource(all_names(prog))
    done = {}
    for f in prog.funs:  # the front end rejects calls to later functions, so one pass in order suffices
        done[f.name] = dataclasses.replace(f, body=_inline_body(f.body, done, names))
    return dataclasses.replace(prog, funs=tuple(done[f.name] for f in prog.funs))


def _inline_body(body: S.Body, funs: dict, names: NameSource) -> S.Body:
    stms = []
    for stm in body.stms:
        e = _map_nested(stm.exp, lambda b: _inline_body(b, funs, names))
        if isinstance(e, S.Apply):
            callee = funs[e.fn]
            subst = {p.name: a for p, a in zip(callee.params, e.args)}
            for p, a in zip(callee.params, e.args):  # size parameters from the arguments' shapes
                for d_callee, d_arg in zip(getattr(p.type, "shape", ()), getattr(a.type, "shape", ())):
                    if isinstance(d_callee, str) and d_callee in callee.size_params:
                        subst[d_callee] = _dim_atom(d_arg)
            inlined = Renamer(names, subst).body(callee.body)
            stms.extend(inlined.stms)
            stms.extend(S.Stm((p,), S.AtomExp(r), stm.loc) for p, r in zip(stm.pat, inlined.result))
        else:
            stms.append(S.Stm(stm.pat, e, stm.loc))
    return S.Body(tuple(stms), body.result)


def _dim_atom(d):
    from ir.types import I64
    return S.Const(d, I64) if isinstance(d, int) else S.Var(d, I64)


def _map_nested(e, f):
    """Applies f to every body nested directly in e (lambda bodies included)."""
    def lam(l):
        return dataclasses.replace(l, body=f(l.body))
    if isinstance(e, S.If):
        return dataclasses.replace(e, then=f(e.then), else_=f(e.else_))
    if isinstance(e, (S.Map, S.Reduce, S.Scan, S.Filter)):
        return dataclasses.replace(e, lam=lam(e.lam))
    if isinstance(e, S.Loop):
        form = S.WhileLoop(f(e.form.cond)) if isinstance(e.form, S.WhileLoop) else e.form
        return dataclasses.replace(e, form=form, body=f(e.body))
    if isinstance(e, S.Redomap):
        return dataclasses.replace(e, red=lam(e.red), map_lam=lam(e.map_lam))
    if isinstance(e, S.Scanomap):
        return dataclasses.replace(e, scan=lam(e.scan), map_lam=lam(e.map_lam))
    return e


def _on_bodies(prog: S.Program, f) -> S.Program:
    return dataclasses.replace(prog, funs=tuple(dataclasses.replace(fn, body=f(fn.body)) for fn in prog.funs))


# ---- hoisting ----

def hoist_invariants(prog: S.Program) -> S.Program:
    """Moves statements of a map lambda that do not depend on its parameters out of the map, so that
    invariant work (a transpose, say) runs once, and the lambda body is a perfect nest where possible."""
    return _on_bodies(prog, _hoist_body)


def _hoist_body(body: S.Body) -> S.Body:
    stms = []
    for stm in body.stms:
        e = _map_nested(stm.exp, _hoist_body)
        if isinstance(e, S.Map):
            hoisted, lam_body = _split_invariant(e.lam.body, {p.name for p in e.lam.params})
            stms.extend(hoisted)
            e = dataclasses.replace(e, lam=dataclasses.replace(e.lam, body=lam_body))
        stms.append(S.Stm(stm.pat, e, stm.loc))
    return S.Body(tuple(stms), body.result)


def _split_invariant(body: S.Body, variant: set):
    variant = set(variant)
    out, keep = [], []
    for stm in body.stms:
        if set(free_in_exp(stm.exp)) & variant or not _safe_to_hoist(stm.exp):
            keep.append(stm)
            variant |= {p.name for p in stm.pat}
        else:
            out.append(stm)
    return out, S.Body(tuple(keep), body.result)


def _safe_to_hoist(e) -> bool:
    """Hoisting out of a map that may run zero times must not introduce a failure."""
    if isinstance(e, S.BinOp):
        return e.op not in ("/", "%", "//", "%%")
    return isinstance(e, (S.AtomExp, S.UnOp, S.PrimCall, S.Rearrange, S.Iota, S.Replicate))


# ---- fusion ----

def fuse_into_reductions(prog: S.Program) -> S.Program:
    """`let t = map f xs in reduce op ne t` becomes a redomap (and likewise scan into a scanomap),
    when t is used nowhere else."""
    return _on_bodies(prog, _fuse_body)


def _fuse_body(body: S.Body) -> S.Body:
    body = S.Body(tuple(S.Stm(s.pat, _map_nested(s.exp, _fuse_body), s.loc) for s in body.stms), body.result)
    counts = use_counts(body)
    producers = {}
    stms = []
    for stm in body.stms:
        e = stm.exp
        if isinstance(e, S.Map) and len(stm.pat) == 1:
            producers[stm.pat[0].name] = (len(stms), stm)
        if isinstance(e, (S.Reduce, S.Scan)) and len(e.arrs) == 1 and e.arrs[0].name in producers \
                and counts.get(e.arrs[0].name) == 1:
            idx, prod = producers.pop(e.arrs[0].name)
            m = prod.exp
            if isinstance(e, S.Reduce):
                e = S.Redomap(e.width, e.lam, m.lam, e.neutral, m.arrs, e.commutative)
            else:
                e = S.Scanomap(e.width, e.lam, m.lam, e.neutral, m.arrs)
            stms[idx] = None
        stms.append(S.Stm(stm.pat, e, stm.loc))
    return S.Body(tuple(s for s in stms if s is not None), body.result)


def reductions_to_redomaps(prog: S.Program) -> S.Program:
    """A reduce (scan) that fusion did not reach becomes a redomap (scanomap) with an identity map, so
    that flattening handles one form."""
    def fix(body: S.Body) -> S.Body:
        stms = []
        for stm in body.stms:
            e = _map_nested(stm.exp, fix)
            if isinstance(e, (S.Reduce, S.Scan)):
                params = tuple(S.Var(f"{a.name}_elem", a.type.row()) for a in e.arrs)
                ident = S.Lambda(params, S.Body((), params), tuple(p.type for p in params))
                e = (S.Redomap(e.width, e.lam, ident, e.neutral, e.arrs, e.commutative)
                     if isinstance(e, S.Reduce) else S.Scanomap(e.width, e.lam, ident, e.neutral, e.arrs))
            stms.append(S.Stm(stm.pat, e, stm.loc))
        return S.Body(tuple(stms), body.result)
    return _rename_fresh(_on_bodies(prog, fix))


def _rename_fresh(prog: S.Program) -> S.Program:
    """Gives every bound variable a fresh name (restores global uniqueness after a pass invents names)."""
    names = NameSource(all_names(prog))
    funs = []
    for f in prog.funs:
        r = Renamer(names, {})
        params = f.params  # parameters and size parameters keep their names: they are the interface
        funs.append(dataclasses.replace(f, body=r.body(f.body), params=params))
    return dataclasses.replace(prog, funs=tuple(funs))


# ---- copy propagation ----

class _CopyPropagator(Renamer):
    """Renames freshly, and replaces each variable bound by a copy (`let x = y`) with what it copies."""

    def stm(self, stm: S.Stm):
        if isinstance(stm.exp, S.AtomExp) and len(stm.pat) == 1:
            self.subst[stm.pat[0].name] = self.atom(stm.exp.x)
            return None
        return super().stm(stm)


def propagate_copies(prog: S.Program) -> S.Program:
    names = NameSource(all_names(prog))
    return _on_bodies(prog, lambda body: _CopyPropagator(names, {}).body(body))


# ---- dead code ----

def remove_dead_code(prog: S.Program) -> S.Program:
    return _on_bodies(prog, _dce_body)


def _dce_body(body: S.Body) -> S.Body:
    body = S.Body(tuple(S.Stm(s.pat, _map_nested(s.exp, _dce_body), s.loc) for s in body.stms), body.result)
    live = {a.name for a in body.result if isinstance(a, S.Var)}
    kept = []
    for stm in reversed(body.stms):
        if any(p.name in live for p in stm.pat):
            kept.append(stm)
            live |= set(free_in_exp(stm.exp))
    return S.Body(tuple(reversed(kept)), body.result)


PIPELINE = (inline_calls, propagate_copies, hoist_invariants, fuse_into_reductions, reductions_to_redomaps,
            remove_dead_code)


def normalize(prog: S.Program) -> S.Program:
    for normalize_pass in PIPELINE:
        prog = normalize_pass(prog)
    return prog
