"""The `--backend=opencl` program: the C file of a GeneratedProgram (its data as C tables, the host code as
codegen/chost.py prints it) and its build with the system C compiler into an executable, linked with the native
runtime (codegen/native: host.c, cli.c, opencl.c, values.c), whose objects are built once per compiler and
kept in the cache.
"""

import dataclasses
import hashlib
import os
import pathlib
import shlex
import shutil
import subprocess
import struct
import tempfile

from incflat import __version__
from incflat.codegen.chost import entry_function
from incflat.codegen.chost_values import C_TYPES, Unsupported, c_string
from incflat.codegen.cscalar import PRELUDE
from incflat.codegen.emit import CEmitter
from incflat.codegen.native import SOURCES
from incflat.ir.runtime import tuning
from incflat.ir.runtime.arrays import COPY_SOURCE
from incflat.ir.runtime.tuning import USER_PARAM, ContractError

RUNTIME_SOURCES = ("host.c", "arrays.c", "runs.c", "cli.c", "server.c", "opencl.c", "values.c")
HEADERS = ("host.h", "internal.h", "opencl.h", "values.h")
FLAGS = ("-std=c99", "-O2", "-fwrapv", "-ffp-contract=off")
NATIVE_MARKER = "incflat native program: "  # in every binary: is_native_program looks for it
# The tuned defaults live in the binary's data, in one block that with_defaults patches: the marker (32 bytes),
# the parameters' count and the size of their names, the provenance (PROVENANCE_SIZE bytes, NUL-terminated),
# per parameter (set, value) as int64, then the names, NUL-separated. The C program reads it (host.h: tuned).
TUNED_MARKER = b"INCFLAT TUNED DEFAULTS BLOCK 1"
PROVENANCE_SIZE = 4096
_BLOCK_HEAD = struct.Struct("=32sqq")


class BuildError(Exception):
    """The C compiler is missing or failed."""


def c_compiler() -> list | None:
    """$CC (which may carry flags) or cc, as a command; None where there is none."""
    command = shlex.split(os.environ.get("CC") or "cc")
    return command if command and shutil.which(command[0]) else None


def _format(line_fn, *placeholders) -> str:
    """A printf format of a line whose text ir/runtime/tuning.py owns: the line made with sentinel arguments,
    each replaced by its conversion."""
    sentinels = [f"\x01{k}\x02" for k in range(len(placeholders))]
    text = line_fn(*sentinels).replace("%", "%%")
    for sentinel, conversion in zip(sentinels, placeholders):
        text = text.replace(sentinel, conversion)
    return text


def formats() -> dict:
    return {
        "compared_true": _format(lambda n, p: tuning.comparison_line(n, p, True), "%s", "%lld"),
        "compared_false": _format(lambda n, p: tuning.comparison_line(n, p, False), "%s", "%lld"),
        "device_line": _format(tuning.device_line, "%s", "%s"),
        "default_threshold_line": _format(tuning.default_threshold_line, "%lld"),
        "no_fallback": _format(tuning.no_fallback_error, "%s", "%lld", "%s", "%s"),
    }


def tuned_block(names: list) -> list:
    """The C definition of the tuned-defaults block of a program with these parameters, nothing set."""
    count, blob = len(names), "".join(n + "\0" for n in names) or "\0"
    size = len(blob.encode())
    return [f"struct incflat_tuned_block {{ char marker[32]; int64_t count, names_size; "
            f"char provenance[{PROVENANCE_SIZE}]; int64_t values[{2 * count + 2}]; char names[{size + 1}]; }};",
            "/* (external and not const: the compiler keeps it in the data, where the tuner patches it) */",
            f"struct incflat_tuned_block incflat_tuned = {{{c_string(TUNED_MARKER.decode())}, {count}, {size}, \"\", "
            f"{{0}}, {c_string(blob)}}};"]


def _block_at(binary: bytes) -> int:
    at = binary.find(TUNED_MARKER + b"\0")
    if at < 0 or binary.find(TUNED_MARKER + b"\0", at + 1) >= 0:
        raise ContractError("not a native program of incflat with one tuned-defaults block")
    return at


