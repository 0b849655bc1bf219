"""The generate stage and what it gives: `GeneratedProgram` (the kernels, the host code, the tuning
parameters, the run-time error table and the entry points, as structures), and `program_text`, the compiled
program's file.

The file is laid out as:

    header; the tuned-defaults block (ir.runtime.tuning); the data (the OpenCL prelude and kernels, the
    parameters, the error table, the entry points' types); the host code (one function per entry point);
    the runtime (ir.runtime's modules, carried as text and installed by ir.runtime.loader);
    `PROGRAM`, `load` (the library) and `run` (the command line).

It needs only Python 3, numpy and pyopencl.
"""

import dataclasses
import functools
import hashlib
import importlib.resources
import pathlib
from dataclasses import dataclass

from incflat import __version__
from incflat.ir import runtime
from incflat.codegen.cscalar import PRELUDE
from incflat.codegen.emit import PyEmitter
from incflat.codegen import pyhost
from incflat.ir import host as host_ir
from incflat.codegen.host import HostWriter
from incflat.ir.runtime.tuning import ContractError, build_forest, defaults_block
from incflat.ir.thresholds import thresholds
from incflat.ir import target as T
from incflat.ir.types import unsized_name
from incflat.ir.verify import IRError


@dataclass(frozen=True)
class EntrySignature:
    name: str
    param_types: tuple  # Futhark's spelling without sizes, e.g. "[][]f32"
    ret_types: tuple


@dataclass(frozen=True)
class GeneratedProgram:
    source_name: str  # the .fut file's name, for the header
    kernels: tuple  # codegen.kernel.Kernel
    params: tuple  # ir.runtime.tuning.Param: thresholds, then workgroup, grid and tile sizes
    errors: tuple  # (where, message template) of the run-time errors kernels report, numbered from 1
    entries: tuple  # EntrySignature
    host: tuple  # ir.host.Def of each entry point: the host code, which a backend prints
    host_code: str  # Python: `def entry_<name>(ctx, ...)` for each entry point (codegen.pyhost)

    @property
    def code_size(self) -> int:
        """Bytes of generated code: the kernels and the host code (the runtime aside)."""
        return len(self.host_code) + sum(len(k.source()) for k in self.kernels)


def generate(target: T.Program, checks: bool = True) -> GeneratedProgram:
    """The generate stage; checks=False (`--unsafe`) leaves out the checks inside kernels."""
    w = HostWriter(checks)
    for f in target.funs:
        w.entry(f)
    entries = tuple(EntrySignature(f.name, tuple(unsized_name(p.type) for p in f.params),
                                   tuple(unsized_name(t) for t in f.ret)) for f in target.funs)
    return GeneratedProgram(pathlib.Path(target.file).name, tuple(w.kernels),
                            tuple(thresholds(target)) + tuple(w.size_params), tuple(w.errors), entries,
                            tuple(w.entries), "\n".join(pyhost.entry(d) for d in w.entries))


def verify_generated(program: GeneratedProgram, stage: str = "") -> None:
    """Kernel and parameter names are unique, the thresholds form a version tree, each kernel's argument
    types match its declarations, the host IR is well formed (ir.host.verify) and its printing valid Python."""
    def fail(message):
        raise IRError(f"after stage {stage}: {message}" if stage else message)
    for what, names in (("kernel", [k.name for k in program.kernels]), ("parameter", [p.name for p in program.params]),
                        ("entry point", [e.name for e in program.entries])):
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            fail(f"{what} names used twice: {', '.join(twice)}")
    try:
        build_forest(program.params)
    except ContractError as e:
        fail(f"the thresholds do not form a version tree: {e}")
    for k in program.kernels:
        if any(len({f.size for f in p.scalars()}) > 1 for p in k.params):
            fail(f"kernel {k.name} has a parameter whose scalars differ in size (the struct would need padding)")
        names = [f.name for f in k.scalar_fields()]
        if len(set(names)) != len(names):
            fail(f"kernel {k.name} has two scalars of one name")
    for d in program.host:
        try:
            host_ir.verify(d)
        except ValueError as e:
            fail(str(e))
    try:
        compile(program.host_code, "<host code>", "exec")
    except SyntaxError as e:
        fail(f"the host code is not valid Python: {e}")


def generated_text(program: GeneratedProgram) -> str:
    """What code generation made, for reading: the tuning parameters, the host code and the kernels."""
    parts = ["-- tuning parameters", *(p.line for p in program.params), "", "-- host code", program.host_code]
    parts += ["-- OpenCL kernels (after the prelude every kernel shares)", *(k.source() for k in program.kernels)]
    return "\n".join(parts) + "\n"


# ---- the compiled program's file ----

@functools.lru_cache(maxsize=1)
def runtime_modules() -> tuple:
    """(name, source text) of each module of the runtime, in the order they are installed; read once a process."""
    files = importlib.resources.files(runtime.__name__)
    return tuple((name, files.joinpath(f"{name}.py").read_text(encoding="utf-8")) for name in runtime.MODULES)


def loader_text() -> str:
    return importlib.resources.files(runtime.__name__).joinpath("loader.py").read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def runtime_package() -> str:
    """The name the runtime is installed under: programs compiled with the same runtime share it."""
    digest = hashlib.sha256(repr(runtime_modules()).encode()).hexdigest()[:12]
    return f"incflat_runtime_{digest}"


