"""The whole compiler: one list of stages, each a pure function from one IR to the next.

    source text --parse--> Syntax --check--> source IR (ir.source.Program)
      --inline_calls ... remove_dead_code, tile_stencil_loops--> normalised source IR (redomap / scanomap
        formed, G4 and G5 applied, stencil loops tiled in time)
      --flatten--> target IR (ir.target.Program: guarded versions of segops)
      --rename_interfaces, sink_iotas, inline_cheap_maps, fuse_scan_postmaps, inline_thread_maps, prune_context,
        prune_unsupported, sink_scalars-->
      target IR for codegen
      --generate--> codegen.program.GeneratedProgram (kernels, host code, tuning parameters)

`compile(text, filename, until=STAGE)` runs the list up to any stage, and `run(ir, after=STAGE, until=...)` goes
on from the IR a stage gave. With `verify_stages=True` (the test suite sets INCFLAT_VERIFY=1; `--verify` on the
command line) the verifier of each stage's output type runs after it, so a stage that breaks the IR is named at
once.
"""

from __future__ import annotations

import contextlib
import os
import functools
import sys
import threading
from dataclasses import dataclass
from typing import Callable

from incflat.codegen.host import supports
from incflat.codegen.lower.cheap_maps import inline_cheap_maps
from incflat.codegen.lower.context import prune_context
from incflat.codegen.lower.device_scalars import sink_scalars
from incflat.codegen.lower.interfaces import rename_interfaces
from incflat.codegen.lower.iotas import sink_iotas
from incflat.codegen.lower.postmaps import fuse_scan_postmaps
from incflat.codegen.lower.prune import prune_unsupported
from incflat.codegen.lower.thread_maps import inline_thread_maps
from incflat.codegen.program import GeneratedProgram, generate, generated_text, verify_generated
from incflat.flatten import normalize as N
from incflat.flatten.incremental import flatten
from incflat.flatten.stencils import tile_stencil_loops
from incflat.ir import pretty
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.errors import CompileError
from incflat.ir.frontend.check import check
from incflat.ir.frontend.parse import parse
from incflat.ir.frontend.syntax import SourceText, Syntax
from incflat.ir.verify import verify_source, verify_target

FLATTENINGS = ("incremental", "moderate")
VERIFY_ENVIRONMENT = "INCFLAT_VERIFY"  # "1": verify after every stage unless told otherwise


@dataclass(frozen=True)
class Options:
    """What a user chooses about a compilation; each stage takes the options it names."""
    flattening: str = "incremental"  # incremental (guarded versions) or moderate (one version)
    checks: bool = True  # bounds, division and size checks inside kernels (`--unsafe` turns them off)


@dataclass(frozen=True)
class Stage:
    name: str
    run: Callable  # run(ir, **{option: value for option in options}) -> ir
    takes: type
    gives: type
    options: tuple = ()  # the names of the Options fields it takes

    def __call__(self, ir, options: Options):
        return self.run(ir, **{name: getattr(options, name) for name in self.options})


def _normalisation(fn) -> Stage:
    """A normalisation pass: source IR to source IR, named after its function."""
    return Stage(fn.__name__, fn, S.Program, S.Program)


STAGES = (
    Stage("parse", parse, SourceText, Syntax),
    Stage("check", check, Syntax, S.Program),  # types, sizes, uniqueness; lowered to A-normal form
    _normalisation(N.inline_calls),
    _normalisation(N.propagate_copies),
    _normalisation(N.index_rotations),  # a map reads a rotated array through its index function
    _normalisation(N.read_replicates),  # a map over a replicate binds the replicated value
    _normalisation(N.hoist_invariants),
    _normalisation(N.replicates_as_maps),  # a replicate inside a map is a nest of its own (G6)
    _normalisation(N.fuse_into_reductions),  # map into map, map into reduce/scan: redomap / scanomap
    _normalisation(N.reductions_to_redomaps),
    _normalisation(N.interchange_array_reductions),  # G4
    _normalisation(N.rearrange_maps),  # G5
    _normalisation(N.sink_index_arithmetic),  # perfect nests: a row's index arithmetic computed per element
    _normalisation(N.remove_dead_code),
    _normalisation(tile_stencil_loops),  # several steps of a stencil loop a launch (time tiling)
    Stage("flatten", flatten, S.Program, T.Program, ("flattening",)),  # G0-G3, G6-G9: guarded versions
    Stage("rename_interfaces", rename_interfaces, T.Program, T.Program),
    Stage("sink_iotas", sink_iotas, T.Program, T.Program),  # a kernel computes the iotas it reads
    Stage("inline_cheap_maps", inline_cheap_maps, T.Program, T.Program),  # readers compute a few scalars a point
    Stage("fuse_scan_postmaps", fuse_scan_postmaps, T.Program, T.Program),  # a thread's scan maps as it goes
    Stage("inline_thread_maps", inline_thread_maps, T.Program, T.Program),  # a thread recomputes cheap elements it reads
    Stage("prune_context", prune_context, T.Program, T.Program),  # kernels take only the arrays they read
    # the versions code generation cannot handle yet (code generation's `supports` says which)
    Stage("prune_unsupported", functools.partial(prune_unsupported, supports=supports), T.Program, T.Program),
    Stage("sink_scalars", sink_scalars, T.Program, T.Program),  # kernels compute what they read of kernels' scalars
    Stage("generate", generate, T.Program, GeneratedProgram, ("checks",)),
)

