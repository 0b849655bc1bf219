"""Host code nested deeper than Python allows in one function (100 levels of indentation, 20 nested blocks):
the Python printer (codegen/pyhost.py) outlines such statements into functions of the entry point; the native
host nests them in C. A program that compiles runs, on both backends, and gives the interpreter's values."""

import numpy as np
import pytest

from conftest import run_program
from incflat.cli import compile_file
from incflat.codegen import cprogram
from incflat.ir.interp.interpreter import run_entry
from incflat.pipeline import source_program


def branches(n: int) -> str:
    """`if x == 0 then 0 else if x == 1 then 3 else ...`: n branches, a host `if` in the else of the last."""
    return ("entry main (x: i32): i32 =\n  "
            + "".join(f"if x == {k} then {3 * k} else " for k in range(n)) + "-1\n")


def loops(n: int) -> str:
    """n nested host loops, one iteration each but the outermost's."""
    inner = "".join(f"{'  ' * (k + 2)}loop acc = acc for i{k} < 1 do\n" for k in range(1, n))
    return (f"entry main (m: i64): i64 =\n  loop acc = 0 for i0 < m do\n{inner}"
            f"{'  ' * (n + 1)}acc + i0 + {' + '.join(f'i{k}' for k in range(1, n))}\n")


BACKENDS = ["pyopencl"] + (["opencl"] if cprogram.c_compiler() else [])
PROGRAMS = {"99 branches": (branches(99), [np.int32(v) for v in (0, 5, 98, 99, -3)]),
            "21 nested loops": (loops(21), [np.int64(v) for v in (0, 5)])}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_deep_host_code_runs(name, backend, device, tmp_path):
    source, inputs = PROGRAMS[name]
    fut = tmp_path / "deep.fut"
    fut.write_text(source)
    program = compile_file(fut, tmp_path / "deep", backend=backend)
    if backend == "pyopencl":
        assert "nonlocal" in program.read_text(), "nothing outlined: the program is not deep enough to test"
    for x in inputs:
        (expected,) = run_entry(source_program(source), "main", [x])
        out = run_program(program, f"{x}{x.dtype.name.replace('int', 'i')}".encode(), "-d", device).stdout.decode()
        assert out.strip() == f"{expected}{expected.dtype.name.replace('int', 'i')}", (x, out)
