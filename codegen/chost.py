"""The C printer of the host IR (ir/host.py): the host code of a `--backend=opencl` program, which calls the
native runtime (codegen/native/host.h) where the Python printer (codegen/pyhost.py) calls ir/runtime.

The IR's values are Python's: host integers (`INT`) are unbounded there and int64_t here, which the sizes and
counts they hold fit; a primitive scalar is the C type of its prim, every operation on it cast back to that
type (numpy wraps at the type's width). A failure sets ctx->failed: each statement that calls the runtime is
followed by a jump to the enclosing guard's fallback or to the entry's exit, which releases its arrays.

What the printer does not support yet raises `Unsupported` naming it; `incflat compile --backend=opencl`
reports it in one line.
"""

from incflat.codegen.chost_values import C_TYPES, TYPE_ENUM, Unsupported, c_string, prim_function, scalar_literal
from incflat.codegen.emit import CEmitter
from incflat.ir import host as H
from incflat.ir.runtime.prims import PRIMS

FIELDS = {"group_size", "max_group_size", "num_groups", "local_mem_size", "default_tile_size", "global_mem_size"}
ARRAY = "struct incflat_array"
# Python's comparisons and the C operators of the same meaning on numbers
C_OPS = {"+": "+", "-": "-", "*": "*", "/": "/", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "==", "!=": "!=",
         "&": "&", "|": "|", "^": "^", "and": "&&", "or": "||"}
COMPARISONS = {"<", "<=", ">", ">=", "==", "!=", "and", "or"}

def _is_array(t) -> bool:
    return isinstance(t, H.ArrayType)


