"""Makes sure the virtual environment has an OpenCL CPU device that compiles kernels (run by the Makefile).

PoCL, which the `pocl` extra installs, compiles with LLVM 14, which does not know AMD's Zen 5 processors: there
its clang fails every kernel ('unknown target CPU'). On such a machine this installs Intel's OpenCL CPU
runtime into the environment and registers it in VENV/etc/OpenCL/vendors, beside the machine's own drivers;
the Makefile points OCL_ICD_VENDORS there whenever that folder exists. Elsewhere it does nothing.

    VENV/bin/python tests/cpu_opencl.py
"""

import os
import pathlib
import subprocess
import sys

# Pinned: the runtime, and the compiler libraries it links against (its own requirements name only their
# licence package).
INTEL_CPU_RUNTIME = ["intel-opencl-rt==2026.2.0", "intel-cmplr-lib-rt==2026.2.0"]
SYSTEM_VENDORS = pathlib.Path("/etc/OpenCL/vendors")


def working_cpu_devices() -> list[str]:
    """The CPU devices whose compilers build a trivial kernel, probed in a fresh process (an ICD loader reads
    its vendors once)."""
    probe = ("import pyopencl as cl\n"
             "from incflat.ir.runtime.device import compiler_failure, list_devices\n"
             "print('\\n'.join(d.name for _, d in list_devices()\n"
             "                 if d.type & cl.device_type.CPU and compiler_failure(d) is None))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=vendor_env())
    return [line for line in out.stdout.splitlines() if line.strip()] if out.returncode == 0 else []


def vendors() -> pathlib.Path:
    return pathlib.Path(sys.prefix) / "etc" / "OpenCL" / "vendors"


def vendor_env() -> dict:
    env = dict(os.environ)
    if vendors().is_dir():
        env["OCL_ICD_VENDORS"] = str(vendors())
    return env


def install_intel_runtime() -> None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *INTEL_CPU_RUNTIME], check=True)
    folder = vendors()
    # the wheel's registration files name a build machine's path: name the libraries installed here instead,
    # and the machine's own drivers (OCL_ICD_VENDORS replaces the system folder)
    for stale in folder.glob("*.icd"):
        stale.unlink()
    (folder / "intel-cpu.icd").write_text(f"{pathlib.Path(sys.prefix) / 'lib' / 'libintelocl.so'}\n")
    for system in sorted(SYSTEM_VENDORS.glob("*.icd")) if SYSTEM_VENDORS.is_dir() else []:
        (folder / system.name).write_text(system.read_text())


def main() -> int:
    found = working_cpu_devices()
    if not found:
        print("No OpenCL CPU device here compiles a kernel (PoCL's LLVM may not know this processor): "
              "installing Intel's OpenCL CPU runtime into the environment.")
        install_intel_runtime()
        found = working_cpu_devices()
    if not found:
        print("Intel's OpenCL CPU runtime does not compile a kernel here either: the device tests will be skipped.",
              file=sys.stderr)
        return 0
    print(f"OpenCL CPU device: {found[0]}")
    if vendors().is_dir():
        print(f"Programs find it with: export OCL_ICD_VENDORS={vendors()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
