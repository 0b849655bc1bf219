"""Lowering expressions to A-normal form: names, operators, tuples, let and if (loops: ir.frontend.check.loops).

A mixin of `Checker` (ir.frontend.check.checker). `lower` dispatches on the syntax node to a `lower_*`
method, which checks the expression and emits the statements computing it, returning a value (`V`)
or a function value. Function values, application and lambdas are in ir.frontend.check.apply; array
expressions (literals, indexing, slices, updates) in ir.frontend.check.arrays; the builtins in ir.frontend.check.builtins.
"""

from incflat.ir.frontend import syntax as P
from incflat.ir import source as S
from incflat.ir.frontend.check.infer import (TV, SumTV, TArr, drop_dims, has_sum, is_arr, is_scalar, is_sum, leaves,
                                            nleaves, prune, resolve_scalar, require, unify)
from incflat.ir.frontend.check.prelude import (ARITH_OPS, ARRAY_REDUCTIONS, BUILTIN_ARITY, EQ_OPS, INT_OPS, LOGIC_OPS,
                                      NOT_SUPPORTED, ORD_OPS, SAFE_SIZE_OPS, prelude_lookup)
from incflat.ir.frontend.check.operators import BUILTIN_BINOPS, COMPOSITIONS
from incflat.ir.frontend.check.values import Arg, Ascribed, Closure, FunRecord, FunV, Named, Partial, V, atom_v, split_tuple, tuple_v
from incflat.ir.types import BOOL, I64, PRIM_NAMES, Array, Scalar, Tuple


