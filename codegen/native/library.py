"""The Python module of a native library (`incflat compile --backend=opencl --library prog.fut`): prog.py loads
prog.so through ctypes and gives, as the pyopencl backend's modules do, `load(device=None, **options)`, an object
with a method per entry point that takes and returns numpy values. prog.py is this text, then its data (LIBRARY
and ENTRIES, set again after the placeholders below); it needs numpy and nothing else."""

import ctypes
import os

import numpy as np

_TYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16,
          "u32": np.uint32, "u64": np.uint64, "f32": np.float32, "f64": np.float64, "bool": np.bool_}
LIBRARY = ""  # the shared library's file name, beside this module
ENTRIES = ()  # (name, parameter types, result types) of each entry point, in the library's order


class ProgramError(Exception):
    """A run-time error of the program (its message, as the executable prints it after `Error: `)."""


def _library(path):
    lib = ctypes.CDLL(path)
    p = ctypes.c_void_p
    for name, res, args in (
            ("futhark_context_config_new", p, []), ("futhark_context_config_free", None, [p]),
            ("futhark_context_config_set_device", None, [p, ctypes.c_char_p]),
            ("futhark_context_config_set_platform", None, [p, ctypes.c_char_p]),
            ("futhark_context_config_set_profiling", None, [p, ctypes.c_int]),
            ("futhark_context_config_set_tuning_param", ctypes.c_int, [p, ctypes.c_char_p, ctypes.c_size_t]),
            ("futhark_context_new", p, [p]), ("futhark_context_free", None, [p]),
            ("futhark_context_get_error", p, [p]), ("futhark_context_sync", ctypes.c_int, [p]),
            ("incflat_lib_take", ctypes.c_int, [p, p, p]),
            ("incflat_lib_call_host", ctypes.c_int, [p, ctypes.c_int, p, p, p, p])):
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    libc = ctypes.CDLL(None)
    libc.free.argtypes = [p]
    return lib, libc


class Library:
    """A context of the program on a device: `device` and `platform` name substrings, `profiling`, and tuning
    parameters by name (`**params`)."""

    def __init__(self, path, entries, device=None, platform=None, profiling=False, **params):
        self._lib, self._libc = _library(path)
        cfg = self._lib.futhark_context_config_new()
        try:
            if device:
                self._lib.futhark_context_config_set_device(cfg, device.encode())
            if platform:
                self._lib.futhark_context_config_set_platform(cfg, platform.encode())
            self._lib.futhark_context_config_set_profiling(cfg, int(profiling))
            for name, value in params.items():
                if self._lib.futhark_context_config_set_tuning_param(cfg, name.encode(), int(value)):
                    raise ValueError(f"unknown tuning parameter {name!r}")
            self._ctx = self._lib.futhark_context_new(cfg)
        finally:
            self._lib.futhark_context_config_free(cfg)
        self._check(1 if self._lib.futhark_context_sync(self._ctx) else 0)
        for index, (name, params_, results) in enumerate(entries):
            setattr(self, name, self._entry(index, name, params_, results))

    def __del__(self):
        ctx = getattr(self, "_ctx", None)
        if ctx:
            self._lib.futhark_context_free(ctx)
            self._ctx = None

    def _check(self, failed):
        if failed:
            error = self._lib.futhark_context_get_error(self._ctx)
            text = ctypes.string_at(error).decode() if error else "unknown failure"
            self._libc.free(error)
            raise ProgramError(text)

    def _entry(self, index, name, param_types, result_types):
        """The entry point's method: its arguments' checks and conversions, then one foreign call
        (incflat_lib_call_host: the call, and the results' shapes), and one more per array it returns (its
        values, which free it)."""
        lib, ctx, check = self._lib, self._ctx, self._check
        call_host, take = lib.incflat_lib_call_host, lib.incflat_lib_take
        params = [(t, t.count("[]"), np.dtype(_TYPES[t.replace("[]", "")])) for t in param_types]
        results = [(t.count("[]"), np.dtype(_TYPES[t.replace("[]", "")])) for t in result_types]
        n_in, n_out = len(params), len(results)
        Ins, Outs = ctypes.c_void_p * max(n_in, 1), ctypes.c_void_p * max(n_out, 1)
        Shapes = ctypes.c_int64 * max(sum(rank for _, rank, _ in params), 1)
        ResultShapes = ctypes.c_int64 * max(sum(rank for rank, _ in results), 1)

        def call(*args):
            if len(args) != n_in:
                raise TypeError(f"entry point {name!r} takes {n_in} arguments, but {len(args)} were given")
            values, dims = [], []
            for i, (value, (t, rank, dtype)) in enumerate(zip(args, params)):
                a = np.asarray(value)
                if a.ndim != rank or a.dtype != dtype:
                    raise TypeError(f"argument {i + 1} of entry point {name!r}: expected a value of type {t}, "
                                    f"got {a.dtype} of rank {a.ndim}")
                values.append(np.ascontiguousarray(a) if rank else np.array(a, dtype))  # (kept alive: the call reads them)
                dims += a.shape
            slots = [ctypes.c_void_p() if rank else np.zeros((), dtype) for rank, dtype in results]
            outs = Outs(*(ctypes.addressof(slot) if rank else slot.ctypes.data
                          for slot, (rank, _) in zip(slots, results)))
            shapes = ResultShapes()
            check(call_host(ctx, index, outs, Ins(*(v.ctypes.data for v in values)), Shapes(*dims), shapes))
            out, failed, at = [], 0, 0
            for slot, (rank, dtype) in zip(slots, results):
                if not rank:
                    out.append(slot[()])
                    continue
                array = np.empty(shapes[at:at + rank], dtype)
                at += rank
                failed = take(ctx, slot, array.ctypes.data) or failed  # (every one freed)
                out.append(array)
            check(failed)
            return out[0] if n_out == 1 else tuple(out)
        call.__name__ = name
        return call


def load(device=None, platform=None, profiling=False, **params):
    """The program as a library: `load(device="GPU").main(xs, ys)`."""
    return Library(os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY), ENTRIES, device, platform,
                   profiling, **params)
