"""Host scalars in the C printer (codegen/chost.py): the primitive types' C names, literals, strings, and the
prelude's functions of host scalars (prim_call), as C computes them: through libm for floats, as Futhark's C
backends compute them on the host."""

import math

from incflat.ir.runtime.prims import PRIMS
from incflat.ir.runtime.scalars import conversion_path

C_TYPES = {"i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t", "u8": "uint8_t",
           "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t", "f32": "float", "f64": "double", "bool": "bool"}
# the runtime's enum incflat_type
TYPE_ENUM = {name: f"INCFLAT_{name.upper()}" for name in C_TYPES}

class Unsupported(Exception):
    """A construct of the host IR the C printer does not handle yet."""


def c_string(text: str) -> str:
    """A C string literal of text (UTF-8), split after each newline."""
    parts, current = [], []
    for ch in text:
        code = ord(ch)
        if ch == "\\":
            current.append("\\\\")
        elif ch == '"':
            current.append('\\"')
        elif ch == "\n":
            current.append("\\n")
            parts.append("".join(current))
            current = []
            continue
        elif ch == "\t":
            current.append("\\t")
        elif code < 0x20 or code == 0x7F:
            current.append(f"\\{code:03o}")
        elif code > 0x7F:
            current.append("".join(f"\\{b:03o}" for b in ch.encode("utf-8")))
        elif ch == "?" and current and current[-1] == "?":  # no trigraphs
            current.append("\\?")
        else:
            current.append(ch)
    if current or not parts:
        parts.append("".join(current))
    return "\n".join(f'"{p}"' for p in parts)


def scalar_literal(value, prim: str) -> str:
    p = PRIMS[prim]
    if prim == "bool":
        return "true" if value else "false"
    if p.is_float:
        v = float(value)
        if math.isnan(v):
            return f"(({C_TYPES[prim]})NAN)"
        if math.isinf(v):
            return f"(({C_TYPES[prim]}){'-' if v < 0 else ''}INFINITY)"
        return f"(({C_TYPES[prim]}){v.hex()})" if prim == "f64" else f"{v.hex()}f"
    v = int(value)
    if prim == "u64":
        return f"UINT64_C({v})"
    if prim == "i64":
        return "INT64_MIN" if v == -2 ** 63 else f"INT64_C({v})"
    return f"(({C_TYPES[prim]}){v})"


def prim_function(fn: str, t: str, xs: list) -> str:
    """prim_call's C: the function `fn` (`f32.sqrt`, `i32.f64`...) of the printed arguments xs, of result type t."""
    module, name = fn.split(".", 1)
    ct = C_TYPES[t]
    if name in PRIMS:
        if module == "bool":
            return f"(({ct})(({xs[0]}) != 0))"
        if PRIMS[module].is_int and PRIMS[name].is_float:
            return f"(({ct})incflat_cvtt{conversion_path(t)}((double)({xs[0]})))"
        return f"(({ct})({xs[0]}))"
    p = PRIMS[module] if module in PRIMS else PRIMS[t]
    x = f"({C_TYPES[p.name]})({xs[0]})"
    if name in ("min", "max"):
        return f"incflat_{name}_{p.name}({x}, ({C_TYPES[p.name]})({xs[1]}))"
    if p.is_float:
        text = _float_function(name, p.name, xs)
    else:
        text = _int_function(name, p.name, xs)
    if text is None:
        raise Unsupported(f"the function {fn} on the host")
    return f"(({ct})({text}))"


def _float_function(name, prim, xs):
    """C's libm for a float function (as Futhark's C backends compute them on the host)."""
    suffix = "f" if prim == "f32" else ""
    ct = C_TYPES[prim]
    x = [f"({ct})({v})" for v in xs]
    if name in ("get_bit", "set_bit"):  # on the bits
        bits_prim = "u32" if prim == "f32" else "u64"
        text = _int_function(name, bits_prim, [xs[0], f"incflat_to_bits_{prim}({x[1]})", *xs[2:]])
        return text if name == "get_bit" else f"incflat_from_bits_{prim}({text})"
    libm = {"sqrt": "sqrt", "exp": "exp", "log": "log", "sin": "sin", "cos": "cos", "tan": "tan", "abs": "fabs",
            "floor": "floor", "ceil": "ceil", "trunc": "trunc", "round": "rint", "atan2": "atan2", "pow": "pow",
            "log2": "log2", "log10": "log10", "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh",
            "cosh": "cosh", "tanh": "tanh", "cbrt": "cbrt", "log1p": "log1p", "expm1": "expm1", "hypot": "hypot",
            "acosh": "acosh", "asinh": "asinh", "atanh": "atanh", "gamma": "tgamma", "lgamma": "lgamma",
            "erf": "erf", "erfc": "erfc", "fma": "fma"}
    if name in libm:
        return f"{libm[name]}{suffix}({', '.join(x)})"
    bits = "uint32_t" if prim == "f32" else "uint64_t"
    return {"isnan": f"isnan({x[0]})", "isinf": f"isinf({x[0]})", "isfinite": f"isfinite({x[0]})",
            "neg": f"(-{x[0]})", "sgn": f"incflat_sgn_{prim}({x[0]})",
            "mad": f"incflat_mad_{prim}({', '.join(x)})" if len(x) == 3 else None,
            "lerp": f"incflat_lerp_{prim}({', '.join(x)})" if len(x) == 3 else None,
            "to_bits": f"incflat_to_bits_{prim}({x[0]})",
            "from_bits": f"incflat_from_bits_{prim}(({bits})({xs[0]}))"}.get(name)


def _int_function(name, prim, xs):
    ct = C_TYPES[prim]
    x = [f"({ct})({v})" for v in xs]
    width = PRIMS[prim].size * 8
    unsigned = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t"}[width]
    if name in ("get_bit", "set_bit"):  # (bit, x[, b]): an index outside the width reads 0 and sets nothing
        bit, u = f"(int64_t)({xs[0]})", f"(({unsigned})({ct})({xs[1]}))"
        inside = f"{bit} >= 0 && {bit} < {width}"
        if name == "get_bit":
            return f"({inside} ? (int32_t)(({u} >> {bit}) & 1) : 0)"
        cleared = f"({u} & ~(({unsigned})1 << {bit}))"
        return f"({inside} ? ({ct})({cleared} | (({unsigned})({xs[2]}) << {bit})) : ({ct})({xs[1]}))"
    return {"mul_hi": f"incflat_mul_hi_{prim}({x[0]}, {x[1]})" if len(x) == 2 else None,
            "mad_hi": f"({ct})(({unsigned})incflat_mul_hi_{prim}({x[0]}, {x[1]}) + ({unsigned}){x[2]})"
                      if len(x) == 3 else None,
            "abs": f"({x[0]} < 0 ? ({ct})(0 - ({unsigned}){x[0]}) : {x[0]})",
            "neg": f"({ct})(0 - ({unsigned}){x[0]})", "sgn": f"({x[0]} > 0 ? 1 : {x[0]} < 0 ? -1 : 0)",
            "popc": f"incflat_popc((uint64_t)({unsigned}){x[0]})",
            "clz": f"incflat_clz((uint64_t)({unsigned}){x[0]}, {width})",
            "ctz": f"incflat_ctz((uint64_t)({unsigned}){x[0]}, {width})"}.get(name)
