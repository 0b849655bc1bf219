"""The test suite's device discovery (conftest.py): OpenCL's own failure fails the run, naming the exception;
a machine whose OpenCL works but has no usable device skips the device tests, for the reasons checked here."""

import sys
from types import SimpleNamespace

import pytest

import conftest
from conftest import DeviceDiscoveryError, opencl_devices, usable_devices


def test_pyopencl_imports_and_the_discovery_ran():
    import pyopencl
    assert pyopencl.get_platforms(), "an OpenCL that lists no platform fails the discovery, not skips"
    assert bool(conftest.DEVICES) != bool(conftest.NO_DEVICE), "devices, or the reason why there are none"


def test_no_device_listed_is_the_reason_to_skip():
    assert usable_devices([], lambda device: None) == ([], "no OpenCL device: the OpenCL platforms list none")


def test_devices_whose_compilers_fail_are_the_reason_to_skip():
    cpu, gpu = SimpleNamespace(name="a CPU "), SimpleNamespace(name="a GPU")
    failures = {cpu.name: "error: unknown target CPU 'znver5'", gpu.name: None}
    assert usable_devices([(None, cpu), (None, gpu)], lambda d: failures[d.name]) == (["a GPU"], None)
    failures[gpu.name] = "error: out of resources"
    assert usable_devices([(None, cpu), (None, gpu)], lambda d: failures[d.name]) == (
        [], "no OpenCL device compiles a kernel (a CPU: error: unknown target CPU 'znver5'; "
            "a GPU: error: out of resources)")


def test_a_failing_platform_list_fails_the_discovery(monkeypatch):
    from incflat.ir.runtime import device

    def broken():
        raise RuntimeError("clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR")
    monkeypatch.setattr(device, "list_devices", broken)
    with pytest.raises(DeviceDiscoveryError, match=r"^OpenCL device discovery failed: RuntimeError: "
                                                   r"clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR$"):
        opencl_devices()


def test_a_failing_pyopencl_import_fails_the_discovery(monkeypatch):
    # the runtime's device module imported afresh, with pyopencl's import failing (None in sys.modules)
    monkeypatch.delitem(sys.modules, "incflat.ir.runtime.device")
    monkeypatch.setitem(sys.modules, "pyopencl", None)
    with pytest.raises(DeviceDiscoveryError, match=r"^OpenCL device discovery failed: (ModuleNotFound|Import)Error: "
                                                   r".*pyopencl"):
        opencl_devices()
