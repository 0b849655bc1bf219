"""Integer arithmetic in host code (an entry point's scalar statements, run by the generated Python) wraps at
its type's width as the reference interpreter does, constants and their signs included: the host writes
integer constants as Python ints and wraps through a table of each type's range."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from conftest import load_and_compile
from incflat.datasets import compare_values
from incflat.harness import Compiled, Interpreter

SIGNED = ("i8", "i16", "i32", "i64")
UNSIGNED = ("u8", "u16", "u32", "u64")


def source(t: str) -> str:
    big = np.iinfo(dtype(t)).max
    negative = f"x * -3{t}, x - -7{t}, " if t in SIGNED else ""
    return (f"entry main (x: {t}) (y: {t}): ({t}, {t}, {t}, {t}, {t}, {t}{', ' + t + ', ' + t if negative else ''}) =\n"
            f"  ({negative}x + y, x - 1{t}, 100{t} * x, {big}{t} + y, (x & 12{t}) | (y ^ 5{t}), 1{t} + x * y)\n")


def dtype(t: str) -> np.dtype:
    return np.dtype(("int" if t[0] == "i" else "uint") + t[1:])


@pytest.mark.parametrize("t", SIGNED + UNSIGNED)
def test_host_integer_arithmetic_wraps_as_the_interpreter_does(device, tmp_path_factory, t):
    loaded, compiled = load_and_compile(source(t), tmp_path_factory.mktemp("host-arith"))
    info = np.iinfo(dtype(t))
    edge = st.sampled_from([int(info.min), int(info.min) + 1, -1 if t in SIGNED else 1, 0, int(info.max)])
    values = st.one_of(edge, st.integers(int(info.min), int(info.max)))
    runner = Compiled(compiled, device, {}, timeout=60)

    @settings(max_examples=25, deadline=None, database=None)
    @given(x=values, y=values)
    def agree(x, y):
        args = [dtype(t).type(x), dtype(t).type(y)]
        want, got = Interpreter(loaded).run("main", args), runner.run("main", args)
        assert want.error is None and got.error is None, (want.error, got.error)
        assert compare_values(list(got.values), list(want.values)) is None

    agree()
