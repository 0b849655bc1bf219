"""The reference interpreter's vectorising fast path (ir/interp/interpreter.py holds the semantics).

The interpreter evaluates per element, but a lambda whose body holds only scalar operations, indexing
(slices whose bounds do not depend on the lambda's parameters included), `if` and loops (without size
parameters, and a `for` whose count does not depend on the parameters) is evaluated once over whole
arrays (numpy); a `while` loop then iterates on the elements whose condition still holds.  A reduction or
scan whose operator is a single `+ * & | ^ && || min max` per component uses numpy's reduce/accumulate;
other vectorisable operators are reduced as a balanced tree.

`Vectorising` is a mixin of `ir.interp.interpreter._Interp`.  `lam_info` finds out once per lambda whether it is
vectorisable (`_body_vectorisable`, with a rule of `VECTORISABLE` per expression class) and which per-component
operators it reduces with (`_red_ops`); `runner` evaluates a lambda per element; `vapply` evaluates it over n
elements at once (`vbody`, `vstm`, with a rule of `VECTORISED` per expression class: `vif`, `vindex` and `vloop`
for the forms whose operands may be batched); `ufuncs` gives the numpy ufuncs of a reduction.  `_Interp.map_values`,
`reduce_values` and `scan_values` choose among them (and build the balanced trees with `vapply`).  The mixin's
methods use the interpreter's own (`atom`, `exps`, `vexps`, `e_index`, `e_loop`, `loop_info`, `bind_loop`,
`index_key`, `index_parts`, `stm`) and the caches `lams` and `frees` that `_Interp.__init__` sets up.
"""

import numpy as np

from incflat.ir import nodes
from incflat.ir import source as S
from incflat.ir.analysis import exp_atoms, free_in_exp, index_atoms
from incflat.ir.interp.ops import _PYTHON_ERRORS, InterpError, _err, _from_python, _oob_message
from incflat.ir.runtime.values import type_name


# Reductions whose operator is one numpy ufunc per component.
_RED_UFUNCS = {
    ("+", "iuf"): np.add, ("*", "iuf"): np.multiply,
    ("&", "iub"): np.bitwise_and, ("|", "iub"): np.bitwise_or, ("^", "iub"): np.bitwise_xor,
    ("&&", "b"): np.logical_and, ("||", "b"): np.logical_or,
    ("min", "f"): np.fmin, ("max", "f"): np.fmax, ("min", "iu"): np.minimum, ("max", "iu"): np.maximum,
}


def _batch(v, n):
    """n copies of a shared value, as a batched one."""
    v = np.asarray(v)
    return np.broadcast_to(v, (n,) + v.shape).copy()


class _LamInfo:
    __slots__ = ("bound", "vectorisable", "red_ops")


def _body_vectorisable(body, tainted):
    """Whether `vapply` can evaluate `body` over whole arrays.  `tainted` holds the names whose values
    may be batched (one value per element: the lambda's parameters and what depends on them); it is
    extended with the names that the body binds from them."""
    for stm in body.stms:
        dep = not tainted.isdisjoint(free_in_exp(stm.exp))
        vectorisable = VECTORISABLE.get(type(stm.exp))
        if vectorisable is None or not vectorisable(stm, tainted, dep):
            return False
        if dep:
            tainted.update(v.name for v in stm.pat)
        else:
            tainted.difference_update(v.name for v in stm.pat)
    return True


# ---- the rules of VECTORISABLE: whether a statement can be evaluated over whole arrays, given the batched
# names `tainted` and whether the statement reads one of them (`dep`) ----

def _scalar_vectorisable(stm, tainted, dep):
    return True


def _atom_vectorisable(stm, tainted, dep):
    return not _is_coercion(stm)  # the per-element path checks the sizes


def _index_vectorisable(stm, tainted, dep):
    # Slices are vectorised only with bounds shared by all elements (the same slice of each).
    return not any(isinstance(i, S.DimSlice) and any(isinstance(a, S.Var) and a.name in tainted for a in index_atoms(i))
                   for i in stm.exp.idxs)


def _if_vectorisable(stm, tainted, dep):
    return _body_vectorisable(stm.exp.then, set(tainted)) and _body_vectorisable(stm.exp.else_, set(tainted))


def _loop_statement_vectorisable(stm, tainted, dep):
    # (a loop that depends on no batched value is evaluated once, as it is)
    return not dep or _loop_vectorisable(stm.exp, tainted)


def _is_coercion(stm) -> bool:
    """An atom bound to a name whose array type has other sizes (`x :> [n]t`)."""
    new = getattr(stm.pat[0].type, "shape", None)
    return new is not None and new != getattr(stm.exp.x.type, "shape", None)


