"""The runtime that every compiled program carries: the only code a compiled program needs besides numpy
and pyopencl.

Its modules import only the standard library, numpy, pyopencl and each other (relatively), so that a
compiled program can carry their text and install them as a package of their own (`loader`). Inside incflat
they are ordinary modules, and the compiler, the interpreter and the tuner use the same code: the value
formats (`values`), the primitive types (`prims`) and the tuning contract (`tuning`) are defined here once.
"""

# The modules a compiled program carries, each after those it imports.
MODULES = ("prims", "values", "tuning", "errors", "scalars", "arrays", "updates", "device", "program")