def with_defaults(binary: bytes, values: dict, provenance) -> bytes:
    """The native program with its tuned defaults replaced by `values` (with their provenance, a dict or None)."""
    at = _block_at(binary)
    _, count, names_size = _BLOCK_HEAD.unpack_from(binary, at)
    table = at + _BLOCK_HEAD.size + PROVENANCE_SIZE
    names_at = table + 8 * (2 * count + 2)
    names = binary[names_at:names_at + names_size].decode().split("\0")[:count]
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise ContractError(f"the program has no tuning parameter {unknown[0]!r}")
    text = repr(provenance).encode() if provenance else b""
    if len(text) >= PROVENANCE_SIZE:
        raise ContractError(f"the tuning's provenance is {len(text)} bytes; the program holds {PROVENANCE_SIZE - 1}")
    pairs = [x for n in names for x in ((1, int(values[n])) if n in values else (0, 0))]
    out = bytearray(binary)
    out[at + _BLOCK_HEAD.size:table] = text.ljust(PROVENANCE_SIZE, b"\0")
    out[table:table + 16 * count] = struct.pack(f"={2 * count}q", *pairs)
    return bytes(out)


def _param_line(p) -> tuple:
    """(printf format, default's text) of a parameter's --print-params line, whose text tuning.Param owns."""
    sentinel = "\x01default\x02"
    line = dataclasses.replace(p, default=sentinel).line if p.is_threshold else p.line
    default = "def" if p.default is None else str(p.default)
    return line.replace("%", "%%").replace(sentinel, "%s"), default


def program_text(program) -> str:
    """The C file of a GeneratedProgram (no tuned defaults: with_defaults sets them in the binary); raises
    Unsupported for host code the C printer cannot print yet."""
    kernels = {k.name: i for i, k in enumerate(program.kernels)}
    params = {p.name: i for i, p in enumerate(program.params)}
    structs, struct_lines = {}, []
    for k in program.kernels:
        prims = k.scalar_prims()
        if not prims:
            structs[k.name] = None
            continue
        structs[k.name] = f"scalars_{kernels[k.name]}"
        fields = " ".join(f"{C_TYPES[p]} f{i};" for i, p in enumerate(prims))
        struct_lines.append(f"struct scalars_{kernels[k.name]} {{ {fields} }};  /* {k.name} */")
    constants = []
    functions = [entry_function(d, kernels, params, structs, constants) for d in program.host]

    out = CEmitter()
    out.line(f"/* Compiled by incflat {__version__} from {program.source_name}: the --backend=opencl program. */")
    out.line("#include <math.h>")
    out.line("#include <stddef.h>")
    out.line('#include "host.h"')
    out.line(f"const char incflat_native_marker[] = {c_string(NATIVE_MARKER + __version__)};  /* (kept: external) */")
    out.line()
    out.lines += tuned_block([p.name for p in program.params])
    out.line()
    out.line(f"static const char PRELUDE[] = {c_string(PRELUDE)};")
    out.line(f"static const char COPY_SOURCE[] = {c_string(COPY_SOURCE)};")
    with out.block("static const struct incflat_kernel_info KERNELS[] ="):
        for k in program.kernels:
            out.line(f"{{{c_string(k.name)}, {c_string(k.source())}}},")
        out.line("{NULL, NULL},")
    out.lines[-1] += ";"
    with out.block("static const struct incflat_param_info PARAMS[] ="):
        for p in program.params:
            default = "false, 0" if p.default is None or not p.is_threshold else f"true, INT64_C({p.default})"
            line, text = _param_line(p)
            out.line(f"{{{c_string(p.name)}, {str(p.is_threshold).lower()}, {str(p.cls == USER_PARAM).lower()}, "
                     f"{default}, {c_string(line)}, {c_string(text)}}},")
        out.line("{NULL, false, false, false, 0, NULL, NULL},")
    out.lines[-1] += ";"
    with out.block("static const struct incflat_error_info ERRORS[] ="):
        for where, message in program.errors:
            out.line(f"{{{c_string(where)}, {c_string(message)}}},")
        out.line("{NULL, NULL},")
    out.lines[-1] += ";"
    out.lines += struct_lines
    for name, prim, values in constants:
        out.line(f"static const {C_TYPES[prim]} {name}[] = {{{', '.join(values)}}};")
    out.line()
    for text in functions:
        out.lines += text.splitlines()
        out.line()
    for e in program.entries:
        out.line(f"static const char *const {e.name}_params[] = {{{', '.join(map(c_string, e.param_types)) or 'NULL'}}};")
        out.line(f"static const char *const {e.name}_results[] = {{{', '.join(map(c_string, e.ret_types)) or 'NULL'}}};")
    with out.block("static const struct incflat_entry_info ENTRIES[] ="):
        for e in program.entries:
            out.line(f"{{{c_string(e.name)}, {len(e.param_types)}, {len(e.ret_types)}, {e.name}_params, "
                     f"{e.name}_results, entry_{e.name}}},")
    out.lines[-1] += ";"
    f = formats()
    with out.block("static const struct incflat_program PROGRAM ="):
        out.line(f"{c_string(program.source_name)}, PRELUDE, COPY_SOURCE, KERNELS, {len(program.kernels)}, PARAMS, "
                 f"{len(program.params)},")
        out.line(f"ERRORS, {len(program.errors)}, ENTRIES, {len(program.entries)}, incflat_tuned.values, "
                 "incflat_tuned.provenance,")
        out.line("{" + ", ".join(c_string(f[k]) for k in ("compared_true", "compared_false", "device_line",
                                                          "default_threshold_line", "no_fallback")) + "},")
    out.lines[-1] += ";"
    out.line()
    with out.block("int main(int argc, char **argv)"):
        out.line("return incflat_main(&PROGRAM, argc, argv);")
    return out.text() + "\n"