class Lowering:
    """Mixin of Checker: expressions to values and A-normal-form statements."""

    # ---- expressions

    def lower(self, e, env):
        """Lower an expression to a value (V) or a function value (FunV)."""
        m = getattr(self, "lower_" + type(e).__name__, None)
        if m is None:  # pragma: no cover
            raise self.err("This expression is not supported by incflat.", e.loc)
        return m(e, env)

    def lower_val(self, e, env, what=None) -> V:
        x = self.lower(e, env)
        if isinstance(x, FunV):
            raise self.not_a_value(x, e.loc, what)
        return x

    def lower_atom(self, e, env, what=None) -> S.Atom:
        """Lower an expression that must be a scalar or an array (not a tuple)."""
        v = self.lower_val(e, env, what)
        t = prune(v.t)
        if isinstance(t, (Tuple, TArr, SumTV)):
            kind = "sum type value" if has_sum(t) and not isinstance(t, TArr) else \
                "record" if isinstance(t, Tuple) and t.is_record else "tuple"
            raise self.err(f"{what or 'This expression'} cannot be a {kind}, but has type {self.show(t)}.", e.loc)
        return v.atom

    def not_a_value(self, f, loc, what=None):
        desc = self.fun_desc(f)
        if isinstance(f, FunRecord):
            return self.err(f"{desc} cannot stand where {what or 'a value'} is expected: only its fields can be "
                            f"used (picked, matched by a pattern, or passed to a function).", loc)
        n = self.arity(f)
        tail = f"; it expects {n} more argument{'s' if n != 1 else ''}" if n else ""
        return self.err(f"{desc} is a function{tail}, but {what or 'a value'} is expected here. (A function "
                        f"can only be applied, or passed to map, reduce, scan, filter and the like.)",
                        loc)

    def fn_what(self, f):
        d = self.fun_desc(f)
        return d[0].lower() + d[1:] if d.startswith("This") else d

    def fun_desc(self, f):
        if isinstance(f, Named):
            if f.pre:
                return f'"{f.name}" applied to {len(f.pre)} argument{"s" if len(f.pre) != 1 else ""}'
            return f'"{f.name}"'
        if isinstance(f, Partial):
            return f"{self.fun_desc(f.fn)} applied to {len(f.pre)} argument{'s' if len(f.pre) != 1 else ''}"
        if isinstance(f, Closure):
            return {"lambda": "This lambda", "local": f'"{f.name}"', "inline": f'"{f.name}"'}[f.kind]
        if isinstance(f, Ascribed):
            return self.fun_desc(f.fn)
        if isinstance(f, FunRecord):
            return "This tuple (or record), which holds a function,"
        return "This operator section"

    def lower_AtomE(self, e, env):
        return e.atom

    def literal(self, kind, value, suffix, loc):
        if kind == "bool":
            return S.Const(bool(value), BOOL)
        if suffix is not None:
            t = Scalar(suffix)
            if kind == "int" and t.is_int:  # as Futhark: a suffixed literal wraps (`255i8` is -1)
                bits = 8 * t.prim.size
                value &= (1 << bits) - 1
                if t.is_signed and value >= 1 << (bits - 1):
                    value -= 1 << bits
                return S.Const(value, t)
        else:
            t = TV("float" if kind == "float" else "num")
        self.literals.append((t, value, loc))
        return S.Const(value, t)

    def lower_Lit(self, e, env):
        return atom_v(self.literal(e.kind, e.value, e.suffix, e.loc))

    def lower_Ident(self, e, env):
        name = e.name
        if name in env:
            v = env[name]
            self.check_use(v, e.loc, name)
            return v
        f = self.global_fun(name, e.loc)
        if isinstance(f, Named) and f.kind == "user" and self.inside_own_body(self.funs[name].decl, e):
            raise self.recursion_error(name, e.loc)
        if isinstance(f, Named) and self.arity(f) == 0:
            if self.size_constant(name):  # one value per scope, so that `[N]` written twice is one size
                key = ("constant", name)
                if key not in self.cse:
                    self.cse[key] = self.apply(f, [], e.loc)
                    self.dim_text[self.cse[key].atom.name] = name
                return self.cse[key]
            return self.apply(f, [], e.loc)
        return f

    def size_constant(self, name) -> bool:
        """Whether `name` is a top-level constant of type i64 (`def N = 19i64`), which may stand as a size."""
        sig = self.funs.get(name)
        return sig is not None and not sig.ptypes and not sig.size_params and prune(sig.ret) == I64

    def global_fun(self, name, loc):
        if name in self.funs:
            return Named(name, "user", loc)
        if name in BUILTIN_ARITY:
            return Named(name, "builtin", loc)
        if name == self.current:
            raise self.recursion_error(name, loc)
        if name in self.later:
            raise self.err(f'Unknown name "{name}": it is defined later (line {self.later[name].line}); '
                           f'a function must be defined before it is used.', loc)
        raise self.unknown(name, loc)

    def inside_own_body(self, decl, e) -> bool:
        """Whether the use e of decl's name is a node of decl's body: a function inlined at each call (checked
        there, when every function is known) that calls itself. (By identity: a parametric module's
        applications elaborate one text into several declarations, and `cat two two`'s `len` may use `two.len`.)"""
        body = getattr(decl, "body", None)
        if not (isinstance(body, P.Node) and body.loc.file == e.loc.file
                and body.span[0] <= e.span[0] and e.span[1] <= body.span[1]):
            return False
        if id(decl) not in self.body_nodes:
            self.body_nodes[id(decl)] = (decl, {id(n) for n in P.nodes_of(body)})
        return id(e) in self.body_nodes[id(decl)][1]

    def recursion_error(self, name, loc, through=()):
        via = f" (through {', '.join(chr(34) + n + chr(34) for n in through)})" if through else ""
        return self.err(f'"{name}" calls itself{via}: incflat does not support recursive functions (Futhark does, '
                        f'except mutual recursion); write the recursion as a loop.', loc)

    def unknown(self, name, loc):
        if name == "unsafe":
            return self.err('"unsafe" is not supported by incflat; use the attribute #[unsafe] instead.', loc)
        if name in NOT_SUPPORTED:
            return self.err(f'"{name}" is not supported by incflat.', loc)
        if name in PRIM_NAMES:
            return self.err(f'"{name}" is a type, not a value; its functions are written {name}.f, as in '
                            f'{name}.max.', loc)
        return self.err(f'Unknown name "{name}".', loc)

    def lower_QualIdent(self, e, env):
        parts = e.parts
        if parts[0] in env or parts[0] in self.funs or parts[0] in self.later:
            return self.lower_field_path(e, env)  # `r.a.b`: fields of a value, as in Futhark
        if len(parts) == 2 and parts[0] in PRIM_NAMES and parts[1] in ARRAY_REDUCTIONS:
            return Named(e.name, "prelude", e.loc)
        sig = prelude_lookup(parts)
        if sig is None:
            raise self.unknown(e.name, e.loc)
        ptypes, rt, const = sig
        if not ptypes:
            return atom_v(S.Const(const, rt))
        return Named(e.name, "prelude", e.loc)

    def lower_App(self, e, env):
        if isinstance(e.fn, P.HoleE):  # a hole applied is a hole (of the application's type)
            return self.lower(P.HoleE(e.fn.loc, e.span), env)
        f = self.lower(e.fn, env)
        args = [Arg(self.lower(a, env), a.loc) for a in e.args]
        if isinstance(f, V):
            if isinstance(e.fn, P.Ident):
                hint = ""
                if is_arr(prune(f.t)) and isinstance(e.args[0], P.ArrayE):
                    hint = f" (To index it, write {e.fn.name}[...] with no space before the bracket.)"
                raise self.err(f'"{e.fn.name}" is a value of type {self.show(f.t)}, not a function; it cannot '
                               f'be applied to arguments.{hint}', e.fn.loc)
            if isinstance(e.fn, P.Lit):
                raise self.err("A literal is not a function; it cannot be applied to arguments.", e.fn.loc)
            raise self.err(f"This expression has type {self.show(f.t)}, not a function; it cannot be applied "
                           f"to arguments.", e.fn.loc)
        return self.apply(f, args, e.loc)

    def lower_NegE(self, e, env):
        if isinstance(e.x, P.Lit) and e.x.kind != "bool":
            return atom_v(self.literal(e.x.kind, -e.x.value, e.x.suffix, e.loc))
        x = self.lower_val(e.x, env)
        if not is_scalar(x.t) or not require(x.t, "num"):
            raise self.err(f'Unary "-" needs a numeric operand, but got {self.show(x.t)}.', e.loc)
        return atom_v(self.emit(S.UnOp("neg", x.atom, prune(x.t)), prune(x.t), e.loc))

    def lower_NotE(self, e, env):
        x = self.lower_val(e.x, env)
        t = prune(x.t)
        if isinstance(t, Scalar) and t.name == "bool":
            op = "!"
        elif is_scalar(t) and require(t, "int"):
            op = "~"  # Futhark's `!` on an integer is its bitwise complement
        else:
            raise self.err(f'"!" needs an operand of type bool or an integer type, but got '
                           f'{self.show(x.t)}.', e.loc)
        return atom_v(self.emit(S.UnOp(op, x.atom, t), t, e.loc))

    def lower_BinOpE(self, e, env):
        # A loop down the left operands, not recursion: `x + x + ... + x` nests to the left as deep as it is long.
        if e.op in COMPOSITIONS and not self.user_operator(e.op):
            return self.lower_composition(e, env)
        spine = []
        while isinstance(e, P.BinOpE) and not (e.op in COMPOSITIONS and not self.user_operator(e.op)):
            spine.append(e)
            e = e.lhs
        x = self.lower(e, env)
        for e in reversed(spine):
            if isinstance(x, FunV):
                raise self.not_a_value(x, e.lhs.loc)
            if e.op in env:  # an operator a parameter binds (`def f (+) x y = x + y`)
                x = self.apply(env[e.op], [Arg(x, e.lhs.loc), Arg(self.lower_val(e.rhs, env), e.rhs.loc)], e.loc)
            elif e.op in LOGIC_OPS:
                x = self.short_circuit(e, x, env)
            else:
                x = self.binop(e.op, x, self.lower_val(e.rhs, env), e.loc)
        return x

    def short_circuit(self, e, x: V, env) -> V:
        """`x && y` and `x || y` evaluate y only when needed: as `if`, unless y cannot fail."""
        consumed = dict(self.consumed)
        saved = self.push()
        y = self.lower_val(e.rhs, env)
        y_stms = self.pop(saved)
        if all(_cannot_fail(s.exp) for s in y_stms):
            self.stms.extend(y_stms)
            return self.binop(e.op, x, y, e.loc)
        for operand, loc in ((x, e.lhs.loc), (y, e.rhs.loc)):
            if not is_scalar(operand.t) or unify(operand.t, BOOL):
                raise self.err(f'The operator "{e.op}" needs operands of bool, but got {self.show(operand.t)}.', loc)
        self.consumed.update(consumed)
        known = atom_v(S.Const(e.op == "||", BOOL))
        if e.op == "&&":
            return self.make_if(x.atom, y_stms, y, [], known, set(), set(), e.loc)
        return self.make_if(x.atom, [], known, y_stms, y, set(), set(), e.loc)

    def binop(self, op, x: V, y: V, loc, hint=None) -> V:
        if op in ("|>", "<|"):  # only reachable through a section
            raise self.err(f'The operator "{op}" cannot be used in a section.', loc)
        if op not in BUILTIN_BINOPS or self.user_operator(op):
            return self.other_binop(op, x, y, loc)
        if op == "++":
            return self.concat([Arg(x, loc), Arg(y, loc)], loc)
        tx, ty = prune(x.t), prune(y.t)
        if any(isinstance(t, SumTV) or is_sum(t) for t in (tx, ty)):
            return self.sum_binop(op, x, y, loc)
        if op in EQ_OPS and isinstance(tx, Tuple) and isinstance(ty, Tuple):
            return self.tuple_eq(op, x, y, loc)
        if op in EQ_OPS and is_arr(tx) and is_arr(ty):
            return self.array_eq(op, x, y, loc)
        if not is_scalar(tx) or not is_scalar(ty):
            bad = tx if not is_scalar(tx) else ty
            if isinstance(bad, Tuple):
                raise self.err(f'The operator "{op}" cannot be applied to {"records" if bad.is_record else "tuples"} '
                               f'(operand of type {self.show(bad)}).', loc)
            raise self.err(f'The operator "{op}" cannot be applied to arrays (operand of type '
                           f'{self.show(bad)}); use map.', loc)
        if unify(tx, ty):
            raise self.err(f'The operands of "{op}" have different types: {self.show(tx)} and '
                           f'{self.show(ty)}.', loc)
        if op in ARITH_OPS or op in ORD_OPS:
            cls, need = "num", "a numeric type"
        elif op in INT_OPS:
            cls, need = "int", "an integer type"
        elif op in LOGIC_OPS:
            cls, need = "bool", "bool"
        else:
            cls, need = "prim", "a primitive type"
        if not require(tx, cls):
            raise self.err(f'The operator "{op}" needs operands of {need}, but got {self.show(tx)}.', loc)
        rt = BOOL if (op in ORD_OPS or op in EQ_OPS or op in LOGIC_OPS) else prune(tx)
        if op == ">>>":
            return self.logical_shift(x, y, loc)
        return atom_v(self.emit(S.BinOp(op, x.atom, y.atom, rt), rt, loc, hint))

    def logical_shift(self, x: V, y: V, loc) -> V:
        """`x >>> y`: `>>` on the unsigned type of the same width (on a signed type `>>` is arithmetic)."""
        t = resolve_scalar(x.t)
        if not t.is_signed:
            return atom_v(self.emit(S.BinOp(">>", x.atom, y.atom, t), t, loc))
        u = Scalar("u" + t.name[1:])
        xu, yu = (self.emit(S.PrimCall(f"{u.name}.{t.name}", (a.atom,), u), u, loc) for a in (x, y))
        shifted = self.emit(S.BinOp(">>", xu, yu, u), u, loc)
        return atom_v(self.emit(S.PrimCall(f"{t.name}.{u.name}", (shifted,), t), t, loc))

    def tuple_eq(self, op, x, y, loc):
        if unify(x.t, y.t):
            raise self.err(f'The operands of "{op}" have different types: {self.show(x.t)} and '
                           f'{self.show(y.t)}.', loc)
        res = None
        for a, b in zip(split_tuple(x), split_tuple(y)):
            if not a.atoms:  # () == ()
                continue
            r = self.binop("==", a, b, loc)
            res = r if res is None else self.binop("&&", res, r, loc)
        if res is None:
            res = atom_v(S.Const(True, BOOL))
        if op == "!=":
            res = atom_v(self.emit(S.UnOp("!", res.atom, BOOL), BOOL, loc))
        return res

    def lower_TupleE(self, e, env):
        vals = [self.lower(x, env) for x in e.elems]
        if any(isinstance(v, FunV) for v in vals):
            return FunRecord(tuple(str(k) for k in range(len(vals))), tuple(vals), e.loc)
        return tuple_v(vals)

    def lower_AscribeE(self, e, env):
        if isinstance(e.x, P.ArrayE) and not e.x.elems and not e.coerce:
            return self.empty_array(e, env)
        x = self.lower_val(e.x, env)
        if not e.coerce:
            def dimfn(kind, v, loc):
                return self.local_type_dim(kind, v, loc, env)
            ann = self.resolve_type(e.type, dimfn)
            x = self.empty_as(x, ann, e.loc)  # (`rep x : [n]t`, `??? : [n]t`)
            r = unify(ann, x.t)
            if r:
                raise self.err(f"The expression has {self.what(r)} {self.show(x.t)}, but is annotated as "
                               f"{self.show(ann)}.", e.loc)
            return x
        # x :> t : the same type with (perhaps) other sizes, checked at run time
        ann = self.resolve_type(e.type, lambda kind, v, loc: self.local_type_dim(kind, v, loc, env))
        x = self.empty_as(x, ann, e.loc)
        r = unify(ann, x.t)
        if r == "type":
            raise self.err(f"Cannot coerce a value of type {self.show(x.t)} to {self.show(ann)}: a size coercion "
                           f"can only change sizes.", e.loc)
        if r is None:
            return x
        return self.coerce(x, self.fill_any(ann, x.t), e.loc)

    def coerce(self, x: V, t, loc) -> V:
        """x with the type t, which has other sizes: each array leaf is checked at run time."""
        atoms = []
        for a, lt in zip(x.atoms, leaves(t)):
            if prune(a.type) == prune(lt) or not isinstance(a, S.Var):
                atoms.append(a)
            else:
                atoms.append(self.bind(S.AtomExp(a), lt, loc, "coerced"))
                self.alias_to(atoms[-1:], [a])
        return V(t, tuple(atoms))

    def lower_ParamE(self, e, env):
        """`#[param(NAME)] e`: e's value, unless the compiled program's tuning parameter NAME is set."""
        x = self.lower_val(e.body, env)
        if not is_scalar(x.t) or unify(x.t, I64):
            raise self.err(f"The attribute #[param({e.name})] can only be attached to an expression of type i64, "
                           f"but this has type {self.show(prune(x.t))}.", e.loc)
        return atom_v(self.bind(S.TuningParam(e.name, x.atom), I64, e.loc, e.name))

    # ---- let, if

    def lower_LetE(self, e, env):
        env = dict(env)
        while True:  # a loop rather than recursion: let chains can be long
            if isinstance(e, P.LetE):
                n0 = len(self.stms)
                val = self.lower(e.rhs, env)
                q = e.pat.pat if isinstance(e.pat, P.PTyped) else e.pat
                self.check_dup_names([e.pat], "this pattern")
                if isinstance(q, P.PName):
                    val = self.rename_result(val, q.name, n0)
                sizes = {n: None for n, _ in e.sizes} if e.sizes else None
                if sizes is not None and not isinstance(e.pat, P.PTyped) and not self.pat_has_ann(e.pat):
                    raise self.err("The sizes bound by let [n] must be used in a type annotation of the "
                                   "pattern.", e.loc)
                self.bind_pattern(e.pat, val, env, env, f'value of "{q.name}"' if isinstance(q, P.PName)
                                  else "value bound here", sizes)
                if sizes:
                    for n, loc in e.sizes:
                        if sizes[n] is None:
                            raise self.err(f'The size "{n}" is not used in the pattern.', loc)
                        env[n] = atom_v(self.dim_atom(sizes[n]))
                e = e.body
            elif isinstance(e, P.LetFunE):
                env[e.name] = Closure(e.params, e.ret, e.rhs, dict(env), e.loc, "local", e.name,
                                      tuple(n for n, _ in e.sizes), tuple(n for n, _ in e.types))
                self.check_local_fun(env[e.name])
                e = e.body
            else:
                return self.lower(e, env)

    lower_LetFunE = lower_LetE

    @staticmethod
    def pat_has_ann(p):
        if isinstance(p, P.PTyped):
            return True
        if isinstance(p, P.PTuple):
            return any(Lowering.pat_has_ann(x) for x in p.elems)
        if isinstance(p, P.PRecord):
            return any(Lowering.pat_has_ann(x) for _, _, x in p.fields)
        if isinstance(p, P.PConstr):
            return any(Lowering.pat_has_ann(x) for x in p.args)
        return False

    def rename_result(self, val, name, n0):
        """`let y = e`: name the variable holding e's value after y (e.g. y_3), when e made it."""
        if not isinstance(val, V) or len(val.atoms) != 1 or len(self.stms) <= n0:
            return val
        a = val.atoms[0]
        last = self.stms[-1]
        if not isinstance(a, S.Var) or len(last.pat) != 1 or last.pat[0] != a:
            return val
        new = S.Var(self.fresh(name), a.type)
        self.dim_text[new.name] = name
        self.stms[-1] = S.Stm((new,), last.exp, last.loc)
        for k, v in list(self.cse.items()):
            if v == a:
                self.cse[k] = new
        if a.name in self.defs:
            self.defs[new.name] = self.defs.pop(a.name)
        if a.name in self.alias:
            self.alias[new.name] = (self.alias.pop(a.name) - {a.name}) | {new.name}
        if a.name in self.empty_literal_atoms:
            self.empty_literal_atoms.add(new.name)
        if a.name in self.hole_atoms:
            self.hole_atoms.add(new.name)
        if a.name in self.rep_values:
            self.rep_values[new.name] = self.rep_values[a.name]
        return V(val.t, (new,))

    def check_local_fun(self, c: Closure):
        """A local function whose parameter types are all written is checked where it is defined (its
        uses inline it again), so that an unused ill-typed one is still rejected. An anonymous size (`[]`)
        in a parameter type is, as in Futhark, inferred from the function's uses (`(x: []f32)` passed where
        `[5]f32` is expected makes it [5]), so such a function is checked where applied, as one whose
        parameter types are not written; so is one with type parameters, as a top-level one."""
        if c.types or not all(P.pat_is_typed(p) for p in c.params):
            return
        saved = self.push()
        saved_lits, saved_sums = len(self.literals), len(self.open_sums)
        c0 = dict(self.consumed)
        own = {n: self.fresh(n) for n in c.sizes}  # the function's size parameters, for the check
        anonymous = False

        def dimfn(kind, v, loc):
            nonlocal anonymous
            if kind == "any":
                anonymous = True
                return self.fresh("d")
            if kind == "name" and v in own:
                return own[v]
            return self.local_type_dim(kind, v, loc, c.env)
        try:
            args = []
            for p in c.params:
                t = self.pat_type(p, c.name, dimfn)
                args.append(Arg(self.param_vars(p, t, keep_names=False), p.loc))
            if not anonymous:
                self.apply(c, args, c.loc)
        finally:
            self.pop(saved)
            del self.literals[saved_lits:]
            del self.open_sums[saved_sums:]  # (what the trial leaves open, the uses decide)
            self.consumed = c0

    def lower_IfE(self, e, env):
        c = self.lower_val(e.cond, env)
        if not is_scalar(c.t) or unify(c.t, BOOL):
            raise self.err(f'The condition of "if" must have type bool, but has type {self.show(c.t)}.',
                           e.cond.loc)
        c0 = dict(self.consumed)
        saved = self.push()
        a = self.lower(e.then, env)
        then_stms = self.pop(saved)
        c1, self.consumed = self.consumed, dict(c0)
        saved = self.push()
        b = self.lower(e.else_, env)
        else_stms = self.pop(saved)
        self.consumed.update(c1)
        return self.join_branches(c.atom, then_stms, a, else_stms, b, 'The branches of "if"', e.loc)

    def join_branches(self, cond, then_stms, a, else_stms, b, what, loc):
        """The If of two branches lowered (statements and value); `what` names them in errors (`if`'s, or a
        `match`'s cases)."""
        if isinstance(a, FunV) or isinstance(b, FunV):
            raise self.err(f'{what} cannot be functions.', loc)
        local_then = {v.name for s in then_stms for v in s.pat}
        local_else = {v.name for s in else_stms for v in s.pat}
        for side in ("then", "else"):  # an empty literal `[]` takes the rows of the other branch
            mine, other, stms, other_local = (a, b, then_stms, local_else) if side == "then" else \
                (b, a, else_stms, local_then)
            saved = self.push()
            self.stms.extend(stms)
            new = self.empty_as(mine, other.t, loc, other_local)
            stms = self.pop(saved)
            if side == "then":
                a, then_stms = new, stms
            else:
                b, else_stms = new, stms
        r = unify(a.t, b.t)
        if r == "type":
            raise self.err(f'{what} have different types: {self.show(a.t)} and {self.show(b.t)}.', loc)
        lt = {v.name for s in then_stms for v in s.pat}
        le = {v.name for s in else_stms for v in s.pat}
        return self.make_if(cond, then_stms, a, else_stms, b, lt, le, loc)

    def export_dim(self, d, local, loc=None):
        """A dimension d named inside a nested body, as a dimension outside it (recomputed from
        outer variables when d was computed from them), or None when that is impossible."""
        if d is None or isinstance(d, int) or d not in local:
            return d
        if d in self.defs and self.defs[d][0] in SAFE_SIZE_OPS:
            op, x, y = self.defs[d]
            xs = self.export_atom(x, local, loc)
            ys = self.export_atom(y, local, loc)
            if xs is not None and ys is not None:
                return S.dim_of(self.size_op(op, xs, ys, loc))
        return None

    def dim_key(self, d, local):
        """What export_dim(d, local) would compute, without computing it (None: impossible)."""
        if d is None or isinstance(d, int) or d not in local:
            return d
        if d in self.defs and self.defs[d][0] in SAFE_SIZE_OPS:
            op, x, y = self.defs[d]
            kx = x.value if isinstance(x, S.Const) else self.dim_key(x.name, local)
            ky = y.value if isinstance(y, S.Const) else self.dim_key(y.name, local)
            if kx is not None and ky is not None:
                return (op, kx, ky)
        return None

    def export_atom(self, a, local, loc=None):
        if isinstance(a, S.Const):
            return a
        d = self.export_dim(a.name, local, loc)
        return None if d is None else self.dim_atom(d)

    def make_if(self, cond, then_stms, a, else_stms, b, lt, le, loc):
        """An If whose result sizes are those of both branches where they agree and are known
        outside, and existential sizes (extra i64 results bound first) elsewhere."""
        ext = {}  # (then dim, else dim) -> size name
        ext_order = []

        def dim(dt, de):
            if dt == de and dt not in lt and dt not in le:
                return dt
            kt = self.dim_key(dt, lt)
            if kt is not None and kt == self.dim_key(de, le):
                return self.export_dim(dt, lt, loc)
            key = (dt, de)
            if key not in ext:
                ext[key] = self.fresh("size")
                self.dim_text[ext[key]] = "?"
                ext_order.append(key)
            return ext[key]

        ta, tb = prune(a.t), prune(b.t)
        t = self.zip_dims(ta, tb, dim)
        then_res = tuple(self.dim_atom(k[0]) for k in ext_order) + a.atoms
        else_res = tuple(self.dim_atom(k[1]) for k in ext_order) + b.atoms
        types = (I64,) * len(ext_order) + tuple(leaves(t))
        names = [ext[k] for k in ext_order]
        pat = tuple(S.Var(n, I64) for n in names) + tuple(S.Var(self.fresh(None), lt_) for lt_ in leaves(t))
        self.stms.append(S.Stm(pat, S.If(cond, S.Body(tuple(then_stms), then_res),
                                         S.Body(tuple(else_stms), else_res), types), loc))
        for v, x, y in zip(pat[len(names):], a.atoms, b.atoms):
            self.alias_to([v], [x, y])
            if v.name in self.alias:  # (as Futhark: the result aliases nothing that a branch consumed)
                self.alias[v.name] = frozenset(r for r in self.alias[v.name] if r not in self.consumed)
        return V(t, pat[len(names):])

    def zip_dims(self, ta, tb, f):
        """ta with each dimension replaced by f(dim of ta, dim of tb) (same structure)."""
        ta, tb = prune(ta), prune(tb)
        if isinstance(ta, Array):
            return Array(ta.elem, tuple(f(x, y) for x, y in zip(ta.shape, tb.shape)))
        if isinstance(ta, TArr):
            return TArr(tuple(f(x, y) for x, y in zip(ta.shape, tb.shape)), self.zip_dims(ta.elem, tb.elem, f))
        if isinstance(ta, Tuple):
            return ta.with_elems(self.zip_dims(x, y, f) for x, y in zip(ta.elems, tb.elems))
        return ta

    # ---- loops

    def show_atom(self, a):
        if isinstance(a, S.Var):
            return self.dim_text.get(a.name, a.name)
        return str(a.value)

    def rebuild(self, t, leaf_types):
        """The checker type of structure t whose leaves are leaf_types."""
        it = iter(leaf_types)

        def go(t):
            t = prune(t)
            if isinstance(t, Tuple):
                return t.with_elems(go(x) for x in t.elems)
            if isinstance(t, TArr):
                ls = [next(it) for _ in range(nleaves(t.elem))]
                shape = ls[0].shape[:len(t.shape)]
                return TArr(shape, self.rebuild(t.elem, [drop_dims(x, len(t.shape)) for x in ls]))
            return next(it)
        return go(t)


def _cannot_fail(e) -> bool:
    """Whether evaluating e can neither fail nor be costly (arithmetic that cannot divide by zero)."""
    if isinstance(e, S.BinOp):
        return e.op not in ("/", "%", "//", "%%", "**")
    return isinstance(e, (S.AtomExp, S.UnOp, S.PrimCall))
