"""The JAX versions of the benchmark programs (futhark_examples/jax_ports) agree with the numpy references on
the `ci` datasets. JAX is not a dependency of incflat: where it is not installed, these tests skip, for the
reason checked here; a JAX that is installed but does not import fails them."""

import importlib
import pathlib
import sys

import numpy as np
import pytest

from incflat.datasets import compare_values

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "futhark_examples"))
import jax_ports  # noqa: E402
import reference  # noqa: E402

NOT_INSTALLED = "JAX is not installed (it is not a dependency of incflat)"


def jax_or_why_not(import_module=importlib.import_module):
    """(JAX, None), or (None, why its tests skip): only JAX's own absence is a reason; a module that an
    installed JAX cannot import (jaxlib, say) is an error."""
    try:
        return import_module("jax"), None
    except ModuleNotFoundError as e:
        if e.name != "jax":
            raise
        return None, NOT_INSTALLED


jax, NO_JAX = jax_or_why_not()
needs_jax = pytest.mark.skipif(jax is None, reason=NO_JAX or "")
if jax is not None:
    jax.config.update("jax_enable_x64", False)


def test_only_jax_s_absence_skips_its_tests():
    def missing(name):
        def import_module(_):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return import_module
    assert jax_or_why_not(missing("jax")) == (None, NOT_INSTALLED)
    with pytest.raises(ModuleNotFoundError, match="jaxlib"):
        jax_or_why_not(missing("jaxlib"))
    assert jax_or_why_not(lambda name: name) == ("jax", None)


def test_every_port_has_ci_datasets_to_agree_on():
    for program in jax_ports.PORTED:
        assert (pathlib.Path(jax_ports.__file__).parent / f"{program}.py").is_file(), program
        assert any("ci" in d.tags for d in reference.datasets(program)), program


@needs_jax
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