class EntryPrinter:
    """The C function of one entry point."""

    def __init__(self, d: H.Def, kernels: dict, params: dict, scalar_structs: dict, constants: list):
        self.d = d
        self.kernels, self.params, self.structs = kernels, params, scalar_structs
        self.constants = constants  # (C name, prim, values) of the program's constant arrays, shared
        self.types = dict(zip(d.params, d.types))
        self._collect(d.body)
        self.labels = ["done"]
        self.counter = 0
        self.out = CEmitter()

    def _collect(self, stms):
        for s in stms:
            if isinstance(s, H.Assign):
                self.types[s.target] = s.type
            elif isinstance(s, H.Bind):
                if s.unpack and not (isinstance(s.values[0], H.Call) and s.values[0].fn == "compact"):
                    raise Unsupported("a binding of several results of one call")
                self.types.update(zip(s.targets, s.types))
            elif isinstance(s, H.For):
                self.types[s.var] = s.prim
            for part in ("then", "else_", "body"):
                if getattr(s, part, None):
                    self._collect(getattr(s, part))

    def fresh(self, stem):
        self.counter += 1
        return f"{stem}_{self.counter}"

    # ---- types ----

    def type_of(self, e):
        if isinstance(e, H.Var):
            if e.name not in self.types:
                raise Unsupported(f"variable {e.name}")
            return self.types[e.name]
        if isinstance(e, H.Scalar):
            return e.prim
        if isinstance(e, H.Lit):
            if isinstance(e.value, bool):
                return "bool"
            if isinstance(e.value, int):
                return H.INT
            return "str"
        if isinstance(e, H.Cast):
            return e.prim
        if isinstance(e, (H.Field, H.Param, H.Stride, H.Offset)):
            return H.INT
        if isinstance(e, H.Shape):
            return H.INT if e.dim is not None else "shape"
        if isinstance(e, H.Op):
            if e.op in COMPARISONS:
                return "bool"
            return self._arith_type(e.op, self.type_of(e.x), self.type_of(e.y))
        if isinstance(e, H.Unary):
            return "bool" if e.op == "not " else self.type_of(e.x)
        if isinstance(e, H.Cond):
            return self._arith_type("?", self.type_of(e.then), self.type_of(e.otherwise))
        if isinstance(e, H.Method):
            return self.type_of(e.obj)
        if isinstance(e, H.Call):
            return self._call_type(e)
        raise Unsupported(f"the value {type(e).__name__}")

    @staticmethod
    def _arith_type(op, a, b):
        if a == b:
            return a
        if a == H.INT and b in PRIMS:
            return b
        if b == H.INT and a in PRIMS:
            return a
        raise Unsupported(f"an operation {op} on {a} and {b}")

    @staticmethod
    def _args(e: H.Call) -> tuple:
        """A call's arguments without the run's context (the runtime's array functions take it first)."""
        return e.args[1:] if e.args and e.args[0] == H.Var("ctx") else e.args

    def _call_type(self, e: H.Call):
        fn, args = e.fn, self._args(e)
        if fn == "ctx.scan_epoch":
            return H.INT
        if fn in ("int", "ceil_div", "ctx.size", "ctx.kernel_group_size", "ctx.fit_local", "groups_per_segment",
                  "segment_group_size", "thread_parts", "ctx.tile_size", "ctx.user_param"):
            return H.INT if fn != "ctx.user_param" else "i64"
        if fn == "float":
            return "f64"
        if fn in ("wrap", "int_pow"):
            return args[0].prim
        if fn == "prim_call":
            return args[1].prim
        if fn == "int_div":
            return self.type_of(args[0])
        if fn in ("max", "min"):
            t = self.type_of(args[0])
            for a in args[1:]:
                t = self._arith_type(fn, t, self.type_of(a))
            return t
        if fn == "to_host":
            t = self.type_of(args[0])
            return t.prim if _is_array(t) else t
        if fn == "index":
            t = self.type_of(args[0])
            idxs = args[1].items
            if len(idxs) == t.rank and not any(isinstance(i, H.Tuple) for i in idxs):
                return t.prim
            return H.ArrayType(t.prim, t.rank - sum(not isinstance(i, H.Tuple) for i in idxs))
        if fn in ("ctx.empty", "replicate"):
            shape, dtype = (args[0], args[1]) if fn == "ctx.empty" else (args[1], args[2])
            return H.ArrayType(dtype.prim, self._rank(shape))
        if fn == "reshape":
            return H.ArrayType(self.type_of(args[1]).prim, self._rank(args[0]))
        if fn in ("manifest", "coalesced", "rotate", "destination", "update", "update_many", "scatter"):
            return self.type_of(args[1] if fn == "rotate" else args[0])
        if fn == "iota":
            return H.ArrayType(args[1].prim, 1)
        if fn == "concat":
            return self.type_of(args[0].items[0])
        if fn == "array_literal":
            first = self.type_of(args[0].items[0])
            return H.ArrayType(args[1].prim, 1 + (first.rank if _is_array(first) else 0))
        if fn == "empty_in_region":
            return H.ArrayType(args[7].prim, self._rank(args[6]))
        if fn == "constant_array":
            return H.ArrayType(args[1].prim, 1)
        raise Unsupported(f"the runtime function {fn}")

    def _rank(self, shape) -> int:
        if isinstance(shape, H.Shape) and shape.dim is None:
            return self.type_of(shape.array).rank
        if isinstance(shape, (H.Tuple, H.List)):
            return len(shape.items)
        if isinstance(shape, H.Lit) and isinstance(shape.value, (tuple, list)):
            return len(shape.value)
        raise Unsupported(f"a shape {shape!r}")

    # ---- expressions ----

    def exp(self, e) -> str:
        if isinstance(e, H.Var):
            if e.name not in self.types:
                raise Unsupported(f"variable {e.name}")
            return f"v_{e.name}"
        if isinstance(e, H.Scalar):
            return scalar_literal(e.value, e.prim)
        if isinstance(e, H.Lit):
            if isinstance(e.value, bool):
                return "true" if e.value else "false"
            if isinstance(e.value, int):
                return f"INT64_C({e.value})" if -2 ** 63 < e.value < 2 ** 63 else self._unsupported_lit(e)
            if isinstance(e.value, str):
                return c_string(e.value)
            raise Unsupported(f"the literal {e.value!r}")
        if isinstance(e, H.Cast):
            return f"(({C_TYPES[e.prim]})({self.exp(e.value)}))"
        if isinstance(e, H.Field):
            if e.name not in FIELDS:
                raise Unsupported(f"the context's {e.name}")
            return f"ctx->{e.name}"
        if isinstance(e, H.Param):
            return f"ctx->values[{self.params[e.name]}]"
        if isinstance(e, H.Shape):
            if e.dim is None:
                raise Unsupported("a whole shape as a value")
            return f"{self.exp(e.array)}.shape[{e.dim}]"
        if isinstance(e, H.Stride):
            return f"{self.exp(e.array)}.strides[{e.dim}]"
        if isinstance(e, H.Offset):
            return f"{self.exp(e.array)}.offset"
        if isinstance(e, H.Op):
            return self._op(e)
        if isinstance(e, H.Unary):
            t = self.type_of(e)
            if e.op == "not ":
                return f"(!({self.exp(e.x)}))"
            inner = f"({e.op.strip()}({self.exp(e.x)}))"
            return inner if t == H.INT else f"(({C_TYPES[t]}){inner})"
        if isinstance(e, H.Cond):
            t = self.type_of(e)
            ct = "int64_t" if t == H.INT else C_TYPES.get(t)
            if ct is None:
                raise Unsupported(f"a conditional value of {t}")
            return f"(({self.exp(e.cond)}) ? ({ct})({self.exp(e.then)}) : ({ct})({self.exp(e.otherwise)}))"
        if isinstance(e, H.Method):
            if e.name != "permute":
                raise Unsupported(f"the array method {e.name}")
            perm = self._ints(e.args[0])
            return f"incflat_permute({self.exp(e.obj)}, {len(perm)}, (const int64_t[]){{{', '.join(perm)}}})"
        if isinstance(e, H.Call):
            return self._call(e)
        raise Unsupported(f"the value {type(e).__name__}")

    @staticmethod
    def _unsupported_lit(e):
        raise Unsupported(f"the integer {e.value} (beyond 64 bits)")

    def _op(self, e: H.Op) -> str:
        t = self.type_of(e)
        x, y = self.exp(e.x), self.exp(e.y)
        if e.op in COMPARISONS:
            return f"({x} {C_OPS[e.op]} {y})"
        if t == H.INT:
            helpers = {"//": "incflat_floordiv", "%": "incflat_floormod", "**": "incflat_ipow", "<<": "incflat_shl",
                       ">>": "incflat_shr"}
            if e.op in helpers:
                return f"{helpers[e.op]}({x}, {y})"
            if e.op == "/":
                raise Unsupported("a true division of host integers")
            return f"({x} {C_OPS[e.op]} {y})"
        p = PRIMS[t]
        ct = C_TYPES[t]
        if e.op == "**" and p.is_float:
            return f"pow{'f' if t == 'f32' else ''}(({ct})({x}), ({ct})({y}))"
        if e.op not in ("+", "-", "*", "/") or (e.op == "/" and not p.is_float):
            raise Unsupported(f"the operation {e.op} on {t}")
        return f"(({ct})(({ct})({x}) {e.op} ({ct})({y})))"

    def _ints(self, e) -> list:
        if isinstance(e, H.Lit) and isinstance(e.value, (tuple, list)):
            return [f"INT64_C({int(v)})" for v in e.value]
        items = e.items if isinstance(e, (H.Tuple, H.List)) else None
        if items is None:
            raise Unsupported(f"a sequence {type(e).__name__}")
        return [self.exp(i) for i in items]

    def _shape(self, e) -> tuple:
        """(rank, C expression of a const int64_t *) of a shape: a tuple of sizes, or an array's shape."""
        if isinstance(e, H.Shape) and e.dim is None:
            return self.type_of(e.array).rank, f"{self.exp(e.array)}.shape"
        items = self._ints(e)
        if not items:
            return 0, "NULL"
        return len(items), f"(const int64_t[]){{{', '.join(f'(int64_t)({i})' for i in items)}}}"

    def _str(self, e) -> str:
        if isinstance(e, H.Lit) and isinstance(e.value, str):
            return c_string(e.value)
        raise Unsupported(f"a text argument {e!r}")

    def _kwargs(self, e: H.Call) -> dict:
        return dict(e.kwargs)

    def _call(self, e: H.Call) -> str:
        fn, a = e.fn, self._args(e)
        simple = {"ceil_div": "incflat_ceil_div", "groups_per_segment": "incflat_groups_per_segment",
                  "segment_group_size": "incflat_segment_group_size", "thread_parts": "incflat_thread_parts"}
        if fn in simple:
            return f"{simple[fn]}({', '.join(f'(int64_t)({self.exp(x)})' for x in a)})"
        if fn == "int":
            return f"((int64_t)({self.exp(a[0])}))"
        if fn == "float":
            return f"((double)({self.exp(a[0])}))"
        if fn in ("max", "min"):  # Python's: the first, replaced by each later one that compares beyond it
            t = self.type_of(e)
            suffix = "i64" if t == H.INT else t
            out = self.exp(a[0])
            for x in a[1:]:
                out = f"incflat_{fn}_{suffix}({out}, {self.exp(x)})"
            return out
        if fn == "wrap":
            return f"(({C_TYPES[a[0].prim]})({self.exp(a[1])}))"
        if fn == "prim_call":
            return self._prim_call(e)
        if fn == "int_div":
            t = self.type_of(a[0])
            wide = "uint64_t" if t == "u64" else "int64_t"  # (the narrower unsigned types fit int64_t)
            return (f"(({C_TYPES[t]})incflat_{'u' if t == 'u64' else ''}int_div(ctx, ({wide})({self.exp(a[0])}), "
                    f"({wide})({self.exp(a[1])}), {self._str(a[2])}, {self._str(a[3]) if len(a) > 3 else chr(34) * 2}))")
        if fn == "int_pow":
            where = self._str(a[3]) if len(a) > 3 else '""'
            return (f"(({C_TYPES[a[0].prim]})incflat_int_pow(ctx, (int64_t)({self.exp(a[1])}), "
                    f"(int64_t)({self.exp(a[2])}), {where}))")
        if fn == "ctx.size":
            return f"incflat_size(ctx, {self.params[a[0].value]}, (int64_t)({self.exp(a[1])}), (int64_t)({self.exp(a[2])}))"
        if fn == "ctx.user_param":
            return f"incflat_user_param(ctx, {self.params[a[0].value]}, (int64_t)({self.exp(a[1])}))"
        if fn == "ctx.tile_size":
            return f"incflat_tile_size(ctx, {self.kernels[a[0].value]}, {self.params[a[1].value]})"
        if fn == "ctx.kernel_group_size":
            listed = a[0].value if isinstance(a[0], H.Lit) else [n.value for n in a[0].items]
            names = [self.kernels[n] for n in listed]
            return (f"incflat_kernel_group_size(ctx, {len(names)}, (const int[]){{{', '.join(map(str, names))}}}, "
                    f"(int64_t)({self.exp(a[1])}))")
        if fn == "ctx.fit_local":
            return f"incflat_fit_local(ctx, (int64_t)({self.exp(a[0])}), (int64_t)({self.exp(a[1])}))"
        if fn == "ctx.empty":
            rank, shape = self._shape(a[0])
            kw = self._kwargs(e)
            where = self._str(a[2]) if len(a) > 2 else '""'
            what = self._str(a[3]) if len(a) > 3 else "NULL"
            interleave = self.exp(kw["interleave"]) if "interleave" in kw else "0"
            return f"incflat_empty(ctx, {rank}, {shape}, {TYPE_ENUM[a[1].prim]}, {where}, {what}, (int)({interleave}))"
        if fn == "index":
            return self._index(e)
        if fn == "to_host":
            t = self.type_of(a[0])
            if _is_array(t):
                return f"incflat_to_host(ctx, {self.exp(a[0])}).{t.prim if t.prim != 'bool' else 'b'}"
            return self.exp(a[0])
        if fn == "ctx.scan_epoch":
            return "incflat_scan_epoch(ctx)"
        if fn == "reshape":
            rank, shape = self._shape(a[0])
            where = self._str(a[2]) if len(a) > 2 else '""'
            return f"incflat_reshape(ctx, {rank}, {shape}, {self.exp(a[1])}, {where})"
        if fn == "manifest":
            return f"incflat_manifest(ctx, {self.exp(a[0])})"
        if fn == "coalesced":
            return f"incflat_coalesced(ctx, {self.exp(a[0])}, (int)({self.exp(a[1])}))"
        if fn == "replicate":
            rank, shape = self._shape(a[1])
            where = self._str(a[3]) if len(a) > 3 else '""'
            t = self.type_of(a[0])
            if _is_array(t):
                return f"incflat_replicate_array(ctx, {self.exp(a[0])}, {rank}, {shape}, {where})"
            prim = a[2].prim
            field = "b" if prim == "bool" else prim
            return (f"incflat_replicate_scalar(ctx, (union incflat_scalar){{.{field} = ({C_TYPES[prim]})({self.exp(a[0])})}}, "
                    f"{rank}, {shape}, {TYPE_ENUM[prim]}, {where})")
        if fn == "iota":
            where = self._str(a[2]) if len(a) > 2 else '""'
            return f"incflat_iota(ctx, (int64_t)({self.exp(a[0])}), {TYPE_ENUM[a[1].prim]}, {where})"
        if fn == "concat":
            arrays = self._arrays(a[0].items)
            where = self._str(a[2]) if len(a) > 2 else '""'
            return f"incflat_concat(ctx, {len(a[0].items)}, {arrays}, (int64_t)({self.exp(a[1])}), {where})"
        if fn == "rotate":
            return f"incflat_rotate(ctx, (int64_t)({self.exp(a[0])}), {self.exp(a[1])})"
        if fn == "destination":
            reads = [r for r in a[2:] if _is_array(self.type_of(r))]
            return (f"incflat_destination(ctx, {self.exp(a[0])}, {self.exp(a[1])}, {len(reads)}, "
                    f"{self._arrays(reads)})")
        if fn == "update":
            kw = self._kwargs(e)
            in_place = self.exp(kw["in_place"]) if "in_place" in kw else "false"
            where = self._str(a[3]) if len(a) > 3 else '""'
            vt = self.type_of(a[2])
            if _is_array(vt):
                value, scalar = f"(const struct incflat_array[]){{{self.exp(a[2])}}}", "(union incflat_scalar){0}"
            else:
                value, scalar = "NULL", self._scalar_union(a[2], self.type_of(a[0]).prim)
            return (f"incflat_update(ctx, {self.exp(a[0])}, {self._indices(a[1])}, {value}, {scalar}, {where}, "
                    f"{in_place})")
        if fn == "update_many":
            kw = self._kwargs(e)
            in_place = self.exp(kw["in_place"]) if "in_place" in kw else "false"
            items = a[1].items
            ats = ", ".join(self._indices(u.items[0], pointer=False) for u in items)
            wheres = ", ".join(self._str(u.items[2]) for u in items)
            return (f"incflat_update_many(ctx, {self.exp(a[0])}, {len(items)}, (const struct incflat_indices[]){{{ats}}}, "
                    f"{self._arrays([u.items[1] for u in items])}, (const char *const[]){{{wheres}}}, {in_place})")
        if fn == "empty_in_region":
            root, at, others, same, apart, points, shape, dtype = a[:8]
            where = self._str(a[8]) if len(a) > 8 else '""'
            rank, shape_text = self._shape(shape)
            other_list = [self._indices(o, pointer=False) for o in others.items]
            other_table = f"(const struct incflat_indices[]){{{', '.join(other_list)}}}" if other_list else "NULL"
            same_items = [x for x in same.items if _is_array(self.type_of(x))]
            apart_items = [x for x in apart.items if _is_array(self.type_of(x))]
            return (f"incflat_empty_in_region(ctx, {self.exp(root)}, {self._indices(at)}, {len(other_list)}, "
                    f"{other_table}, {len(same_items)}, {self._arrays(same_items)}, {len(apart_items)}, "
                    f"{self._arrays(apart_items)}, {self.exp(points)}, {rank}, {shape_text}, "
                    f"{TYPE_ENUM[dtype.prim]}, {where})")
        if fn == "scatter":
            kw = self._kwargs(e)
            in_place = self.exp(kw["in_place"]) if "in_place" in kw else "false"
            return f"incflat_scatter(ctx, {self.exp(a[0])}, {self.exp(a[1])}, {self.exp(a[2])}, {in_place})"
        if fn == "array_literal":
            elements = []
            for x in a[0].items:
                if _is_array(self.type_of(x)):
                    elements.append(f"{{true, {self.exp(x)}, {{0}}}}")
                else:
                    elements.append(f"{{false, {{0}}, {self._scalar_union(x, a[1].prim)}}}")
            where = self._str(a[2]) if len(a) > 2 else '""'
            return (f"incflat_array_literal(ctx, {len(elements)}, (const struct incflat_element[]){{{', '.join(elements)}}}, "
                    f"{TYPE_ENUM[a[1].prim]}, {where})")
        if fn == "constant_array":
            prim = a[1].prim
            values = [scalar_literal(v.value, prim) for v in a[0].items]
            name = f"constant_{len(self.constants)}"
            self.constants.append((name, prim, values))
            return f"incflat_constant_array(ctx, {name}, {len(values)}, {TYPE_ENUM[prim]})"
        raise Unsupported(f"the runtime function {fn}")

    def _arrays(self, items) -> str:
        """A C array of arrays (NULL for none)."""
        if not items:
            return "NULL"
        return f"(const struct incflat_array[]){{{', '.join(self.exp(x) for x in items)}}}"

    def _scalar_union(self, x, prim: str) -> str:
        field = "b" if prim == "bool" else prim
        return f"(union incflat_scalar){{.{field} = ({C_TYPES[prim]})({self.exp(x)})}}"

    def _index_entries(self, idxs) -> list:
        parts = []
        for i in idxs:
            if isinstance(i, H.Tuple):
                parts.append(f"{{true, {{{', '.join(f'(int64_t)({self.exp(v)})' for v in i.items)}}}}}")
            else:
                parts.append(f"{{false, {{(int64_t)({self.exp(i)})}}}}")
        return parts

    def _indices(self, e, pointer=True) -> str:
        """A struct incflat_indices of an index tuple (a pointer to it, with pointer)."""
        parts = self._index_entries(e.items)
        value = f"{{{len(parts)}, {{{', '.join(parts)}}}}}" if parts else "{0}"
        return f"&(const struct incflat_indices){value}" if pointer else value

    def _prim_call(self, e: H.Call) -> str:
        fn, t, args = e.args[0].value, e.args[1].prim, e.args[2:]
        return prim_function(fn, t, [self.exp(x) for x in args])

    def _index(self, e: H.Call) -> str:
        a = self._args(e)
        arr, idxs = a[0], a[1].items
        where = self._str(a[2]) if len(a) > 2 else '""'
        parts = self._index_entries(idxs)
        table = f"(const struct incflat_index[]){{{', '.join(parts)}}}" if parts else "NULL"
        t = self.type_of(e)
        if _is_array(t):
            return f"incflat_index_view(ctx, {self.exp(arr)}, {len(parts)}, {table}, {where})"
        return f"incflat_index_scalar(ctx, {self.exp(arr)}, {len(parts)}, {table}, {where}).{t if t != 'bool' else 'b'}"

    # ---- statements ----

    def check(self):
        self.out.line(f"if (ctx->failed) goto {self.labels[-1]};")

    def assign(self, target: str, value, t):
        text = self.exp(value)
        if _is_array(t):
            vt = self.type_of(value)
            if not _is_array(vt):
                raise Unsupported(f"an array bound to a value of {vt}")
            self.out.line(f"incflat_arr_set(ctx, &v_{target}, {text});")
        else:
            self.out.line(f"v_{target} = {text};")

    def statements(self, stms):
        for s in stms:
            self.statement(s)

    def statement(self, s):
        out = self.out
        if isinstance(s, H.Assign):
            self.assign(s.target, s.value, s.type)
            self.check()
        elif isinstance(s, H.Bind) and s.unpack:
            self.compact(s)
            self.check()
        elif isinstance(s, H.Bind):
            # through temporaries that hold their own references: `a, b = b, a` swaps, and the memory a target
            # let go of is not released while another target takes it
            temps = []
            with out.block(""):
                for target, value, t in zip(s.targets, s.values, s.types):
                    temp = self.fresh("bind")
                    if _is_array(t):
                        out.line(f"{ARRAY} {temp} = {{0}};")
                        out.line(f"incflat_arr_set(ctx, &{temp}, {self.exp(value)});")
                    else:
                        out.line(f"{self.c_type(t)} {temp} = {self.exp(value)};")
                    temps.append((target, temp, t))
                for target, temp, t in temps:
                    if _is_array(t):
                        out.line(f"incflat_arr_set(ctx, &v_{target}, {temp});")
                    else:
                        out.line(f"v_{target} = {temp};")
                for target, temp, t in temps:
                    if _is_array(t):
                        out.line(f"incflat_arr_release(ctx, &{temp});")
            self.check()
        elif isinstance(s, H.Do):
            self.effect(s.value)
            self.check()
        elif isinstance(s, H.If):
            with out.block(f"if ({self.exp(s.cond)})"):
                self.statements(s.then)
            if s.else_:
                with out.block("else"):
                    self.statements(s.else_)
        elif isinstance(s, H.For):
            bound, i = self.fresh("bound"), self.fresh("i")
            with out.block(""):
                out.line(f"int64_t {bound} = (int64_t)({self.exp(s.bound)});")
                with out.block(f"for (int64_t {i} = 0; {i} < {bound}; {i}++)"):
                    out.line(f"v_{s.var} = ({C_TYPES[s.prim]}){i};")
                    self.statements(s.body)
        elif isinstance(s, H.While):
            with out.block("for (;;)"):
                self.statements(s.body)
        elif isinstance(s, H.Break):
            out.line("break;")
        elif isinstance(s, H.Guard):
            self.guard(s)
        elif isinstance(s, H.Return):
            self.ret(s)
        else:
            raise Unsupported(f"the statement {type(s).__name__}")

    def compact(self, s: H.Bind):
        """`count, arrays... = compact(ctx, flags, arrays, where)`."""
        a = self._args(s.values[0])
        arrays = a[1].items
        outs = self.fresh("kept")
        where = self._str(a[2]) if len(a) > 2 else '""'
        with self.out.block(""):
            self.out.line(f"struct incflat_array {outs}[{max(len(arrays), 1)}];")
            self.out.line(f"int64_t {outs}_count = incflat_compact(ctx, {self.exp(a[0])}, {len(arrays)}, "
                          f"{self._arrays(arrays)}, {outs}, {where});")
            self.out.line(f"v_{s.targets[0]} = ({self.c_type(s.types[0])}){outs}_count;")
            for k, target in enumerate(s.targets[1:]):
                self.out.line(f"incflat_arr_set(ctx, &v_{target}, {outs}[{k}]);")

    def effect(self, e):
        if not isinstance(e, H.Call):
            raise Unsupported(f"a statement of {type(e).__name__}")
        fn, a = e.fn, self._args(e)
        if fn == "ctx.launch":
            return self.launch(e)
        if fn == "check_size":
            self.out.line(f"incflat_check_size(ctx, (int64_t)({self.exp(a[0])}), (int64_t)({self.exp(a[1])}), "
                          f"{self._str(a[2])}, {self._str(a[3])});")
        elif fn == "check_coercion":
            rank, shape = self._shape(a[1])
            where = self._str(a[3]) if len(a) > 3 else '""'
            self.out.line(f"incflat_check_coercion(ctx, (int64_t)({self.exp(a[0])}), {rank}, {shape}, "
                          f"{self.exp(a[2])}, {where});")
        elif fn == "check_sizes":
            rank, shape = self._shape(a[0])
            where = self._str(a[2]) if len(a) > 2 else '""'
            self.out.line(f"incflat_check_sizes(ctx, {rank}, {shape}, {self._str(a[1])}, {where});")
        elif fn == "check_assertion":
            values = self._ints(a[2])
            table = f"(const int64_t[]){{{', '.join(f'(int64_t)({v})' for v in values)}}}" if values else "NULL"
            where = self._str(a[3]) if len(a) > 3 else '""'
            self.out.line(f"incflat_check_assertion(ctx, {self.exp(a[0])}, {self._str(a[1])}, {len(values)}, "
                          f"{table}, {where});")
        else:
            raise Unsupported(f"the runtime function {fn} as a statement")

    def launch(self, e: H.Call):
        name, global_size, local_size, memory, scalars, reach = e.args
        k = self.kernels[name.value]
        args = []
        for m in memory.items:
            if isinstance(m, H.Buffer):
                args.append(f"INCFLAT_BUF({self.exp(m.array)}.mem->buf)")
            elif isinstance(m, H.Field) and m.name == "error_buf":
                args.append("INCFLAT_BUF(ctx->error_buf)")
            elif isinstance(m, H.Call) and m.fn == "ctx.local":
                args.append(f"INCFLAT_LOCAL({self.exp(m.args[0])})")
            elif isinstance(m, H.Spread) and isinstance(m.value, H.Call) and m.value.fn == "ctx.lookback":
                args.append(f"INCFLAT_BUF(incflat_lookback(ctx, (int64_t)({self.exp(m.value.args[0])})))")
                args.append("INCFLAT_BUF(incflat_scan_counters(ctx))")
            elif isinstance(m, H.Call) and m.fn == "ctx.segment_counters":
                args.append(f"INCFLAT_BUF(incflat_segment_counters(ctx, {self.exp(m.args[0])}))")
            elif isinstance(m, H.Call) and m.fn == "ctx.scratch":
                mem = self.fresh("scratch")
                self.out.line(f"struct incflat_mem *{mem} = incflat_scratch(ctx, (int64_t)({self.exp(m.args[0])}), "
                              f"{TYPE_ENUM[m.args[1].prim]});")
                self.check()
                args.append(f"INCFLAT_BUF({mem}->buf)")
            else:
                raise Unsupported(f"the kernel argument {m!r}")
        values = []
        for v in scalars.items:
            if isinstance(v, H.IndexArgs):
                a = self.exp(v.array)
                rank = self.type_of(v.array).rank
                values += [f"{a}.offset", "1"] if v.flat else [f"{a}.offset"] + [f"{a}.strides[{d}]" for d in range(rank)]
            else:
                values.append(self.exp(v))
        struct = self.structs[name.value]
        # the memory first: a scan's look-back buffers start the epoch its scalars then hold
        kargs, scalars_name = self.fresh("kargs"), self.fresh("scalars")
        with self.out.block(""):
            self.out.line(f"const struct incflat_karg {kargs}[] = {{{', '.join(args)}}};")
            if struct is None:
                scalar_args = "NULL, 0"
            else:
                self.out.line(f"const struct {struct} {scalars_name} = {{{', '.join(values)}}};")
                scalar_args = f"&{scalars_name}, sizeof {scalars_name}"
            self.out.line(f"incflat_launch(ctx, {k}, (int64_t)({self.exp(global_size)}), "
                          f"(int64_t)({self.exp(local_size)}), {kargs}, {len(args)}, {scalar_args}, "
                          f"(int64_t)({self.exp(reach)}));")
        self.out.line("incflat_release_fresh(ctx);")  # scratch memory back once launched (the queue is in order)

    def guard(self, g: H.Guard):
        out = self.out
        p = self.params[g.threshold]
        par = self.fresh("par")
        with out.block(""):
            out.line(f"int64_t {par} = " + " * ".join(f"(int64_t)({self.exp(a)})" for a in g.par) + ";")
            if g.kind == "outer":
                with out.block(f"if (incflat_cmp(ctx, {p}, {par}))"):
                    self.version(p, par, g.then, True)
                with out.block("else"):
                    self.version(p, par, g.else_, False)
                return
            done, fallback = self.fresh("done"), self.fresh("fallback")
            out.line(f"bool {done} = false;")
            with out.block(f"if (incflat_cmp(ctx, {p}, {par}) && incflat_fits_group(ctx, {p}, {par}, {g.local_bytes}))"):
                self.labels.append(fallback)
                self.version(p, par, g.then, True)
                self.labels.pop()
                out.line(f"{done} = true;")
            with out.block("if (0)"):  # a failure inside the version: the next version, where one may fall back
                out.line(f"{fallback}:")
                out.line(f"if (!ctx->recoverable) goto {self.labels[-1]};")
                out.line("incflat_leave(ctx);")
                out.line(f"incflat_warn_once(ctx, {p}, {par});")
            self.check()  # (--no-fallback)
            with out.block(f"if (!{done})"):
                self.version(p, par, g.else_, False)

    def version(self, p, par, body, outcome):
        self.out.line(f"incflat_enter(ctx, {p}, {'true' if outcome else 'false'}, {par});")
        self.statements(body)
        self.out.line("incflat_leave(ctx);")

    def ret(self, s: H.Return):
        for k, v in enumerate(s.values):
            t = self.type_of(v)
            if _is_array(t) and t.rank > 0:
                self.out.line(f"incflat_arr_set(ctx, &out[{k}].array, {self.exp(v)});")
            elif _is_array(t):
                field = "b" if t.prim == "bool" else t.prim
                self.out.line(f"out[{k}].scalar.{field} = incflat_to_host(ctx, {self.exp(v)}).{field};")
            else:
                field = "b" if t == "bool" else t
                if t not in C_TYPES:
                    raise Unsupported(f"a result of {t}")
                self.out.line(f"out[{k}].scalar.{field} = {self.exp(v)};")
        self.out.line("goto done;")

    @staticmethod
    def c_type(t) -> str:
        if _is_array(t):
            return ARRAY
        if t == H.INT:
            return "int64_t"
        if t in C_TYPES:
            return C_TYPES[t]
        raise Unsupported(f"a variable of {t}")

    def function(self) -> str:
        d, out = self.d, self.out
        with out.block(f"static void entry_{d.name}(struct incflat_ctx *ctx, const struct incflat_slot *in, "
                       "struct incflat_slot *out)"):
            arrays = []
            for name, t in self.types.items():
                if _is_array(t):
                    arrays.append(name)
                    out.line(f"{ARRAY} v_{name} = {{0}};")
                else:
                    out.line(f"{self.c_type(t)} v_{name} = 0;")
            for k, (name, t) in enumerate(zip(d.params, d.types)):
                if _is_array(t):
                    out.line(f"incflat_arr_set(ctx, &v_{name}, in[{k}].array);")
                else:
                    out.line(f"v_{name} = in[{k}].scalar.{'b' if t == 'bool' else t};")
            self.statements(d.body)
            out.line("done:")
            for name in arrays:
                out.line(f"incflat_arr_release(ctx, &v_{name});")
            out.line("incflat_release_fresh(ctx);")
        return out.text()


def entry_function(d: H.Def, kernels: dict, params: dict, scalar_structs: dict, constants: list) -> str:
    """The C function `entry_<name>` of an entry point; raises Unsupported."""
    return EntryPrinter(d, kernels, params, scalar_structs, constants).function()