def _runtime_objects(compiler: list, cache: pathlib.Path) -> list:
    """The native runtime's object files for this compiler, built once and kept in the folder `cache`."""
    digest = hashlib.sha256(repr((compiler, FLAGS)).encode())
    for name in RUNTIME_SOURCES + HEADERS:
        digest.update((SOURCES / name).read_bytes())
    folder = cache / digest.hexdigest()[:16]
    objects = [folder / (pathlib.Path(name).stem + ".o") for name in RUNTIME_SOURCES]
    if all(o.exists() for o in objects):
        return objects
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        for source, target in zip(RUNTIME_SOURCES, objects):
            made = pathlib.Path(tmp) / target.name
            _run([*compiler, *FLAGS, f"-I{SOURCES}", "-c", str(SOURCES / source), "-o", str(made)])
            os.replace(made, target)  # (another build may have made it meanwhile: the same bytes)
    return objects


def _run(command: list) -> None:
    try:
        proc = subprocess.run(command, capture_output=True, text=True)
    except OSError as e:
        raise BuildError(f"cannot run the C compiler {command[0]}: {e.strerror}") from None
    if proc.returncode != 0:
        raise BuildError(f"the C compiler failed ({shlex.join(command[:1])}):\n{proc.stderr.strip()}")


def build(c_text: str, out: pathlib.Path, cache: pathlib.Path) -> bytes:
    """The executable of a C program text (its bytes: the caller writes it where it belongs); the runtime's
    objects are kept in the folder `cache` (the compile cache's native/)."""
    compiler = c_compiler()
    if compiler is None:
        raise BuildError("no C compiler: set CC, or install cc (or use --backend=pyopencl)")
    objects = _runtime_objects(compiler, cache)
    with tempfile.TemporaryDirectory() as tmp:
        source = pathlib.Path(tmp) / (out.name + ".c")
        binary = pathlib.Path(tmp) / out.name
        source.write_text(c_text, encoding="utf-8")
        _run([*compiler, *FLAGS, f"-I{SOURCES}", str(source), *map(str, objects), "-o", str(binary), "-ldl", "-lm"])
        return binary.read_bytes()


def is_native_program(path) -> bool:
    """Whether the file at path is an executable incflat built (it holds NATIVE_MARKER)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
            return head == b"\x7fELF" and NATIVE_MARKER.encode() in head + f.read()
    except OSError:
        return False


__all__ = ["BuildError", "NATIVE_MARKER", "Unsupported", "build", "c_compiler", "formats", "is_native_program",
           "program_text", "with_defaults"]