def _loop_vectorisable(e, tainted):
    """A loop that depends on batched values: all its parameters are batched, and the body (and the
    condition) must be vectorisable; sizes may not change, and a `for` count must be shared."""
    if e.size_params:
        return False
    inner = set(tainted) | {p.name for p in e.params}
    if isinstance(e.form, S.ForLoop):
        b = e.form.bound
        if isinstance(b, S.Var) and b.name in tainted:
            return False
        inner.discard(e.form.i.name)
    else:
        if not _body_vectorisable(e.form.cond, set(inner)):
            return False
    return _body_vectorisable(e.body, inner)


def _red_ops(lam):
    """For `\\a1..ak b1..bk -> (a1 op1 b1, ..., ak opk bk)`: the k ops (`+`, `min`, ...); else None."""
    ps = lam.params
    k = len(lam.body.result)
    if len(ps) != 2 * k or len(lam.body.stms) != k:
        return None
    defs = {}
    for stm in lam.body.stms:
        e = stm.exp
        if len(stm.pat) != 1:
            return None
        if isinstance(e, S.BinOp):
            op, args = e.op, (e.x, e.y)
        elif isinstance(e, S.PrimCall) and len(e.args) == 2 and e.fn.partition(".")[2] in ("min", "max"):
            op, args = e.fn.partition(".")[2], e.args
        else:
            return None
        defs[stm.pat[0].name] = (op, args)
    ops = []
    for j, r in enumerate(lam.body.result):
        if not isinstance(r, S.Var) or r.name not in defs:
            return None
        op, (x, y) = defs[r.name]
        names = {getattr(x, "name", None), getattr(y, "name", None)}
        if names != {ps[j].name, ps[k + j].name} or not all(isinstance(a, S.Var) for a in (x, y)):
            return None
        ops.append(op)
    return ops


