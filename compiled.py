"""Compiled programs for the tools: the compile cache, keyed by the source and the compiler, and a compiled
program loaded as a module.

- `compile_cached(path)`: the compiled program (importable as a module with `import_module`), cached under
  `$XDG_CACHE_HOME/incflat` (else `~/.cache/incflat`);
- `program_params(compiled)`: its tuning parameters, and `version_assignments(compiled)`: threshold values that
  reach each of its code versions.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import importlib.util
import os
import pathlib
import re
import sys

from incflat import pipeline
from incflat.codegen.program import program_text
from incflat.files import atomic_write
from incflat.ir.errors import read_source
from incflat.ir.frontend.imports import program_files
from incflat.ir.frontend.parse import parse_syntax
from incflat.ir.runtime import tuning

COMPILER_PACKAGES = ("ir", "flatten", "codegen")  # with the modules of incflat itself: what compiles


@functools.lru_cache(maxsize=1)
def compiler_hash() -> str:
    """A hash of every source file of the compiler, so that a changed compiler invalidates the cache."""
    h = hashlib.sha256()

    def add(node, name: str):
        if node.is_dir():
            for child in sorted(node.iterdir(), key=lambda c: c.name):
                add(child, f"{name}/{child.name}")
        elif name.endswith((".py", ".lark")):
            h.update(name.encode() + b"\0" + node.read_bytes() + b"\0")

    root = importlib.resources.files("incflat")
    for child in sorted(root.iterdir(), key=lambda c: c.name):
        if child.name in COMPILER_PACKAGES or (not child.is_dir() and child.name.endswith(".py")):
            add(child, child.name)
    return h.hexdigest()


# Hashed now, when the compiler's modules are imported (pipeline above): a process keys its cache entries by
# the sources it runs, also where they are edited while it runs (as under a long test session).
compiler_hash()


def cache_dir() -> pathlib.Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "incflat"


def cache_key(path: pathlib.Path, text: str, options: pipeline.Options = pipeline.Options()) -> str:
    """The key of a compilation: the compiler, the options, and every file the program reads (its imports')."""
    files = program_files(text, str(path), parse_syntax)
    key = "\0".join([compiler_hash(), path.name, *(f"{name}\0{source}" for name, source in files[1:]), text,
                     repr(options)])
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def compile_cached(path: pathlib.Path, text: str | None = None, cache: pathlib.Path | None = None,
                   verify: bool | None = None, options: pipeline.Options = pipeline.Options()) -> pathlib.Path:
    """The compiled program of `path` (an executable Python file `<stem>.py`, also importable), from the cache
    (`cache`, default `cache_dir()`) or compiled now. Raises CompileError as the compiler does."""
    text = read_source(path) if text is None else text
    out = (cache or cache_dir()) / cache_key(path, text, options) / f"{_module_stem(path)}.py"
    if out.is_file():
        return out
    generated = pipeline.compile(text, str(path), verify_stages=verify, options=options)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, program_text(generated).encode(), mode=0o755)
    return out


def _module_stem(path: pathlib.Path) -> str:
    return re.sub(r"\W", "_", path.stem) or "prog"


def import_module(compiled: pathlib.Path):
    """A compiled program as a module (each file once per process)."""
    name = f"incflat_compiled_{compiled.parent.name}_{compiled.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, compiled)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module


def program_params(compiled) -> list:
    """The tuning parameters of a compiled program (its file, or the file imported as a module), as its
    `--print-params` lists them, read back through the contract's parser (ir.runtime.tuning)."""
    module = import_module(compiled) if isinstance(compiled, pathlib.Path) else compiled
    return tuning.parse_listing(tuning.listing(module.PROGRAM.params))


def version_assignments(compiled) -> list[dict[str, int]]:
    """Threshold values that together reach every code version of a compiled program (a file or a module)."""
    return tuning.version_assignments(tuning.build_forest(program_params(compiled)))
