"""The primitive types: the one table of their names, numpy types, OpenCL C types and binary names.

Every part of incflat (the checker, the interpreter, code generation, the value formats and the runtime of
compiled programs) reads these facts from here.
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Prim:
    name: str  # Futhark's: i32, f64, bool
    dtype: np.dtype
    ctype: str  # OpenCL C; bool is stored as uchar (kernels take no bool arguments)
    binary: bytes  # the 4-byte type name of Futhark's binary value format
    struct: str  # the `struct` module's format character (standard size)

    @property
    def is_int(self) -> bool:
        return self.name[0] in "iu"

    @property
    def is_float(self) -> bool:
        return self.name[0] == "f"

    @property
    def is_signed(self) -> bool:
        return self.name[0] in "if"

    @property
    def size(self) -> int:
        return self.dtype.itemsize

    @property
    def unsigned_ctype(self) -> str:
        """The unsigned C type of an integer's width, for arithmetic that wraps without undefined behaviour."""
        return {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"}[self.size] if self.is_int else self.ctype

    @property
    def numpy_spelling(self) -> str:
        """How generated Python names the numpy type (`np.bool_` exists under numpy 1 and 2 alike)."""
        return "np.bool_" if self.name == "bool" else f"np.{self.dtype.name}"

    @property
    def range(self) -> tuple:
        """(least, greatest) of an integer type."""
        info = np.iinfo(self.dtype)
        return int(info.min), int(info.max)


PRIMS = {p.name: p for p in (
    Prim("i8", np.dtype(np.int8), "char", b"  i8", "b"),
    Prim("i16", np.dtype(np.int16), "short", b" i16", "h"),
    Prim("i32", np.dtype(np.int32), "int", b" i32", "i"),
    Prim("i64", np.dtype(np.int64), "long", b" i64", "q"),
    Prim("u8", np.dtype(np.uint8), "uchar", b"  u8", "B"),
    Prim("u16", np.dtype(np.uint16), "ushort", b" u16", "H"),
    Prim("u32", np.dtype(np.uint32), "uint", b" u32", "I"),
    Prim("u64", np.dtype(np.uint64), "ulong", b" u64", "Q"),
    Prim("f32", np.dtype(np.float32), "float", b" f32", "f"),
    Prim("f64", np.dtype(np.float64), "double", b" f64", "d"),
    Prim("bool", np.dtype(np.bool_), "uchar", b"bool", "?"),
)}

INT_NAMES = tuple(n for n, p in PRIMS.items() if p.is_int)
FLOAT_NAMES = tuple(n for n, p in PRIMS.items() if p.is_float)
BY_DTYPE = {p.dtype: p for p in PRIMS.values()}
CTYPE_SIZES = {p.ctype: p.size for p in PRIMS.values()}  # bytes of each C type that some type is stored as