class Vectorising:
    """The fast path's methods of `ir.interp.interpreter._Interp` (see the module docstring)."""

    def lam_info(self, lam):
        hit = self.lams.get(id(lam))
        if hit is None:
            info = _LamInfo()
            info.bound = {v.name for s in lam.body.stms for v in s.pat}
            info.vectorisable = _body_vectorisable(lam.body, {p.name for p in lam.params})
            info.red_ops = _red_ops(lam)
            hit = self.lams[id(lam)] = (lam, info)
        return hit[1]

    def runner(self, lam, env):
        """A function from the lambda's arguments to its results, per element (in a private env)."""
        info = self.lam_info(lam)
        lenv = dict(env)
        names = [p.name for p in lam.params]
        shadow = [(n, env[n]) for n in info.bound if n in env]
        stms = lam.body.stms
        res = lam.body.result
        stm = self.stm
        atom = self.atom

        def run(args):
            for n, v in zip(names, args):
                lenv[n] = v
            for n, v in shadow:
                lenv[n] = v
            for s in stms:
                stm(s, lenv)
            return [atom(r, lenv) for r in res]
        return run

    def ufuncs(self, ops, arrs):
        if ops is None or any(a.ndim != 1 for a in arrs):
            return None
        ufs = []
        for op, a in zip(ops, arrs):
            kind = a.dtype.kind
            uf = next((u for (o, kinds), u in _RED_UFUNCS.items() if o == op and kind in kinds), None)
            if uf is None:
                return None
            ufs.append(uf)
        return ufs

    # ---- vectorised evaluation of a lambda over n elements at once ----

    def vapply(self, lam, args, batched, n, env, loc):
        """Apply `lam` to n elements at once.  `args[i]` holds all n elements (outermost dimension) when
        `batched[i]`, else one value shared by all.  Returns one array of n elements per result."""
        lenv = dict(env)
        bset = set()
        for p, a, b in zip(lam.params, args, batched):
            _bind(lenv, bset, p.name, a, b)
        out = []
        for (v, b) in self.vbody(lam.body, lenv, bset, n):
            if not b:
                v = np.asarray(v)
                v = np.broadcast_to(v, (n,) + v.shape).copy()
            out.append(v)
        return out

    def vbody(self, body, lenv, bset, n):
        for stm in body.stms:
            self.vstm(stm, lenv, bset, n)
        return [(self.atom(r, lenv), isinstance(r, S.Var) and r.name in bset) for r in body.result]

    def vstm(self, stm, lenv, bset, n):
        loc = stm.loc
        try:
            vals, flags = self.vexps[type(stm.exp)](stm.exp, lenv, bset, n, loc)  # VECTORISED's rule
        except InterpError as err:
            if err.loc is None:
                err.loc = loc
            raise
        except _PYTHON_ERRORS as err:
            raise _from_python(err, loc) from err
        if len(vals) != len(stm.pat):
            raise _err(f"A pattern of {len(stm.pat)} names is bound to {len(vals)} values.", loc)
        for p, v, b in zip(stm.pat, vals, flags):
            _bind(lenv, bset, p.name, v, b)

    def free_names(self, e):
        hit = self.frees.get(id(e))
        if hit is None:
            hit = self.frees[id(e)] = (e, frozenset(free_in_exp(e)))
        return hit[1]

    # ---- the rules of VECTORISED: rule(interp, e, lenv, bset, n, loc) -> (values, batched flags) ----

    def vexp_elementwise(self, e, lenv, bset, n, loc):
        # Scalar operations work elementwise on arrays as they are.
        vals = self.exps[type(e)](e, lenv, loc)
        flag = any(isinstance(a, S.Var) and a.name in bset for a in exp_atoms(e))
        return vals, [flag] * len(vals)

    def vexp_if(self, e, lenv, bset, n, loc):
        cb = isinstance(e.cond, S.Var) and e.cond.name in bset
        if not cb:
            c = self.atom(e.cond, lenv, loc)
            res = self.vbody(e.then if c else e.else_, dict(lenv), set(bset), n)
            return [v for v, _ in res], [b for _, b in res]
        return self.vif(e, lenv[e.cond.name], lenv, bset, n, loc)

    def vexp_index(self, e, lenv, bset, n, loc):
        b = [isinstance(a, S.Var) and a.name in bset for a in (e.arr,) + tuple(e.idxs)]
        if any(b):
            return [self.vindex(e, b[0], lenv, n, loc)], [True]
        return list(self.e_index(e, lenv, loc)), [False]

    def vexp_loop(self, e, lenv, bset, n, loc):
        if self.free_names(e) & bset:
            vals = self.vloop(e, lenv, bset, n, loc)
            return vals, [True] * len(vals)
        vals = self.e_loop(e, lenv, loc)
        return list(vals), [False] * len(vals)

    def vloop(self, e, lenv, bset, n, loc):
        """A loop run for n elements at once: every parameter holds n values.  A while loop iterates
        on the elements whose condition holds, until none is left."""
        info = self.loop_info(e)
        state = []
        for a in e.init:
            v = self.atom(a, lenv, loc)
            state.append(v if isinstance(a, S.Var) and a.name in bset else _batch(v, n))
        self.check_vloop(e, info, state, lenv, loc, "the initial value")
        names = [p.name for p, *_ in info.specs]
        outer = [name for name in self.free_names(e) if name in bset]  # batched values the loop reads

        def env_for(vals, active=None):
            benv = dict(lenv)
            bb = set(bset)
            if active is not None:  # the elements still iterating, of the outer batched values too
                for name in outer:
                    benv[name] = lenv[name][active]
            for name, v in zip(names, vals):
                benv[name] = v
                bb.add(name)
            return benv, bb

        if isinstance(e.form, S.ForLoop):
            count = int(self.atom(e.form.bound, lenv, loc))
            ctype = e.form.i.type.dtype
            iname = e.form.i.name
            for k in range(count):
                benv, bb = env_for(state)
                benv[iname] = ctype(k)
                bb.discard(iname)
                state = [v if b else _batch(v, n) for v, b in self.vbody(e.body, benv, bb, n)]
                self.check_vloop(e, info, state, lenv, loc, f"iteration {k}")
            return state
        state = [np.array(v) for v in state]  # private and writable
        active = None  # the indices of the elements still iterating (None: all)
        k = 0
        while True:
            sub = state if active is None else [v[active] for v in state]
            m = n if active is None else len(active)
            benv, bb = env_for(sub, active)
            res = self.vbody(e.form.cond, benv, bb, m)
            if len(res) != 1:
                raise _err(f"The condition of a while loop must give one bool, but gives {len(res)} values.", loc)
            c, cb = res[0]
            c = np.asarray(c) if cb else np.broadcast_to(np.asarray(c), (m,))
            if c.dtype != np.bool_:
                raise _err(f"The condition of a while loop must give one bool, but gives {c.dtype}.", loc)
            if not c.any():
                return state
            if not c.all():
                sub = [v[c] for v in sub]
                active = np.nonzero(c)[0] if active is None else active[c]
                m = len(active)
            benv, bb = env_for(sub, active)
            new = [v if b else _batch(v, m) for v, b in self.vbody(e.body, benv, bb, m)]
            self.check_vloop(e, info, new, lenv, loc, f"iteration {k}")
            if active is None:
                state = [np.array(v) for v in new]
            else:
                for v, r in zip(state, new):
                    v[active] = r
            k += 1

    def check_vloop(self, e, info, state, lenv, loc, when):
        """Check batched loop values against the parameters' types (all elements have one shape)."""
        if len(state) != len(info.specs):
            raise _err(f"The loop has {len(info.specs)} parameters, but {when} gives {len(state)} values.", loc)
        self.bind_loop(e, info, [v[0] for v in state], {}, lenv, loc, when)

    def vif(self, e, c, lenv, bset, n, e_loc=None):
        taken = np.nonzero(c)[0]
        other = np.nonzero(~c)[0]
        parts = []
        for sel, body in ((taken, e.then), (other, e.else_)):
            if len(sel) == 0:
                parts.append(None)
                continue
            benv = dict(lenv)
            for name in bset:
                benv[name] = lenv[name][sel]
            res = self.vbody(body, benv, set(bset), len(sel))
            parts.append((sel, res))
        vals, flags = [], []
        for j in range(len(e.types)):
            out = None
            for part in parts:
                if part is None:
                    continue
                sel, res = part
                v, b = res[j]
                v = np.asarray(v)
                if out is None:
                    shape = v.shape[1:] if b else v.shape
                    out = np.empty((n,) + shape, dtype=v.dtype)
                try:
                    out[sel] = v
                except ValueError:
                    raise _err(f"The branches of an if give results of different shapes inside a map: "
                               f"{type_name(out[0], sizes=True)} and {type_name(v[0] if b else v, sizes=True)}.",
                               e_loc) from None
            vals.append(out)
            flags.append(True)
        return vals, flags

    def vindex(self, e, arr_b, lenv, n, loc):
        """An Index over n elements: the array and the fixed indices may be batched, the slices not (the
        same slice of each element)."""
        arr = self.atom(e.arr, lenv, loc)
        shape = arr.shape[1:] if arr_b else arr.shape
        idxs = e.idxs
        keys, slices_ok = self.index_key(idxs, shape, lenv, loc, batched=True)
        off = 1 if arr_b else 0
        bad = np.zeros(n, dtype=bool)
        key1 = [slice(None)] * off
        fixed_axes, fixed = [], []
        for k, (i, w, key) in enumerate(zip(idxs, shape, keys)):
            if type(i) is S.DimSlice:
                key1.append(key)
            else:
                v = np.asarray(key)
                bad |= (v < 0) | (v >= w)
                key1.append(slice(None))
                fixed_axes.append(off + k)
                fixed.append(v)
        if not slices_ok or bad.any():
            j = int(np.argmax(bad))
            raise _err(_oob_message(self.index_parts(idxs, lenv, loc, pick=j), shape), loc)
        a = arr[tuple(key1)] if len(fixed) < len(idxs) else arr
        if arr_b and not fixed:
            return a
        # Advanced indexing on the leading axes only: the batch axis and the fixed indices come first.
        front = ([0] if arr_b else []) + fixed_axes
        if front != list(range(len(front))):
            a = a.transpose(front + [ax for ax in range(a.ndim) if ax not in front])
        key = ((np.arange(n),) if arr_b else ()) + tuple(fixed)
        r = a[key]
        if r.shape[:1] != (n,):  # only a shared array indexed by shared indices: not reached
            r = np.broadcast_to(r, (n,) + r.shape).copy()
        return r


