"""The builtins and the numeric prelude: which names exist, their arities, and the operator classes.

Tables only (no checker state): the names of the builtin functions with their arities, the Futhark
prelude names this subset lacks, the scalar prelude (`f32.sqrt`, `i64.max`, `f32.pi`...) with
`prelude_lookup`, the integer ranges, and which operand types each binary operator accepts. Data
that the lowering, the application of functions and the builtins all consult, so kept apart.
"""

import math

import numpy

from incflat.ir.types import BOOL, I32, I64, INT_TYPES, PRIM_NAMES, PRIMS, Scalar


# ---------------------------------------------------------------- builtins and the prelude

SOAC_MAPS = {"map": 1, "map1": 1, "map2": 2, "map3": 3, "map4": 4, "map5": 5}
ZIPS = {"zip": 2, "zip2": 2, "zip3": 3, "zip4": 4, "zip5": 5}
UNZIPS = {"unzip": 2, "unzip2": 2, "unzip3": 3, "unzip4": 4, "unzip5": 5}
BUILTIN_ARITY = {**{k: n + 1 for k, n in SOAC_MAPS.items()}, **ZIPS, **{k: 1 for k in UNZIPS},
                 "reduce": 3, "reduce_comm": 3, "scan": 3, "filter": 2, "scatter": 3,
                 "transpose": 1, "iota": 1, "replicate": 2, "rep": 1, "length": 1, "flatten": 1, "unflatten": 1,
                 "flatten_3d": 1, "unflatten_3d": 1, "concat": 2, "rotate": 2, "reverse": 1,
                 "head": 1, "last": 1, "tail": 1, "init": 1, "take": 2, "drop": 2, "indices": 1,
                 "tabulate": 2, "copy": 1, "all": 2, "any": 2, "and": 1, "or": 1, "sized": 2,
                 "null": 1, "foldl": 3, "id": 1,
                 "exscan": 3, "spread": 4, "manifest": 1, "trace": 1, "break": 1, "iterate": 3, "iterate_until": 3,
                 "iterate_while": 3, "r32": 1, "t32": 1, "r64": 1, "t64": 1, "not": 1,
                 # derived prelude functions (ir/frontend/check/prelude_arrays.py)
                 "flip": 3, "curry": 3, "uncurry": 2, "const": 2, "opaque": 1, "foldr": 3, "split": 1,
                 "flatten_4d": 1, "unflatten_4d": 1, "tabulate_2d": 3, "tabulate_3d": 4, "scatter_2d": 3,
                 "scatter_3d": 3, "partition": 2, "partition2": 3, "hist": 5, "reduce_by_index": 5}
# Builtins whose arguments include functions (they are kept as function values, not lowered).

# Futhark prelude names that this subset does not have: a clearer message than "unknown".
NOT_SUPPORTED = frozenset({
    "map_reduce", "stream_map", "stream_red",
    "reduce_by_index_2d", "reduce_by_index_3d", "zip_with", "concat_to", "flatten_to", "intrinsics",
    "flatmap", "vjp", "jvp", "vjp2", "jvp2",  # automatic differentiation
})

# Module functions lowered to other operations by the checker (ir.frontend.check.apply.call_prelude), not PrimCalls.
DERIVED_MODULE_FUNCTIONS = frozenset({"to_i64", "to_f64", "recip", "not", "from_fraction"})
FLOAT_UNARY = ("sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
               "sinh", "cosh", "tanh", "abs", "floor", "ceil", "round", "trunc", "sgn", "neg", "cbrt",
               "log1p", "expm1", "acosh", "asinh", "atanh", "gamma", "lgamma", "erf", "erfc")
FLOAT_BINARY = ("min", "max", "pow", "atan2", "hypot")
FLOAT_TERNARY = ("fma", "mad", "lerp")
FLOAT_PRED = ("isnan", "isinf", "isfinite")
INT_UNARY = ("abs", "sgn", "neg")
INT_BINARY = ("min", "max", "mul_hi")
INT_BIT_COUNTS = ("popc", "clz", "ctz")  # t -> i32
ARRAY_REDUCTIONS = ("sum", "product", "maximum", "minimum")

INT_RANGE = {name: PRIMS[name].range for name in INT_TYPES}


def prelude_lookup(parts):
    """(param types, result type, constant value or None) for `f32.sqrt`, `i64.max`, `f32.i64`,
    `f32.pi`...; None when there is no such scalar prelude name."""
    if len(parts) != 2 or parts[0] not in PRIM_NAMES:
        return None
    mod, fn = parts
    t = Scalar(mod)
    if fn in PRIM_NAMES:  # conversion T.U : U -> T
        return ((Scalar(fn),), t, None)
    if fn == "num_bits" and t.name != "bool":
        return ((), I32, PRIMS[mod].dtype.itemsize * 8)
    if fn == "get_bit" and t.name != "bool":
        return ((I32, t), I32, None)
    if fn == "set_bit" and t.name != "bool":
        return ((I32, t, I32), t, None)
    if t.is_float:
        bits = Scalar("u" + mod[1:])  # the unsigned integer type of the same width
        if fn == "to_bits":
            return ((t,), bits, None)
        if fn == "from_bits":
            return ((bits,), t, None)
        if fn in FLOAT_TERNARY:
            return ((t, t, t), t, None)
        if fn in FLOAT_UNARY:
            return ((t,), t, None)
        if fn in FLOAT_BINARY:
            return ((t, t), t, None)
        if fn in FLOAT_PRED:
            return ((t,), BOOL, None)
        if fn in ("recip", "to_f64", "to_i64"):
            return ((t,), {"recip": t, "to_f64": Scalar("f64"), "to_i64": I64}[fn], None)
        if fn == "from_fraction":
            return ((I64, I64), t, None)
        if fn == "epsilon":
            return ((), t, float(numpy.finfo(PRIMS[mod].dtype).eps))
        consts = {"inf": math.inf, "nan": math.nan, "pi": math.pi, "e": math.e,
                  "lowest": -math.inf, "highest": math.inf}
        if fn in consts:
            return ((), t, consts[fn])
    elif t.is_int:
        if fn in INT_UNARY:
            return ((t,), t, None)
        if fn in INT_BINARY:
            return ((t, t), t, None)
        if fn in INT_BIT_COUNTS:
            return ((t,), I32, None)
        if fn == "mad_hi":
            return ((t, t, t), t, None)
        if fn == "not":
            return ((t,), t, None)
        if fn == "to_i64":
            return ((t,), I64, None)
        lo, hi = INT_RANGE[mod]
        if fn == "lowest":
            return ((), t, lo)
        if fn == "highest":
            return ((), t, hi)
    return None


# Operator classes: which operand types each binary operator accepts, and its result.
ARITH_OPS = {"+", "-", "*", "/", "%", "**"}
INT_OPS = {"//", "%%", "&", "|", "^", "<<", ">>", ">>>"}  # >>>: the logical shift, lowered to >>
ORD_OPS = {"<", "<=", ">", ">="}
EQ_OPS = {"==", "!="}
# Size expressions that may be recomputed outside the body that computed them (they cannot fail).
SAFE_SIZE_OPS = {"+", "-", "*"}
LOGIC_OPS = {"&&", "||"}
