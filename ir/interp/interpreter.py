"""The reference interpreter for the source IR: the semantic oracle of the project.

`run_entry(prog, entry, args)` evaluates one function of a `ir.source.Program` on numpy values and
returns its results as a tuple of numpy scalars and arrays.  Semantics follow Futhark:

- integers wrap around at their width (two's complement); signed `/` and `%` round toward negative
  infinity (Haskell `div`/`mod`), `//` and `%%` toward zero (`quot`/`rem`); unsigned operators are plain;
  integer `**` is wrapping integer power (a negative exponent is an error); division by zero is an error;
- floats follow IEEE arithmetic at their own precision (f32 in float32); `%` on floats is C's fmod;
- out-of-bounds indexing, invalid slices, negative sizes, size mismatches, wrongly typed entry arguments
  and every other run-time failure are `InterpError`s carrying the `loc` of the failing statement (the
  innermost one); a Python exception that escapes an operation (numpy's IndexError, ValueError,
  MemoryError, a RecursionError, ...) is turned into one too;
- float-to-integer conversion truncates toward zero; NaN and infinities give 0 and out-of-range values
  wrap (Futhark leaves both undefined);
- slices `a[i:j:s]` have ceil((j - i) / s) elements (Futhark's rounding), must lie within the array and
  have the length that the IR's `size` atom says; an empty slice is always valid, a zero stride never;
- `scatter` ignores out-of-bounds writes; of several writes to one index the last one wins (Futhark
  leaves it unspecified); `rotate r xs` takes r modulo the length (any r when the array is empty);
- loops bind their size parameters from the parameters' shapes at the start of every iteration, and
  check every parameter's value against its type (rank, element type, fixed and outer sizes); lambda
  parameters are checked likewise against the rows they receive (once per SOAC);
- an `iota` or `replicate` of more than MAX_ARRAY_BYTES is an error, not an attempt.

Evaluation is per element; the fast path in ir/interp/vectorise.py evaluates a lambda whose body holds only
scalar operations, indexing, `if` and loops once over whole arrays (numpy), and reduces and scans with
numpy's reduce/accumulate or as a balanced tree.  Reductions may therefore associate differently from a
left fold, which Futhark allows (operators must be associative).  The scalar operations themselves and
`InterpError` are in ir/interp/ops.py.
"""

import sys

import numpy as np

from incflat.ir import nodes
from incflat.ir import source as S
from incflat.ir.interp.ops import (_PYTHON_ERRORS, InterpError, _binop, _const_value, _err, _from_python, _make_prim,
                                   _oob_message, _py_slice, _shape_str, _slice_length, _slice_text, _unop, _wrap_int)
from incflat.ir.types import Array, Scalar, unsized_name
from incflat.ir.runtime.values import type_name
from incflat.ir.interp.vectorise import VECTORISED, Vectorising


def run_entry(prog: S.Program, entry: str, args: list) -> tuple:
    """Run function `entry` of `prog` on `args` (numpy scalars and arrays; Python bool/int/float are
    accepted for scalar parameters of a matching kind) and return its results, in order."""
    try:
        f = prog.fun(entry)
    except KeyError:
        raise InterpError(f"No entry point named {entry!r}; the program has "
                          f"{', '.join(g.name for g in prog.entries) or 'none'}.") from None
    interp = _Interp(prog)
    # Evaluation recurses on the nesting of bodies (and on calls); allow deep nests, as the front end does.
    old = sys.getrecursionlimit()
    if old < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        with np.errstate(all="ignore"):
            res = interp.call(f, list(args), f.loc, entry=True)
    except RecursionError:  # not even a statement could report it
        raise InterpError("Evaluation nests too deeply (recursion).", f.loc) from None
    except MemoryError:
        raise InterpError("Out of memory.", f.loc) from None
    finally:
        if old < _RECURSION_LIMIT:
            sys.setrecursionlimit(old)
    return tuple(_result_value(v) for v in res)


_RECURSION_LIMIT = 20000

# Arrays that iota and replicate would make beyond this many bytes are an error rather than an attempt
# (which could exhaust the machine's memory before numpy gives up).
MAX_ARRAY_BYTES = 1 << 34


def _result_value(v):
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return v[()]
    return v


def _bound(table, interp) -> dict:
    """The table's rules as methods of interp, one lookup a statement; each is found by its name on interp's class
    (where a test may have replaced it)."""
    return {cls: getattr(interp, rule.__name__) for cls, rule in table.items()}


class _LoopInfo:
    __slots__ = ("bound", "size_params", "specs")


