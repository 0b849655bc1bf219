"""The native host's OpenCL layer (codegen/native/opencl.c), through the launch micro benchmark
(futhark_examples/micro/launch.c): built warning-free with the system C compiler, it loads pyopencl's own ICD
loader at run time and finds the test device as pyopencl does; what it cannot load or find is one line of error
and exit status 1."""

import ctypes.util
import importlib.util
import json
import math
import os
import subprocess

import pytest

from conftest import ROOT, needs_device

spec = importlib.util.spec_from_file_location("launch", ROOT / "futhark_examples" / "micro" / "launch.py")
launch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(launch)

pytestmark = pytest.mark.skipif(launch.c_compiler() is None,
                                reason="no C compiler (cc, or $CC) to build the native host's C sources")
MODES = ("bare_us", "args_us", "pipelined_us")


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return launch.compile_launch(tmp_path_factory.mktemp("launch"), flags=("-Werror",))


def run(program, *args, library=None, **env) -> subprocess.CompletedProcess:
    """The program with the tests' environment less INCFLAT_OPENCL_LIBRARY unless given (opencl.c prepares
    pyopencl's loader itself)."""
    environment = dict(os.environ)
    environment.pop("INCFLAT_OPENCL_LIBRARY", None)
    environment.update(env)
    return subprocess.run([str(program), *args, *(["--library", str(library)] if library else [])],
                          capture_output=True, text=True, env=environment, timeout=120)


def one_line_error(proc, *parts):
    assert proc.returncode == 1, (proc.returncode, proc.stderr)  # (a crash would be negative: a signal)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("launch: "), proc.stderr
    for part in parts:
        assert part in lines[0]
    return lines[0]


def test_launch_figures(program, device):
    proc = run(program, "-d", device, "-n", "200", library=launch.pyopencl_loader())
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["device"] == device.strip() and out["platform"] and out["n"] == 200
    assert all(math.isfinite(out[m]) and out[m] > 0 for m in MODES), out


def test_launch_script(device, tmp_path):
    """launch.py: the C program's figures and pyopencl's, on the same device."""
    launch.main(["-d", device, "-n", "200", "--json", str(tmp_path / "launch.json")])
    out = json.loads((tmp_path / "launch.json").read_text())
    assert out["device"] == device.strip() and out["n"] == 200
    assert all(out[side][m] > 0 for side in ("c", "pyopencl") for m in launch.MODES), out


def test_missing_library(program):
    one_line_error(run(program, library="/nonexistent/libOpenCL.so.1"),
                   "cannot load the OpenCL library: /nonexistent/libOpenCL.so.1")


def test_environment_names_the_library(program):
    """INCFLAT_OPENCL_LIBRARY wins over the path a caller passes, and is the only library tried."""
    one_line_error(run(program, library=launch.pyopencl_loader(), INCFLAT_OPENCL_LIBRARY="/nonexistent/libcl.so"),
                   "/nonexistent/libcl.so", "INCFLAT_OPENCL_LIBRARY")


def test_library_without_opencl(program):
    libm = ctypes.util.find_library("m")
    if libm is None:
        pytest.skip("no libm to load in OpenCL's place")
    one_line_error(run(program, library=libm), f"the OpenCL library {libm} has no function clGetPlatformIDs")


@needs_device
def test_unknown_device(program):
    line = one_line_error(run(program, "-d", "no such device", library=launch.pyopencl_loader()),
                          "no OpenCL device matches device 'no such device' (the devices: ")
    assert "none)" not in line  # the devices present are named


def test_usage(program):
    proc = run(program, "-n", "zero")
    assert proc.returncode == 2 and "usage: launch" in proc.stderr
