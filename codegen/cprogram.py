"""The `--backend=opencl` program: the C file of a GeneratedProgram (its data as C tables, the host code as
codegen/chost.py prints it) and its build with the system C compiler into an executable or, with --library, a
shared library with Futhark's C API (its header and Python module made here too), linked with the native runtime
(codegen/native: RUNTIME_SOURCES), whose objects are built once per compiler and kept in the cache; and the
tuned-defaults block of a built program (with_defaults).
"""

import dataclasses
import hashlib
import importlib.util
import os
import pathlib
import shlex
import shutil
import subprocess
import struct
import tempfile

from incflat import __version__
from incflat.codegen.chost import entry_function
from incflat.codegen.chost_values import C_TYPES, TYPE_ENUM, Unsupported, c_string
from incflat.codegen.cscalar import PRELUDE
from incflat.codegen.emit import CEmitter
from incflat.codegen.native import SOURCES
from incflat.codegen.program import COMPILED_MARKER
from incflat.ir.runtime import tuning
from incflat.ir.runtime.arrays import COPY_SOURCE
from incflat.ir.runtime.tuning import USER_PARAM, ContractError

RUNTIME_SOURCES = ("host.c", "arrays.c", "runs.c", "cli.c", "server.c", "api.c", "opencl.c", "values.c")
HEADERS = ("host.h", "internal.h", "opencl.h", "values.h")
FLAGS = ("-std=c99", "-O2", "-fwrapv", "-ffp-contract=off", "-fPIC")  # (PIC: the objects also make libraries)
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
    out.line("#ifndef INCFLAT_OPENCL_LOADER")
    out.line("#define INCFLAT_OPENCL_LOADER NULL")
    out.line("#endif")
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
        out.line("INCFLAT_OPENCL_LOADER,  /* (build defines it: pyopencl_loader) */")
    out.lines[-1] += ";"
    out.line("const struct incflat_program *const incflat_library_program = &PROGRAM;  /* (api.c) */")
    out.line()
    out.lines += api_functions(program).splitlines()
    out.line()
    out.line("#ifndef INCFLAT_LIBRARY")
    with out.block("int main(int argc, char **argv)"):
        out.line("return incflat_main(&PROGRAM, argc, argv);")
    out.line("#endif")
    return out.text() + "\n"


# ---- the library: Futhark's C API, and a Python module over it ----

def _array_types(program) -> list:
    """(prim, rank) of every array type an entry point takes or gives, in order of appearance."""
    seen = []
    for e in program.entries:
        for t in (*e.param_types, *e.ret_types):
            rank = t.count("[]")
            if rank and (t[2 * rank:], rank) not in seen:
                seen.append((t[2 * rank:], rank))
    return seen


def _c_type_of(t: str, const: bool = False) -> str:
    rank = t.count("[]")
    if rank:
        return f"{'const ' if const else ''}struct futhark_{t[2 * rank:]}_{rank}d *"
    return f"{'const ' if const else ''}{C_TYPES[t]} "


def _api_declarations(program) -> list:
    """The typed functions of the program's C API: (return type, name, parameters) of each."""
    out = []
    for prim, rank in _array_types(program):
        a, ct = f"struct futhark_{prim}_{rank}d", C_TYPES[prim]
        dims = ", ".join(f"int64_t dim{k}" for k in range(rank))
        out += [(f"{a} *", f"futhark_new_{prim}_{rank}d", f"struct futhark_context *ctx, const {ct} *data, {dims}"),
                ("int", f"futhark_free_{prim}_{rank}d", f"struct futhark_context *ctx, {a} *arr"),
                ("int", f"futhark_values_{prim}_{rank}d", f"struct futhark_context *ctx, {a} *arr, {ct} *data"),
                ("const int64_t *", f"futhark_shape_{prim}_{rank}d", f"struct futhark_context *ctx, {a} *arr")]
    for e in program.entries:
        outs = [f"{_c_type_of(t)}*out{k}" for k, t in enumerate(e.ret_types)]
        ins = [f"{_c_type_of(t, const=True)}in{k}" for k, t in enumerate(e.param_types)]
        out.append(("int", f"futhark_entry_{e.name}", ", ".join(["struct futhark_context *ctx", *outs, *ins])))
    return out


