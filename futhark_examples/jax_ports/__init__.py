"""JAX versions of some benchmark programs: what a Python user would write instead of incflat (jit, vmap, lax
scans and loops), from the same algorithms, on the same datasets. Each module `jax_ports.PROGRAM` has
`run(*inputs)`: a jitted function of the program's inputs (numpy values, in the entry point's order) that
returns its results as a tuple of JAX arrays."""

import importlib

PORTED = ("locvolcalib", "optionpricing", "lud", "nw")


def port(program: str):
    return importlib.import_module(f"{__name__}.{program}")