class _Interp(Vectorising):
    def __init__(self, prog):
        self.funs = {f.name: f for f in prog.funs}
        self.consts = {}  # id(Const) -> (Const, value)
        self.prims = {}  # fn name -> f(args, loc)
        self.lams = {}  # id(Lambda) -> (Lambda, _LamInfo)
        self.exps = _bound(TABLE, self)
        self.vexps = _bound(VECTORISED, self)
        self.loops = {}  # id(Loop) -> (Loop, _LoopInfo)
        self.frees = {}  # id(Exp) -> (Exp, set of free names)

    # ---- atoms, statements, bodies ----

    def atom(self, a, env, loc=None):
        if type(a) is S.Var:
            try:
                return env[a.name]
            except KeyError:
                raise _err(f"Unknown variable {a.name}.", loc) from None
        hit = self.consts.get(id(a))
        if hit is None:
            hit = self.consts[id(a)] = (a, _const_value(a))
        return hit[1]

    def stm(self, stm, env):
        f = self.exps.get(type(stm.exp))  # TABLE's rule, bound to this interpreter
        if f is None:
            raise _err(f"The interpreter does not support {type(stm.exp).__name__}.", stm.loc)
        try:
            vals = f(stm.exp, env, stm.loc)
        except InterpError as err:
            if err.loc is None:
                err.loc = stm.loc
            raise
        except _PYTHON_ERRORS as err:
            raise _from_python(err, stm.loc) from err
        pat = stm.pat
        if len(vals) != len(pat):
            raise _err(f"A pattern of {len(pat)} names is bound to {len(vals)} values.", stm.loc)
        if type(stm.exp) is S.AtomExp and type(pat[0].type) is Array:
            self.check_coercion(pat[0].type, stm.exp.x, vals[0], env, stm.loc)
        for v, x in zip(pat, vals):
            env[v.name] = x

    def check_coercion(self, target, source, value, env, loc):
        """`x :> [n]t` (an atom bound to a name whose type has other sizes): the value must have them."""
        old = getattr(source.type, "shape", ())
        for k, (new, was) in enumerate(zip(target.shape, old)):
            if new == was or k >= np.ndim(value):
                continue
            want = new if isinstance(new, int) else env.get(new)
            if want is None or np.ndim(want):
                continue
            if int(want) != value.shape[k]:
                wanted = list(value.shape)
                wanted[k] = int(want)
                raise _err(f"Cannot coerce an array of shape {_shape_str(value.shape)} to shape "
                           f"{_shape_str(wanted)}.", loc)

    def body(self, body, env):
        for s in body.stms:
            self.stm(s, env)
        return tuple(self.atom(a, env) for a in body.result)

    # ---- functions ----

    def call(self, f, args, loc, entry=False):
        where = f"entry point {f.name}" if entry else f"function {f.name}"
        if len(args) != len(f.params):
            raise _err(f"The {where} takes {len(f.params)} arguments, but was given {len(args)}.", loc)
        env = {}
        sizes = {}  # size name -> (value, parameter that fixed it)
        for i, (p, v) in enumerate(zip(f.params, args)):
            v = self.check_arg(p, v, i, where, entry, loc)
            if isinstance(p.type, Array):
                for k, (d, s) in enumerate(zip(p.type.shape, v.shape)):
                    if isinstance(d, int):
                        if d != s:
                            raise _err(f"Size mismatch in {where}: dimension {k + 1} of parameter {p.name} "
                                       f"must be {d}, but the argument has shape "
                                       f"{''.join(f'[{n}]' for n in v.shape)}.", loc)
                    elif d in sizes:
                        if sizes[d][0] != s:
                            raise _err(f"Size mismatch in {where}: size {d} is {sizes[d][0]} "
                                       f"(from parameter {sizes[d][1]}), but parameter {p.name} has {d} = {s}.",
                                       loc)
                    elif d in env and not isinstance(env[d], np.ndarray):
                        if int(env[d]) != s:
                            raise _err(f"Size mismatch in {where}: parameter {d} is {int(env[d])}, but "
                                       f"parameter {p.name} has {d} = {s}.", loc)
                    else:
                        sizes[d] = (s, p.name)
            env[p.name] = v
        for name in f.size_params:
            if name not in sizes:
                raise _err(f"Size parameter {name} of {where} is not determined by the arguments.", loc)
        for name, (s, _) in sizes.items():
            env[name] = np.int64(s)
        fixed = {name: s for name, (s, _) in sizes.items()}
        res = self.body(f.body, dict(env))
        if len(res) != len(f.ret):
            raise _err(f"The {where} returned {len(res)} values, but declares {len(f.ret)}.", f.loc or loc)
        for t, v in zip(f.ret, res):
            self.check_result(t, v, fixed, where, f.loc or loc)
        return res

    def check_arg(self, p, v, i, where, entry, loc):
        t = p.type

        def bad():
            exp = unsized_name(t)
            return _err(f"Expected argument of type {exp}, got {type_name(v, sizes=True)} "
                        f"(argument {i + 1}, {p.name}, of the {where}).", loc)
        if isinstance(t, Scalar):
            if isinstance(v, np.ndarray) and v.ndim == 0:
                v = v[()]
            if isinstance(v, np.generic):
                if v.dtype != t.dtype:
                    raise bad()
                return v
            if entry and isinstance(v, (bool, int, float)):
                if isinstance(v, bool) != (t.name == "bool") or (isinstance(v, float) and not t.is_float):
                    raise bad()
                if t.is_int:
                    w = _wrap_int(v, np.dtype(t.dtype))
                    if int(w) != v:
                        raise bad()
                    return w
                return t.dtype(v)
            raise bad()
        if isinstance(t, Array):
            if not isinstance(v, np.ndarray) or v.ndim != t.rank or v.dtype != t.elem.dtype:
                raise bad()
            return v
        return v  # tuples: not checked

    def check_result(self, t, v, fixed, where, loc):
        if isinstance(t, Scalar):
            ok = isinstance(v, np.generic) and v.dtype == t.dtype
        elif isinstance(t, Array):
            ok = isinstance(v, np.ndarray) and v.ndim == t.rank and v.dtype == t.elem.dtype
            if ok:
                for d, s in zip(t.shape, v.shape):
                    want = d if isinstance(d, int) else fixed.get(d)
                    if want is not None and want != s:
                        raise _err(f"The {where} returned a value of shape {type_name(v, sizes=True)}, but its "
                                   f"declared return type is {t}, with {d} = {want}.", loc)
        else:
            return
        if not ok:
            raise _err(f"The {where} returned a value of type {type_name(v, sizes=True)}, but its "
                       f"declared return type is {t}.", loc)

    # ---- simple expressions ----

    def e_atom(self, e, env, loc):
        return (self.atom(e.x, env, loc),)

    def e_binop(self, e, env, loc):
        return (_binop(e.op, self.atom(e.x, env, loc), self.atom(e.y, env, loc), loc),)

    def e_unop(self, e, env, loc):
        return (_unop(e.op, self.atom(e.x, env, loc), loc),)

    def prim(self, fn, loc):
        f = self.prims.get(fn)
        if f is None:
            f = _make_prim(fn)
            if f is None:
                raise _err(f"Unknown prelude function {fn}.", loc)
            self.prims[fn] = f
        return f

    def e_prim(self, e, env, loc):
        return (self.prim(e.fn, loc)([self.atom(a, env, loc) for a in e.args], loc),)

    def e_apply(self, e, env, loc):
        f = self.funs.get(e.fn)
        if f is None:
            raise _err(f"Unknown function {e.fn}.", loc)
        return self.call(f, [self.atom(a, env, loc) for a in e.args], loc)

    def e_if(self, e, env, loc):
        c = self.atom(e.cond, env, loc)
        return self.body(e.then if c else e.else_, dict(env))

    def e_index(self, e, env, loc):
        arr = self.atom(e.arr, env, loc)
        key = self.checked_index_key(e.idxs, np.shape(arr), env, loc)
        if len(key) == 1:
            return (arr[key[0]],)
        return (arr[tuple(key)],)

    def index_key(self, idxs, shape, env, loc, batched=False):
        """The key of an Index's or Update's indices on an array of `shape`: per index, its Python slice or its
        value; and whether every slice is valid and, unless the values are `batched` (arrays), every index
        within its dimension."""
        if len(idxs) > len(shape):
            raise _err(f"Too many indices ({len(idxs)}) for array of shape {_shape_str(shape)}.", loc)
        key = []
        ok = True
        for i, w in zip(idxs, shape):
            if type(i) is S.DimSlice:
                k = self.dim_slice(i, w, env, loc)
                if k is None:
                    ok = False
            else:
                k = self.atom(i, env, loc)
                if not batched and not 0 <= k < w:
                    ok = False
            key.append(k)
        return key, ok

    def checked_index_key(self, idxs, shape, env, loc):
        """The key of `index_key`, where every slice is valid and every index within its dimension (else an
        error)."""
        key, ok = self.index_key(idxs, shape, env, loc)
        if not ok:
            raise _err(_oob_message(self.index_parts(idxs, env, loc), shape), loc)
        return key

    def dim_slice(self, d, w, env, loc):
        """The Python slice for DimSlice d on a dimension of length w, or None if invalid."""
        i, j, s = (int(self.atom(a, env, loc)) for a in (d.start, d.end, d.stride))
        n = _slice_length(i, j, s, w)
        if n is None or n != self.atom(d.size, env, loc):
            return None
        return _py_slice(i, n, s)

    def index_parts(self, idxs, env, loc, pick=None):
        """The indices and slices of an Index as its error message shows them (`pick` selects one
        element of batched indices)."""
        parts = []
        for i in idxs:
            if type(i) is S.DimSlice:
                parts.append(_slice_text(i, *(int(self.atom(a, env, loc)) for a in (i.start, i.end, i.stride))))
            else:
                v = self.atom(i, env, loc)
                parts.append(v if pick is None or np.ndim(v) == 0 else v[pick])
        return parts

    def size(self, a, env, loc, what):
        n = self.atom(a, env, loc)
        if n < 0:
            raise _err(f"Negative size {int(n)} in {what}.", loc)
        return int(n)

    def checked_size(self, e, env, loc, what):
        """An iota's or a replicate's length: a negative size is empty where its check is off (S.Replicate)."""
        if e.checked is not None and not self.atom(e.checked, env, loc):
            return max(int(self.atom(e.n, env, loc)), 0)
        return self.size(e.n, env, loc, what)

    def check_alloc(self, shape, dtype, loc, what):
        nbytes = np.dtype(dtype).itemsize
        for d in shape:
            nbytes *= int(d)
        if nbytes > MAX_ARRAY_BYTES:
            raise _err(f"Out of memory: {what} would make an array of shape {_shape_str(shape)} "
                       f"({nbytes} bytes; the interpreter's limit is {MAX_ARRAY_BYTES}).", loc)

    def e_iota(self, e, env, loc):
        n = self.checked_size(e, env, loc, "iota")
        self.check_alloc((n,), e.elem.dtype, loc, "iota")
        return (np.arange(n, dtype=e.elem.dtype),)

    def e_replicate(self, e, env, loc):
        n = self.checked_size(e, env, loc, "replicate")
        x = self.atom(e.x, env, loc)
        self.check_alloc((n,) + np.shape(x), x.dtype, loc, "replicate")
        if isinstance(x, np.ndarray):
            return (np.repeat(x[np.newaxis], n, axis=0),)
        return (np.full(n, x, dtype=x.dtype),)

    # ---- arrays: update, literals, concat, rotate, reshape, scatter ----

    def array(self, a, env, loc, what):
        v = self.atom(a, env, loc)
        if not isinstance(v, np.ndarray) or v.ndim == 0:
            raise _err(f"The operand {a} of {what} is not an array: it has type {type_name(v)}.", loc)
        return v

    def e_update(self, e, env, loc):
        arr = self.array(e.arr, env, loc, "an update")
        v = self.atom(e.value, env, loc)
        shape = arr.shape
        idxs = self.checked_index_key(e.idxs, shape, env, loc)
        row = np.shape(arr[tuple(idxs)])
        if np.shape(v) != row:
            replaced = f"the slice of {e.arr} has" if any(type(i) is S.DimSlice for i in e.idxs) else \
                f"{e.arr} has rows of"
            raise _err(f"Size mismatch in update: the new value has shape {_shape_str(np.shape(v))}, but "
                       f"{replaced} shape {_shape_str(row)} (shape {_shape_str(shape)}).", loc)
        if v.dtype != arr.dtype:
            raise _err(f"An update writes a value of type {type_name(v)} into {e.arr}, of type "
                       f"{type_name(arr)}.", loc)
        out = arr.copy()
        out[tuple(idxs)] = v
        return (out,)

    def e_tuning_param(self, e, env, loc):
        return (self.atom(e.default, env, loc),)

    def e_assert(self, e, env, loc):
        if not self.atom(e.cond, env, loc):
            raise _err(e.message.format(*(int(self.atom(a, env, loc)) for a in e.values)), loc)
        return ()

    def e_arraylit(self, e, env, loc):
        vals = [self.atom(a, env, loc) for a in e.elems]
        t = e.type
        dt = np.dtype(t.elem.dtype)
        if not vals:
            return (self.empty_result(t.row(), env),)
        first = vals[0]
        for v in vals:
            if np.shape(v) != np.shape(first) or v.dtype != dt:
                raise _err("The elements of an array literal have different types: "
                           + " and ".join(sorted({type_name(x, sizes=True) for x in vals})) + ".", loc)
        if np.ndim(first) + 1 != t.rank:
            raise _err(f"An array literal of type {t} has elements of type {type_name(first, sizes=True)}.", loc)
        if isinstance(first, np.ndarray):
            return (np.stack(vals),)
        return (np.array(vals, dtype=dt),)

    def e_concat(self, e, env, loc):
        vals = [self.array(a, env, loc, "concat") for a in e.arrs]
        size = int(self.atom(e.size, env, loc))
        rows = {v.shape[1:] for v in vals}
        types = {v.dtype for v in vals}
        if len(rows) > 1 or len(types) > 1:
            raise _err("Size mismatch in concat: the arrays have types "
                       + ", ".join(type_name(v, sizes=True) for v in vals) + ".", loc)
        total = sum(v.shape[0] for v in vals)
        if total != size:
            raise _err("Size mismatch in concat: arrays of lengths "
                       + " and ".join(str(v.shape[0]) for v in vals)
                       + f" give {total} elements, but the result's size is {size}.", loc)
        return (np.concatenate(vals, axis=0),)

    def e_rotate(self, e, env, loc):
        arr = self.array(e.arr, env, loc, "rotate")
        n = arr.shape[0]
        if n == 0:
            return (arr,)
        k = int(self.atom(e.amount, env, loc)) % n
        if k == 0:
            return (arr,)
        return (np.concatenate((arr[k:], arr[:k]), axis=0),)

    def e_reshape(self, e, env, loc):
        arr = self.array(e.arr, env, loc, "a reshape")
        shape = tuple(int(self.atom(a, env, loc)) for a in e.shape)
        count = 1
        for d in shape:
            count *= d
        if any(d < 0 for d in shape) or count != arr.size:
            raise _err(f"Cannot reshape array of shape {_shape_str(arr.shape)} to array of shape "
                       f"{_shape_str(shape)}.", loc)
        return (arr.reshape(shape),)

    def e_hist(self, e, env, loc):
        dest = self.array(e.dest, env, loc, "reduce_by_index")
        idxs = self.array(e.idxs, env, loc, "reduce_by_index")
        vals = self.array(e.vals, env, loc, "reduce_by_index")
        if vals.shape[0] != idxs.shape[0]:
            raise _err(f"Size mismatch in reduce_by_index: {idxs.shape[0]} indices ({e.idxs}) but {vals.shape[0]} "
                       f"values ({e.vals}).", loc)
        out = dest.copy()
        run = self.runner(e.lam, env)
        for i, v in zip(idxs, vals):  # out-of-bounds indices are ignored
            if 0 <= i < out.shape[0]:
                out[i] = run([out[i], v])[0]
        return (out,)

    def e_scatter(self, e, env, loc):
        dest = self.array(e.dest, env, loc, "scatter")
        idxs = self.array(e.idxs, env, loc, "scatter")
        vals = self.array(e.vals, env, loc, "scatter")
        if idxs.ndim != 1 or idxs.dtype.kind not in "iu":
            raise _err(f"The indices of a scatter must be a one-dimensional integer array, but {e.idxs} has "
                       f"type {type_name(idxs, sizes=True)}.", loc)
        if vals.shape[0] != idxs.shape[0]:
            raise _err(f"Size mismatch in scatter: {idxs.shape[0]} indices ({e.idxs}) but {vals.shape[0]} "
                       f"values ({e.vals}).", loc)
        if vals.shape[1:] != dest.shape[1:] or vals.dtype != dest.dtype:
            raise _err(f"Size mismatch in scatter: the values {e.vals}, of type {type_name(vals, sizes=True)}, "
                       f"do not fit the rows of {e.dest}, of type {type_name(dest, sizes=True)}.", loc)
        out = dest.copy()
        n = dest.shape[0]
        ok = (idxs >= 0) & (idxs < n)
        where, what = idxs[ok], vals[ok]
        if len(where):
            # The last write to an index wins: keep each index's last occurrence.
            _, first_rev = np.unique(where[::-1], return_index=True)
            keep = len(where) - 1 - first_rev
            out[where[keep]] = what[keep]
        return (out,)

    def e_rearrange(self, e, env, loc):
        arr = self.atom(e.arr, env, loc)
        perm = tuple(e.perm)
        if sorted(perm) != list(range(len(perm))) or len(perm) > np.ndim(arr):
            raise _err(f"Invalid permutation {perm} for an array of rank {np.ndim(arr)}.", loc)
        return (np.transpose(arr, perm + tuple(range(len(perm), arr.ndim))),)

    # ---- loops ----

    def loop_info(self, e):
        hit = self.loops.get(id(e))
        if hit is None:
            info = _LoopInfo()
            bodies = (e.body,) + ((e.form.cond,) if isinstance(e.form, S.WhileLoop) else ())
            info.bound = {v.name for b in bodies for s in b.stms for v in s.pat}
            info.specs = []
            for p in e.params:
                t = p.type
                if isinstance(t, Array):
                    info.specs.append((p, t.rank, np.dtype(t.elem.dtype), t.shape))
                else:
                    info.specs.append((p, 0, np.dtype(t.dtype), ()))
            info.size_params = frozenset(e.size_params)
            hit = self.loops[id(e)] = (e, info)
        return hit[1]

    def bind_loop(self, e, info, vals, lenv, env, loc, when):
        """Bind the loop parameters to `vals` in lenv, checking them against their types, and the size
        parameters to the sizes they have; return the sizes (name -> int)."""
        if len(vals) != len(info.specs):
            raise _err(f"The loop has {len(info.specs)} parameters, but {when} gives {len(vals)} values.", loc)
        sizes = {}
        for (p, rank, dt, dims), v in zip(info.specs, vals):
            if rank == 0:
                if np.ndim(v) != 0 or v.dtype != dt:
                    raise _err(f"Loop parameter {p.name} has type {p.type}, but {when} gives it a value of "
                               f"type {type_name(v, sizes=True)}.", loc)
            else:
                if not isinstance(v, np.ndarray) or v.ndim != rank or v.dtype != dt:
                    raise _err(f"Loop parameter {p.name} has type {p.type}, but {when} gives it a value of "
                               f"type {type_name(v, sizes=True)}.", loc)
                for d, n in zip(dims, v.shape):
                    if type(d) is int:
                        if d != n:
                            raise _err(f"Size mismatch in loop: parameter {p.name} has type {p.type}, but "
                                       f"{when} gives it a value of shape {_shape_str(v.shape)}.", loc)
                    elif d in info.size_params:
                        had = sizes.get(d)
                        if had is None:
                            sizes[d] = (n, p.name)
                        elif had[0] != n:
                            raise _err(f"Size mismatch in loop: size {d} is {had[0]} (from parameter {had[1]}), "
                                       f"but parameter {p.name} has {d} = {n} ({when}).", loc)
                    else:
                        outer = env.get(d)
                        if outer is not None and np.ndim(outer) == 0 and int(outer) != n:
                            raise _err(f"Size mismatch in loop: parameter {p.name} has type {p.type}, with "
                                       f"{d} = {int(outer)}, but {when} gives it a value with {d} = {n} "
                                       f"(shape {_shape_str(v.shape)}).", loc)
            lenv[p.name] = v
        for d in e.size_params:
            if d not in sizes:
                raise _err(f"Size parameter {d} of the loop is not the size of any loop parameter.", loc)
            lenv[d] = np.int64(sizes[d][0])
        return sizes

    def e_loop(self, e, env, loc):
        info = self.loop_info(e)
        vals = tuple(self.atom(a, env, loc) for a in e.init)
        lenv = dict(env)
        shadow = [(n, env[n]) for n in info.bound if n in env]
        body = self.body
        if isinstance(e.form, S.ForLoop):
            count = int(self.atom(e.form.bound, env, loc))
            ctype = e.form.i.type.dtype
            iname = e.form.i.name
            when = "the initial value"
            for k in range(count):
                for n, v in shadow:
                    lenv[n] = v
                self.bind_loop(e, info, vals, lenv, env, loc, when)
                lenv[iname] = ctype(k)
                vals = body(e.body, lenv)
                when = f"iteration {k}"
        else:
            cond = e.form.cond
            when = "the initial value"
            k = 0
            while True:
                for n, v in shadow:
                    lenv[n] = v
                self.bind_loop(e, info, vals, lenv, env, loc, when)
                c = body(cond, lenv)
                if len(c) != 1 or np.ndim(c[0]) != 0 or c[0].dtype != np.bool_:
                    raise _err("The condition of a while loop must give one bool, but gives "
                               + ", ".join(type_name(x, sizes=True) for x in c) + ".", loc)
                if not c[0]:
                    break
                vals = body(e.body, lenv)
                when = f"iteration {k}"
                k += 1
        sizes = self.bind_loop(e, info, vals, lenv, env, loc, when)
        return tuple(np.int64(sizes[d][0]) for d in e.size_params) + tuple(vals)

    def e_filter(self, e, env, loc):
        n, arrs = self.soac_arrays(e, env, loc, "filter")
        if len(e.lam.ret) != 1:
            raise _err(f"The predicate of a filter returns {len(e.lam.ret)} values.", loc)
        (keep,) = self.map_values(e.lam, arrs, n, env, loc)
        if keep.dtype != np.bool_:
            raise _err(f"The predicate of a filter returns {type_name(keep[0]) if n else keep.dtype}, not bool.",
                       loc)
        return (np.int64(np.count_nonzero(keep)),) + tuple(a[keep] for a in arrs)

    # ---- lambdas ----

    def soac_arrays(self, e, env, loc, what):
        n = self.size(e.width, env, loc, what)
        arrs = []
        for a in e.arrs:
            v = self.atom(a, env, loc)
            if not isinstance(v, np.ndarray) or v.ndim == 0 or v.shape[0] != n:
                raise _err(f"Size mismatch in {what}: its width is {n}, but {a.name} has type "
                           f"{type_name(v, sizes=True)}.", loc)
            arrs.append(v)
        return n, arrs

    def check_lam_arity(self, lam, nargs, what, loc):
        if len(lam.params) != nargs:
            raise _err(f"The lambda of {what} takes {len(lam.params)} parameters, but gets {nargs}.", loc)

    def empty_result(self, t, env):
        shape = []
        for d in (t.shape if isinstance(t, Array) else ()):
            v = d if isinstance(d, int) else env.get(d, 0)
            # a size that no iteration computed may be one that would have failed (0..<-1): no element has it
            shape.append(max(int(v), 0) if not isinstance(v, np.ndarray) else 0)
        dt = t.elem.dtype if isinstance(t, Array) else t.dtype
        return np.zeros([0] + shape, dtype=dt)

    def check_lam_params(self, params, vals, rows, env, loc, what):
        """Check the values that lambda parameters receive (the rows of arrays when `rows`, else the
        values themselves) against the parameters' types: element type, rank, and the sizes that are
        constants or bound outside (once per SOAC, as all rows have one shape)."""
        for p, v in zip(params, vals):
            t = p.type
            shape = np.shape(v)[1:] if rows else np.shape(v)
            if isinstance(t, Array):
                ok = len(shape) == t.rank and v.dtype == t.elem.dtype
            elif isinstance(t, Scalar):
                ok = len(shape) == 0 and v.dtype == t.dtype
            else:
                continue
            if not ok:
                got = _shape_str(shape) + type_name(v.dtype.type(0))
                raise _err(f"The lambda of {what} takes a parameter {p.name} of type {t}, but gets values "
                           f"of type {got}.", loc)
            if rows and len(v) == 0:
                continue  # no row is ever bound: sizes that no iteration computed cannot be compared
            for d, m in zip(t.shape if isinstance(t, Array) else (), shape):
                want = d if type(d) is int else env.get(d)
                if want is not None and np.ndim(want) == 0 and int(want) != m:
                    raise _err(f"Size mismatch in {what}: the lambda's parameter {p.name} has type {t}"
                               + (f", with {d} = {int(want)}" if type(d) is not int else "")
                               + f", but gets values of shape {_shape_str(shape)}.", loc)

    def map_values(self, lam, arrs, n, env, loc):
        """The arrays `map lam arrs`, one per lambda result."""
        self.check_lam_arity(lam, len(arrs), "map", loc)
        self.check_lam_params(lam.params, arrs, True, env, loc, "map")
        if n == 0:
            return [self.empty_result(t, env) for t in lam.ret]
        if self.lam_info(lam).vectorisable:
            return self.vapply(lam, arrs, [True] * len(arrs), n, env, loc)
        run = self.runner(lam, env)
        outs = [[] for _ in lam.body.result]
        for i in range(n):
            for o, r in zip(outs, run([a[i] for a in arrs])):
                o.append(r)
        return [self.stack(o, loc) for o in outs]

    def stack(self, vals, loc):
        first = vals[0]
        if isinstance(first, np.ndarray):
            if any(v.shape != first.shape for v in vals):
                raise _err("The lambda of a map returned arrays of different shapes: "
                           + ", ".join(sorted({type_name(v, sizes=True) for v in vals})) + ".", loc)
            return np.stack(vals)
        return np.array(vals, dtype=first.dtype)

    def e_map(self, e, env, loc):
        n, arrs = self.soac_arrays(e, env, loc, "map")
        return tuple(self.map_values(e.lam, arrs, n, env, loc))

    def e_redomap(self, e, env, loc):
        n, arrs = self.soac_arrays(e, env, loc, "redomap")
        k = len(e.neutral)
        mapped = self.map_values(e.map_lam, arrs, n, env, loc)
        ne = [self.atom(a, env, loc) for a in e.neutral]
        return tuple(self.reduce_values(e.red, ne, mapped[:k], n, env, loc)) + tuple(mapped[k:])

    def e_scanomap(self, e, env, loc):
        n, arrs = self.soac_arrays(e, env, loc, "scanomap")
        k = len(e.neutral)
        mapped = self.map_values(e.map_lam, arrs, n, env, loc)
        ne = [self.atom(a, env, loc) for a in e.neutral]
        scanned = self.scan_values(e.scan, ne, mapped[:k], n, env, loc)
        if e.post is not None:
            return tuple(self.map_values(e.post, scanned, n, env, loc))
        return tuple(scanned) + tuple(mapped[k:])

    def e_reduce(self, e, env, loc):
        n, arrs = self.soac_arrays(e, env, loc, "reduce")
        ne = [self.atom(a, env, loc) for a in e.neutral]
        return tuple(self.reduce_values(e.lam, ne, arrs, n, env, loc))

    def e_scan(self, e, env, loc):
        n, arrs = self.soac_arrays(e, env, loc, "scan")
        ne = [self.atom(a, env, loc) for a in e.neutral]
        return tuple(self.scan_values(e.lam, ne, arrs, n, env, loc))

    def check_operator(self, lam, ne, arrs, env, loc, what: str, article: str):
        """Checks a reduce's or scan's operator against its neutral elements and arrays; returns their count, the
        numpy ufuncs that apply the operator per component (None if it is not one) and whether it vectorises."""
        k = len(ne)
        self.check_lam_arity(lam, 2 * k, what, loc)
        if len(arrs) != k:
            raise _err(f"{article} with {k} neutral elements is applied to {len(arrs)} arrays.", loc)
        self.check_lam_params(lam.params[:k], ne, False, env, loc, what)
        self.check_lam_params(lam.params[k:], arrs, True, env, loc, what)
        info = self.lam_info(lam)
        return k, self.ufuncs(info.red_ops, arrs), info.vectorisable

    def reduce_values(self, lam, ne, arrs, n, env, loc):
        k, ufs, vectorisable = self.check_operator(lam, ne, arrs, env, loc, "reduce", "A reduction")
        if n == 0:
            return list(ne)
        if ufs is not None:
            return [uf(x, uf.reduce(a, dtype=a.dtype)) for uf, x, a in zip(ufs, ne, arrs)]
        if vectorisable:
            vals = list(arrs)
            m = n
            while m > 1:
                h = m // 2
                res = self.vapply(lam, [v[0:2 * h:2] for v in vals] + [v[1:2 * h:2] for v in vals],
                                  [True] * (2 * k), h, env, loc)
                if m % 2:
                    res = [np.concatenate([r, v[m - 1:]]) for r, v in zip(res, vals)]
                vals = res
                m = h + m % 2
            return self.runner(lam, env)(list(ne) + [v[0] for v in vals])
        run = self.runner(lam, env)
        acc = list(ne)
        for i in range(n):
            acc = run(acc + [a[i] for a in arrs])
        return acc

    def scan_values(self, lam, ne, arrs, n, env, loc):
        k, ufs, vectorisable = self.check_operator(lam, ne, arrs, env, loc, "scan", "A scan")
        if n == 0:
            return [np.zeros((0,) + np.shape(x), dtype=x.dtype) for x in ne]
        if ufs is not None:
            return [uf(x, uf.accumulate(a, dtype=a.dtype)) for uf, x, a in zip(ufs, ne, arrs)]
        if vectorisable:
            vals = list(arrs)
            d = 1
            while d < n:
                res = self.vapply(lam, [v[:n - d] for v in vals] + [v[d:] for v in vals],
                                  [True] * (2 * k), n - d, env, loc)
                vals = [np.concatenate([v[:d], r]) for v, r in zip(vals, res)]
                d *= 2
            return self.vapply(lam, list(ne) + vals, [False] * k + [True] * k, n, env, loc)
        run = self.runner(lam, env)
        acc = list(ne)
        outs = [[] for _ in range(k)]
        for i in range(n):
            acc = run(acc + [a[i] for a in arrs])
            for o, v in zip(outs, acc):
                o.append(v)
        return [self.stack(o, loc) for o in outs]


