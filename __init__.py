"""incflat: incremental flattening of nested data parallelism to OpenCL, with a post-compile autotuner.

The compiler is the list of stages in `incflat.pipeline`; the command line is `incflat.cli`; the folders
`ir`, `flatten`, `codegen` and `tuner` are the subpackages of the same names. docs/architecture.md shows the
whole.
"""

__version__ = "0.1.0"