STAGE_NAMES = tuple(stage.name for stage in STAGES)


def _check_composition():
    for before, after in zip(STAGES, STAGES[1:]):
        assert before.gives is after.takes, f"{before.name} gives {before.gives.__name__}, " \
                                           f"{after.name} takes {after.takes.__name__}"


_check_composition()


# The verifier of each IR type: every stage's output is checked by the verifier of its type.
VERIFIERS = {SourceText: None, Syntax: None, S.Program: verify_source, T.Program: verify_target,
             GeneratedProgram: verify_generated}


def verify(ir, stage: str = "") -> None:
    verifier = VERIFIERS[type(ir)]
    if verifier is not None:
        verifier(ir, stage)


def verifying_by_default() -> bool:
    return os.environ.get(VERIFY_ENVIRONMENT) == "1"


def compile(text: str, filename: str = "<input>", until: str = "generate", verify_stages: bool | None = None,
            options: Options = Options()):
    """Source text -> the IR after the stage named `until` (by default the generated program)."""
    return run(SourceText(text, filename), None, until, verify_stages, options)


def run(ir, after: str | None, until: str = "generate", verify_stages: bool | None = None,
        options: Options = Options()):
    """The stages after the one named `after` (all of them when None), up to the one named `until`, on `ir`:
    the IR that `after` gives."""
    names = [stage.name for stage in STAGES]
    for name in (after, until):
        if name is not None and name not in names:
            raise ValueError(f"no stage {name!r}; the stages are {', '.join(names)}")
    first, last = (0 if after is None else names.index(after) + 1), names.index(until)
    if first > last or not isinstance(ir, STAGES[first].takes):
        raise ValueError(f"cannot run the stages from after {after} to {until} on a {type(ir).__name__}")
    checked = verifying_by_default() if verify_stages is None else verify_stages
    def stages(ir):
        for stage in STAGES[first:last + 1]:
            ir = stage(ir, options)
            if checked:
                verify(ir, stage.name)
        return ir
    return _deeply(lambda: stages(ir))


def show(ir) -> str:
    """The text of an IR, as `incflat versions --until STAGE` prints it."""
    if isinstance(ir, SourceText):
        return ir.text
    if isinstance(ir, Syntax):
        return pretty.syntax(ir.decls)
    if isinstance(ir, GeneratedProgram):
        return generated_text(ir)
    return pretty.program(ir)


def source_program(text: str, filename: str = "<input>") -> S.Program:
    """The front end's result: the checked source IR in A-normal form."""
    return compile(text, filename, until="check")


def target_program(text: str, filename: str = "<input>", options: Options = Options()) -> T.Program:
    """The target IR as code generation receives it."""
    return compile(text, filename, until="prune_unsupported", options=options)


RECURSION_LIMIT = 200_000  # the passes recurse on the nesting of expressions (`if ... else if ...`, lambdas)
STACK_BYTES = 1 << 30  # the stack of the thread that compiles: room for that recursion (only what is used is touched)


def _deeply(fn):
    """fn() in a thread with a large stack and a raised recursion limit; a nesting deeper even than that is a
    CompileError ("nests too deeply") at the innermost expression being processed, never a RecursionError."""
    outcome = {}

    def work():
        try:
            outcome["value"] = fn()
        except RecursionError as e:
            outcome["error"] = CompileError("The program nests too deeply for incflat (expressions inside "
                                            "expressions); split it with let bindings or functions.", _loc_of(e))
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            outcome["error"] = e

    with _recursion_limit(RECURSION_LIMIT):  # (the limit is the interpreter's, not the thread's)
        with _thread_stack(STACK_BYTES):
            thread = threading.Thread(target=work, name="incflat-compile", daemon=True)
            thread.start()
        thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _loc_of(error: BaseException):
    """The location of the innermost syntax node or statement that the failed code was processing."""
    tb, found = error.__traceback__, None
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            if isinstance(getattr(value, "loc", None), S.Loc):
                found = value.loc
        tb = tb.tb_next
    return found


@contextlib.contextmanager
def _recursion_limit(limit):
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


@contextlib.contextmanager
def _thread_stack(size):
    old = threading.stack_size(size)
    try:
        yield
    finally:
        threading.stack_size(old)


__all__ = ["FLATTENINGS", "Options", "STAGES", "STAGE_NAMES", "Stage", "compile", "run", "show", "source_program",
           "target_program", "verify"]
