"""`python -m incflat`: the command line."""

from incflat.cli import run

run()
