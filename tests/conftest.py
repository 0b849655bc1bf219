"""Shared fixtures: the OpenCL devices present, and compiling and running programs."""

import os
import pathlib
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, settings

from incflat import pipeline

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Every compilation in the test suite, in this process and in the commands it runs, verifies the IR after
# every stage of the pipeline.
os.environ[pipeline.VERIFY_ENVIRONMENT] = "1"

# The long fuzzing profile (tests/test_fuzz.py, test_differential.py; strategies.fuzz_settings): random, with
# INCFLAT_FUZZ_FACTOR (default 100) times the examples of the CI run. `--hypothesis-profile=long` or
# INCFLAT_FUZZ=long selects it; the default run is derandomized and small.
settings.register_profile("long", deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)
if os.environ.get("INCFLAT_FUZZ") == "long":
    settings.load_profile("long")


class DeviceDiscoveryError(Exception):
    """OpenCL itself failed (pyopencl's import, the ICD loader, a platform): not a machine without a device."""


def usable_devices(present: list, compiler_failure) -> tuple[list, str | None]:
    """(the names of the devices among present, (platform, device) pairs, whose compiler works; why none is
    usable, or None where one is: the reason the device tests skip)."""
    usable = [d.name for _, d in present if compiler_failure(d) is None]
    if usable:
        return usable, None
    if not present:
        return [], "no OpenCL device: the OpenCL platforms list none"
    failures = "; ".join(f"{d.name.strip()}: {compiler_failure(d)}" for _, d in present)
    return [], f"no OpenCL device compiles a kernel ({failures})"


def opencl_devices() -> tuple[list, str | None]:
    """usable_devices of every OpenCL device present (PoCL in CI, or Intel's CPU runtime where PoCL's compiler
    does not know the processor; and the GPU when one is lent). OpenCL's own failure raises
    DeviceDiscoveryError, which fails the run: it must not pass for a machine with no device."""
    try:
        from incflat.ir.runtime.device import compiler_failure, list_devices
        return usable_devices(list_devices(), compiler_failure)
    except Exception as e:
        raise DeviceDiscoveryError(f"OpenCL device discovery failed: {type(e).__name__}: {e}") from e


DEVICES, NO_DEVICE = opencl_devices()
needs_device = pytest.mark.skipif(not DEVICES, reason=NO_DEVICE or "")


@pytest.fixture(params=DEVICES or [None], ids=lambda d: d or "no-device")
def device(request):
    if request.param is None:
        pytest.skip(NO_DEVICE)
    return request.param


# The corpus programs (tests/programs) with a construct that code generation does not have yet, and what their
# Unsupported error names (test_corpus.py, test_verify.py).
UNSUPPORTED = {
    "filter_in_map": "filter inside a kernel",
    "irregular_scan": "an intermediate array inside a kernel whose size is computed in the kernel",
    "array_operator_general": "a reduction or scan operator on arrays that is not elementwise",
}


def compile_program(source: str, directory: pathlib.Path, name: str = "prog") -> pathlib.Path:
    """Compiles source text to an executable program in directory."""
    from incflat.cli import compile_file
    fut = directory / f"{name}.fut"
    fut.write_text(source)
    return compile_file(fut, directory / name)


def run_program(program: pathlib.Path, stdin: bytes, *args, check=True) -> subprocess.CompletedProcess:
    # a compiled program needs numpy and pyopencl but not this repository: keep it off the path
    path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and pathlib.Path(p).resolve() != ROOT]
    from incflat.codegen.cprogram import is_native_program
    command = [str(program)] if is_native_program(program) else [sys.executable, str(program)]
    proc = subprocess.run([*command, *args], input=stdin, capture_output=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=os.pathsep.join(path)))
    if check and proc.returncode != 0:
        raise AssertionError(f"{program} {' '.join(args)} failed:\n{proc.stderr.decode()}")
    return proc


def load_and_compile(source: str, folder: pathlib.Path):
    """A generated program, written to folder, loaded (the front end must accept it) and compiled (cached there):
    (the loaded program, the compiled module)."""
    from incflat.compiled import compile_cached
    from incflat.harness import load_program
    from incflat.ir.errors import CompileError, format_error
    path = folder / "generated.fut"
    path.write_text(source)
    program = load_program(path)
    assert program.error is None, format_error(program.error, source)
    try:
        return program, compile_cached(path, source, cache=folder / "cache")
    except CompileError as e:
        pytest.fail(format_error(e, source))


def earlier_tuning(values: dict) -> str:
    """A tuning file as an earlier tuner run wrote it (its provenance header): one a tuner may replace."""
    from incflat.ir.runtime.tuning import tuning_file_text
    from incflat.tuner.writeback import Provenance, tuning_header
    earlier = Provenance("an earlier device", "2026-01-01T00:00:00+00:00", ("an earlier dataset",), "tree")
    return tuning_file_text(values, tuning_header(earlier))
