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
import tempfile

from incflat import __version__
from incflat.codegen.chost import C_TYPES, Unsupported, c_string, entry_function
from incflat.codegen.cscalar import PRELUDE
from incflat.codegen.emit import CEmitter
from incflat.codegen.native import SOURCES
from incflat.ir.runtime import tuning
from incflat.ir.runtime.arrays import COPY_SOURCE
from incflat.ir.runtime.tuning import USER_PARAM

RUNTIME_SOURCES = ("host.c", "arrays.c", "runs.c", "cli.c", "opencl.c", "values.c")
HEADERS = ("host.h", "internal.h", "opencl.h", "values.h")
FLAGS = ("-std=c99", "-O2", "-fwrapv", "-ffp-contract=off")
NATIVE_MARKER = "incflat native program: "  # in every binary: is_native_program looks for it
TUNED_BEGIN, TUNED_END = "/* BEGIN INCFLAT TUNED DEFAULTS */", "/* END INCFLAT TUNED DEFAULTS */"


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


def defaults_block(values: dict, provenance) -> str:
    """The C block of tuned defaults, between its marker lines."""
    out = [TUNED_BEGIN, "static const struct incflat_default TUNED[] = {"]
    out += [f"    {{{c_string(name)}, INT64_C({int(values[name])})}}," for name in sorted(values)]
    out += ["    {NULL, 0},", "};", f"static const char *const PROVENANCE = {c_string(repr(provenance)) if provenance else 'NULL'};",
            TUNED_END]
    return "\n".join(out)


def program_text(program, tuned: dict = None, provenance=None) -> str:
    """The C file of a GeneratedProgram; raises Unsupported for host code the C printer cannot print yet."""
    tuned = tuned or {}
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
    listed = [dataclasses.replace(p, default=tuned[p.name]) if p.is_threshold and p.name in tuned else p
              for p in program.params]

    out = CEmitter()
    out.line(f"/* Compiled by incflat {__version__} from {program.source_name}: the --backend=opencl program. */")
    out.line("#include <math.h>")
    out.line("#include <stddef.h>")
    out.line('#include "host.h"')
    out.line(f"const char incflat_native_marker[] = {c_string(NATIVE_MARKER + __version__)};  /* (kept: external) */")
    out.line()
    out.lines += defaults_block(tuned, provenance).splitlines()
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
            out.line(f"{{{c_string(p.name)}, {str(p.is_threshold).lower()}, {str(p.cls == USER_PARAM).lower()}, "
                     f"{default}}},")
        out.line("{NULL, false, false, false, 0},")
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
        out.line(f"{c_string(tuning.listing(listed))},")
        out.line(f"ERRORS, {len(program.errors)}, ENTRIES, {len(program.entries)}, TUNED, PROVENANCE,")
        out.line("{" + ", ".join(c_string(f[k]) for k in ("compared_true", "compared_false", "device_line",
                                                          "default_threshold_line", "no_fallback")) + "},")
    out.lines[-1] += ";"
    out.line()
    with out.block("int main(int argc, char **argv)"):
        out.line("return incflat_main(&PROGRAM, argc, argv);")
    return out.text() + "\n"


def _runtime_objects(compiler: list) -> list:
    """The native runtime's object files for this compiler, built once and kept in the cache."""
    from incflat.compiled import cache_dir
    digest = hashlib.sha256(repr((compiler, FLAGS)).encode())
    for name in RUNTIME_SOURCES + HEADERS:
        digest.update((SOURCES / name).read_bytes())
    folder = cache_dir() / "native" / digest.hexdigest()[:16]
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


def build(c_text: str, out: pathlib.Path) -> bytes:
    """The executable of a C program text (its bytes: the caller writes it where it belongs)."""
    compiler = c_compiler()
    if compiler is None:
        raise BuildError("no C compiler: set CC, or install cc (or use --backend=pyopencl)")
    objects = _runtime_objects(compiler)
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
           "program_text"]
