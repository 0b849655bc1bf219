"""The native host's C sources (issue 51): compiled with the system C compiler into the programs of
`--backend=opencl`. They load OpenCL at run time, so building needs no OpenCL headers or libraries."""

import pathlib

SOURCES = pathlib.Path(__file__).resolve().parent  # the .c and .h files, installed with the package