def api_functions(program) -> str:
    """The C of the typed functions, over api.c's generic ones."""
    out = CEmitter()
    out.line("struct futhark_context;")
    out.line("struct incflat_array *incflat_lib_new(struct futhark_context *c, int type, int rank, const int64_t *shape, "
             "const void *data);")
    out.line("int incflat_lib_free(struct futhark_context *c, struct incflat_array *a);")
    out.line("const int64_t *incflat_lib_shape(struct futhark_context *c, const struct incflat_array *a);")
    out.line("int incflat_lib_values(struct futhark_context *c, const struct incflat_array *a, void *data);")
    out.line("int incflat_lib_call(struct futhark_context *c, int entry, void *const *outs, const void *const *ins);")
    for prim, rank in _array_types(program):
        out.line(f"struct futhark_{prim}_{rank}d {{ struct incflat_array array; }};")
    declared = {name: (ret, params) for ret, name, params in _api_declarations(program)}
    for prim, rank in _array_types(program):
        stem = f"{prim}_{rank}d"
        with out.block(f"{declared['futhark_new_' + stem][0]}futhark_new_{stem}({declared['futhark_new_' + stem][1]})"):
            out.line(f"const int64_t shape[{rank}] = {{{', '.join(f'dim{k}' for k in range(rank))}}};")
            out.line(f"return (struct futhark_{stem} *)incflat_lib_new(ctx, {TYPE_ENUM[prim]}, {rank}, shape, data);")
        with out.block(f"int futhark_free_{stem}({declared['futhark_free_' + stem][1]})"):
            out.line("return incflat_lib_free(ctx, (struct incflat_array *)arr);")
        with out.block(f"int futhark_values_{stem}({declared['futhark_values_' + stem][1]})"):
            out.line("return incflat_lib_values(ctx, &arr->array, data);")
        with out.block(f"const int64_t *futhark_shape_{stem}({declared['futhark_shape_' + stem][1]})"):
            out.line("return incflat_lib_shape(ctx, &arr->array);")
    for index, e in enumerate(program.entries):
        ret, params = declared[f"futhark_entry_{e.name}"]
        with out.block(f"int futhark_entry_{e.name}({params})"):
            outs = [f"out{k}" for k in range(len(e.ret_types))] or ["NULL"]
            ins = [f"in{k}" if "[]" in t else f"&in{k}" for k, t in enumerate(e.param_types)] or ["NULL"]
            out.line(f"void *const outs[] = {{{', '.join(outs)}}};")
            out.line(f"const void *const ins[] = {{{', '.join(ins)}}};")
            out.line(f"return incflat_lib_call(ctx, {index}, outs, ins);")
    return out.text()


API_HEADER = """\
struct futhark_context_config;
struct futhark_context;
struct futhark_context_config *futhark_context_config_new(void);
void futhark_context_config_free(struct futhark_context_config *cfg);
void futhark_context_config_set_device(struct futhark_context_config *cfg, const char *s);
void futhark_context_config_set_platform(struct futhark_context_config *cfg, const char *s);
void futhark_context_config_set_profiling(struct futhark_context_config *cfg, int flag);
void futhark_context_config_set_logging(struct futhark_context_config *cfg, int flag);
void futhark_context_config_set_debugging(struct futhark_context_config *cfg, int flag);
int futhark_context_config_set_tuning_param(struct futhark_context_config *cfg, const char *param_name,
                                            size_t new_value);
int futhark_get_tuning_param_count(void);
const char *futhark_get_tuning_param_name(int i);
const char *futhark_get_tuning_param_class(int i);
struct futhark_context *futhark_context_new(struct futhark_context_config *cfg);
void futhark_context_free(struct futhark_context *ctx);
char *futhark_context_get_error(struct futhark_context *ctx);
int futhark_context_sync(struct futhark_context *ctx);
int futhark_context_clear_caches(struct futhark_context *ctx);
void futhark_context_pause_profiling(struct futhark_context *ctx);
void futhark_context_unpause_profiling(struct futhark_context *ctx);
char *futhark_context_report(struct futhark_context *ctx);
"""


