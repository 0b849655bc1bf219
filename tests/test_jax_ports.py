"""The JAX versions of the benchmark programs (futhark_examples/jax_ports) agree with the numpy references on
the `ci` datasets. JAX is not a dependency of incflat: without it, these tests are skipped."""

import pathlib
import sys

import numpy as np
import pytest

from incflat.datasets import compare_values

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", False)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "futhark_examples"))
import jax_ports  # noqa: E402
import reference  # noqa: E402


@pytest.mark.parametrize("program", jax_ports.PORTED)
def test_port_agrees_with_numpy(program):
    run = jax_ports.port(program).run
    for d in reference.datasets(program):
        if "ci" not in d.tags:
            continue
        inputs, expected = reference.generate(program, d.name)
        got = [np.asarray(v) for v in run(*inputs)]
        problem = compare_values(got, expected) or reference.closeness_problem(program, got, expected)
        assert problem is None, f"{program} {d.name}: {problem}"