# The evaluation of each expression class: rule(interp, e, env, loc) -> the values it binds.
TABLE = nodes.Table(f"{__name__}.TABLE", "source", {
    S.AtomExp: _Interp.e_atom, S.BinOp: _Interp.e_binop, S.UnOp: _Interp.e_unop, S.PrimCall: _Interp.e_prim,
    S.Apply: _Interp.e_apply, S.If: _Interp.e_if, S.Index: _Interp.e_index, S.Iota: _Interp.e_iota,
    S.Replicate: _Interp.e_replicate, S.Rearrange: _Interp.e_rearrange, S.Map: _Interp.e_map,
    S.Reduce: _Interp.e_reduce, S.Scan: _Interp.e_scan, S.Redomap: _Interp.e_redomap,
    S.Scanomap: _Interp.e_scanomap, S.Update: _Interp.e_update, S.ArrayLit: _Interp.e_arraylit,
    S.Concat: _Interp.e_concat, S.Rotate: _Interp.e_rotate, S.Reshape: _Interp.e_reshape,
    S.Scatter: _Interp.e_scatter, S.Hist: _Interp.e_hist, S.Filter: _Interp.e_filter, S.Loop: _Interp.e_loop,
    S.Assert: _Interp.e_assert, S.TuningParam: _Interp.e_tuning_param,
})