def header_text(program, name: str) -> str:
    """prog.h: Futhark's C API of the library (futhark_context_get_error's and _report's strings are the caller's
    to free)."""
    guard = "INCFLAT_" + "".join(ch if ch.isalnum() else "_" for ch in name.upper()) + "_H"
    lines = [f"/* Futhark's C API of {program.source_name}, compiled by incflat {__version__}. */",
             f"#ifndef {guard}", f"#define {guard}", "#include <stdbool.h>", "#include <stddef.h>",
             "#include <stdint.h>", "", API_HEADER.rstrip("\n")]
    lines += [f"struct futhark_{prim}_{rank}d;" for prim, rank in _array_types(program)]
    lines += [f"{ret}{'' if ret.endswith('*') else ' '}{fn}({params});" for ret, fn, params in _api_declarations(program)]
    return "\n".join(lines + ["#endif", ""])


def module_text(program, library_name: str) -> str:
    """prog.py: the Python module over the library (codegen/native/library.py, then its data)."""
    template = (SOURCES / "library.py").read_text(encoding="utf-8")
    entries = tuple((e.name, e.param_types, e.ret_types) for e in program.entries)
    return (f"# The Python module of the native library {library_name} (numpy and ctypes).\n"
            f"{COMPILED_MARKER}{__version__} from {program.source_name}.\n" + template + f"\n\nLIBRARY = {library_name!r}\nENTRIES = {entries!r}\n")


def pyopencl_loader() -> pathlib.Path | None:
    """The OpenCL ICD loader pyopencl's wheel bundles (pyopencl/.libs), if it is installed with one: a program
    built here falls back on it where INCFLAT_OPENCL_LIBRARY is unset (opencl.h: incflat_cl_load), so that it
    finds the devices pyopencl finds on a machine with no system loader."""
    spec = importlib.util.find_spec("pyopencl")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        found = sorted((pathlib.Path(folder) / ".libs").glob("libOpenCL*.so*"))
        if found:
            return found[0].absolute()
    return None


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


def build(c_text: str, out: pathlib.Path, cache: pathlib.Path, library: bool = False) -> bytes:
    """The executable of a C program text, or with `library` the shared library (its bytes: the caller writes it
    where it belongs); the runtime's objects are kept in the folder `cache` (the compile cache's native/)."""
    compiler = c_compiler()
    if compiler is None:
        raise BuildError("no C compiler: set CC, or install cc (or use --backend=pyopencl)")
    objects = _runtime_objects(compiler, cache)
    with tempfile.TemporaryDirectory() as tmp:
        source = pathlib.Path(tmp) / (out.name + ".c")
        binary = pathlib.Path(tmp) / out.name
        source.write_text(c_text, encoding="utf-8")
        shared = ["-shared", "-DINCFLAT_LIBRARY"] if library else []
        loader = pyopencl_loader()
        if loader is not None:
            shared.append(f"-DINCFLAT_OPENCL_LOADER={c_string(str(loader))}")
        _run([*compiler, *FLAGS, *shared, f"-I{SOURCES}", str(source), *map(str, objects), "-o", str(binary), "-ldl",
              "-lm"])
        return binary.read_bytes()


def is_native_program(path) -> bool:
    """Whether the file at path is an executable incflat built (it holds NATIVE_MARKER)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
            return head == b"\x7fELF" and NATIVE_MARKER.encode() in head + f.read()
    except OSError:
        return False


__all__ = ["BuildError", "NATIVE_MARKER", "Unsupported", "build", "c_compiler", "formats", "header_text",
           "is_native_program", "module_text", "program_text", "with_defaults"]
