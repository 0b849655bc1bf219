"""The runtime that compiled programs carry (codegen/runtime): self-contained modules, installed from the
program's own text, shared by the programs of one runtime in a process."""

import ast
import importlib.resources
import os
import subprocess
import sys


import numpy as np
import pytest

from conftest import compile_program, needs_device
from incflat.ir import runtime
from incflat.codegen.program import runtime_package
from incflat.ir.runtime.errors import ProgramError

STANDARD = set(sys.stdlib_module_names) | {"numpy", "pyopencl"}


def test_runtime_modules_import_only_the_standard_library_numpy_pyopencl_and_each_other():
    files = importlib.resources.files(runtime.__name__)
    for k, name in enumerate(runtime.MODULES):
        tree = ast.parse(files.joinpath(f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert alias.name.split(".")[0] in STANDARD, (name, alias.name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # a sibling, installed before this module
                    assert node.level == 1 and node.module in runtime.MODULES[:k], (name, node.module)
                else:
                    assert node.module.split(".")[0] in STANDARD, (name, node.module)


def test_the_loader_is_self_contained():
    tree = ast.parse(importlib.resources.files(runtime.__name__).joinpath("loader.py").read_text())
    imports = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert set(imports) <= set(sys.stdlib_module_names)
    assert not any(isinstance(n, ast.ImportFrom) for n in ast.walk(tree))


@needs_device
def test_a_compiled_program_runs_where_incflat_cannot_be_imported(tmp_path):
    program = compile_program("entry main [n] (xs: [n]i32): i32 = reduce (+) 0 (map (* 2) xs)\n", tmp_path)
    blocker = tmp_path / "blocker" / "incflat"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('a compiled program must not import incflat')\n")
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]  # numpy, pyopencl
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker.parent), *inherited]))
    done = subprocess.run([sys.executable, str(program)], input=b"[1, 2, 3]", capture_output=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "12i32"


@needs_device
def test_two_programs_share_one_runtime_in_a_process(tmp_path):
    """Kernels of the same name in two programs take different arguments: each program keeps its own."""
    import importlib.util
    first = compile_program("entry main [n] (xs: [n]f32): [n]f32 = map (+ 1) xs\n", tmp_path, "first")
    second = compile_program("entry main [n] (xs: [n]i64) (k: i64): [n]i64 = map (* k) xs\n", tmp_path, "second")
    modules = []
    for path in (first, second):
        spec = importlib.util.spec_from_loader(path.name, importlib.machinery.SourceFileLoader(path.name, str(path)))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules.append(module)
    assert runtime_package() in sys.modules
    assert modules[0].PROGRAM.kernels["segmap_0"].scalar_prims != modules[1].PROGRAM.kernels["segmap_0"].scalar_prims
    one, two = (m.load() for m in modules)
    assert one.main(np.array([1, 2], np.float32)).tolist() == [2.0, 3.0]
    assert two.main(np.array([1, 2], np.int64), np.int64(3)).tolist() == [3, 6]
    assert one.main(np.array([5], np.float32)).tolist() == [6.0]


def test_a_failing_runtime_module_leaves_nothing_installed():
    source = importlib.resources.files(runtime.__name__).joinpath("loader.py").read_text()
    namespace = {}
    exec(compile(source, "loader.py", "exec"), namespace)
    with pytest.raises(ZeroDivisionError):
        namespace["install_runtime"]("incflat_runtime_broken", (("first", "X = 1\n"), ("second", "1 / 0\n")))
    assert not any(name.startswith("incflat_runtime_broken") for name in sys.modules)


class _FakeDevice:
    def __init__(self, name, gpu=False):
        import pyopencl as cl
        self.name, self.type = name, cl.device_type.GPU if gpu else cl.device_type.CPU


class _FakePlatform:
    name = "Fake OpenCL"


def test_a_device_whose_compiler_fails_is_passed_over(monkeypatch):
    """PoCL 3.0 lists itself on a processor its LLVM does not know (Zen 5) and then fails every kernel: the
    runtime takes the next device that compiles, and says why when none does."""
    from incflat.ir.runtime import device as dev
    broken, working, gpu = _FakeDevice("broken-cpu"), _FakeDevice("working-cpu"), _FakeDevice("gpu", gpu=True)
    failures = {broken: "error: unknown target CPU 'generic'", working: None, gpu: None}
    monkeypatch.setattr(dev, "compiler_failure", failures.__getitem__)
    monkeypatch.setattr(dev, "list_devices", lambda: [(_FakePlatform(), d) for d in (broken, working)])
    assert dev.choose_device() is working
    monkeypatch.setattr(dev, "list_devices", lambda: [(_FakePlatform(), d) for d in (broken, working, gpu)])
    assert dev.choose_device() is gpu  # a GPU first, as always
    assert dev.choose_device(device_sub="cpu") is working
    with pytest.raises(ProgramError, match=r"broken-cpu \(Fake OpenCL\): error: unknown target CPU 'generic'"):
        dev.choose_device(device_sub="broken")


def test_no_platform_or_no_matching_device_says_what_there_is(monkeypatch):
    import pyopencl as cl
    from incflat.ir.runtime import device as dev

    def no_platform():
        raise cl.RuntimeError("clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR")
    monkeypatch.setattr(dev.cl, "get_platforms", no_platform)
    with pytest.raises(ProgramError, match=r"^no OpenCL platform is installed \(clGetPlatformIDs failed: "
                                           r"PLATFORM_NOT_FOUND_KHR\): install .*pocl-binary-distribution"):
        dev.choose_device()
    monkeypatch.setattr(dev, "list_devices", lambda: [(_FakePlatform(), _FakeDevice("cpu-one"))])
    with pytest.raises(ProgramError, match=r"^no OpenCL device matches device 'gpu' \(the devices: cpu-one "
                                           r"\(Fake OpenCL\)\)$"):
        dev.choose_device(device_sub="gpu")


def test_timed_runs_pause_the_garbage_collector_and_collect_between_runs():
    """The collector's pauses came at the same call of every invocation, so on the same configuration of runs
    taken in turn (PoCL, backprop: the second of two identical configurations timed 1.7x the first): off
    while a run is timed, it collects between runs, so that a run's cycles do not pile up over many runs."""
    import gc
    import types
    import weakref

    from incflat.ir.runtime.program import collector_paused, _timed_runs

    class Node:
        pass

    left, enabled = [], []

    class FakeContext:
        queue = types.SimpleNamespace(finish=lambda: None)

        def begin_run(self):
            pass

        def call(self, fn, inputs):
            enabled.append(gc.isenabled())
            cycle = Node()
            cycle.self = cycle
            left.append(weakref.ref(cycle))
            return ("result",)

        def check_errors(self):
            pass

    times = [[], []]
    with collector_paused():
        results = _timed_runs(types.SimpleNamespace(runs=3), types.SimpleNamespace(fn=None),
                              [FakeContext(), FakeContext()], (), times)
        assert sum(ref() is not None for ref in left) <= 1  # only the last run's cycle awaits collection
    assert gc.isenabled() and not any(enabled)
    assert results == ("result",) and [len(t) for t in times] == [3, 3]