def python_string(text: str, quote: str = '"""') -> str:
    """A Python literal of text: raw and triple-quoted where that spells it exactly (readable), else repr."""
    if quote not in text and not text.endswith("\\") and "\r" not in text:
        return f"r{quote}{text}{quote}"
    return repr(text)


# Ctrl-C while an executable starts (its imports) stops it as one later does: `Interrupted.` and 130, no
# traceback; command_line gives Python's own handler back.
EARLY_INTERRUPT = """\
if __name__ == "__main__":
    import os
    import signal
    signal.signal(signal.SIGINT, lambda *_: (os.write(2, b"Interrupted.\\n"), os._exit(130)))
"""

# A Python without numpy or pyopencl: one line that names the interpreter and the fix, not a traceback.
DEPENDENCY_CHECK = """\
try:
    import numpy  # noqa: F401
    import pyopencl  # noqa: F401
except ImportError as missing:
    _why = (f"this program needs the Python package {missing.name or missing}, which {sys.executable} cannot "
            f"import: install it ({sys.executable} -m pip install {missing.name or 'numpy pyopencl'}) or run the "
            f"program with a Python that has numpy and pyopencl")
    if __name__ == "__main__":
        sys.exit(f"Error: {_why}")
    raise ImportError(_why) from None
"""

COMPILED_MARKER = "# Compiled by incflat "  # the start of a compiled program's second line


def is_compiled_program(path) -> bool:
    """Whether the file at path is one incflat wrote (a compiled program or library): its second line
    starts with COMPILED_MARKER."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096).split(b"\n")
    except OSError:
        return False
    return len(head) > 1 and head[1].startswith(COMPILED_MARKER.encode())


def program_text(program: GeneratedProgram, tuned: dict = None, provenance: dict = None) -> str:
    """The compiled program's file (an executable Python program, also importable as a library)."""
    out = PyEmitter()
    out.line("#!/usr/bin/env python3")
    out.line(f"{COMPILED_MARKER}{__version__} from {program.source_name}. Needs Python 3, numpy and pyopencl.")
    out.line("import sys")
    out.line()
    out.lines += EARLY_INTERRUPT.splitlines()
    out.lines += DEPENDENCY_CHECK.splitlines()
    out.line()
    out.lines += defaults_block(tuned or {}, provenance).splitlines()
    out.line()
    out.line(f"OPENCL_PRELUDE = {python_string(PRELUDE)}")
    out.line("KERNELS = (  # (name, OpenCL source, the types of the scalars' struct's fields)")
    with out.indented():
        for k in program.kernels:
            out.line(f"({k.name!r}, {python_string(k.source())}, {k.scalar_prims()!r}),")
    out.line(")")
    out.line("PARAMS = (  # the fields of the runtime's tuning.Param")
    with out.indented():
        for p in program.params:
            out.line(f"{dataclasses.astuple(p)!r},")
    out.line(")")
    out.line(f"KERNEL_ERRORS = {program.errors!r}")
    out.line(f"ENTRY_POINTS = {tuple(dataclasses.astuple(e) for e in program.entries)!r}")
    out.line()
    out.line()
    out.lines += program.host_code.splitlines()
    package = runtime_package()
    out.line()
    out.line(f"# ---- the runtime of incflat {__version__}, installed as the package {package} ----")
    out.line()
    out.lines += loader_text().splitlines()
    out.line()
    out.line()
    out.line(f"RUNTIME = install_runtime({package!r}, (")
    with out.indented():
        for name, source in runtime_modules():
            out.line(f"({name!r}, {python_string(source, quote=chr(39) * 3)}),")
    out.line("))")
    out.line("import numpy as np  # noqa: E402")
    out.line("import pyopencl as cl  # noqa: E402")
    out.line(f"from {package}.arrays import *  # noqa: E402,F401,F403 (what the host code calls)")
    out.line(f"from {package}.updates import *  # noqa: E402,F401,F403")
    out.line(f"from {package}.errors import KernelUnavailable, ProgramError  # noqa: E402,F401")
    out.line(f"from {package}.program import LibraryProgram, Program, command_line  # noqa: E402")
    out.line()
    entry_functions = "{" + ", ".join(f"{e.name!r}: entry_{e.name}" for e in program.entries) + "}"
    out.line(f"PROGRAM = Program.from_data({program.source_name!r}, OPENCL_PRELUDE, KERNELS, PARAMS, KERNEL_ERRORS, "
             f"ENTRY_POINTS, {entry_functions})")
    out.line()
    out.line()
    with out.block("def load(**options)"):
        out.line('"""The program as a library: `load(device="GPU").main(xss, yss)`."""')
        out.line("return LibraryProgram(PROGRAM, TUNED_DEFAULTS, **options)")
    out.line()
    out.line()
    with out.block("def run(argv=None)"):
        out.line("return command_line(PROGRAM, TUNED_DEFAULTS, TUNING_PROVENANCE, argv)")
    out.line()
    out.line()
    with out.block('if __name__ == "__main__"'):
        out.line("sys.exit(run())")
    return out.text() + "\n"


__all__ = ["COMPILED_MARKER", "EntrySignature", "GeneratedProgram", "generate", "generated_text", "is_compiled_program",
           "program_text", "verify_generated"]