# The classes whose statements make a lambda's body evaluated per element (no rule in either table).
_PER_ELEMENT = dict.fromkeys(
    (S.Apply, S.Update, S.Assert, S.TuningParam, S.ArrayLit, S.Concat, S.Rotate, S.Reshape, S.Scatter, S.Iota,
     S.Replicate, S.Rearrange, S.Map, S.Reduce, S.Scan, S.Redomap, S.Scanomap, S.Hist, S.Filter),
    "not vectorised: a lambda whose body holds it is evaluated per element")

VECTORISABLE = nodes.Table(f"{__name__}.VECTORISABLE", "source", {
    S.AtomExp: _atom_vectorisable, S.BinOp: _scalar_vectorisable, S.UnOp: _scalar_vectorisable,
    S.PrimCall: _scalar_vectorisable, S.Index: _index_vectorisable, S.If: _if_vectorisable,
    S.Loop: _loop_statement_vectorisable,
}, absent=_PER_ELEMENT)

VECTORISED = nodes.Table(f"{__name__}.VECTORISED", "source", {
    S.AtomExp: Vectorising.vexp_elementwise, S.BinOp: Vectorising.vexp_elementwise,
    S.UnOp: Vectorising.vexp_elementwise, S.PrimCall: Vectorising.vexp_elementwise,
    S.Index: Vectorising.vexp_index, S.If: Vectorising.vexp_if, S.Loop: Vectorising.vexp_loop,
}, absent=_PER_ELEMENT)


def _bind(lenv, bset, name, value, batched):
    """Binds name to value, which holds one element per lane when batched, else one shared by all."""
    lenv[name] = value
    if batched:
        bset.add(name)
    else:
        bset.discard(name)
