"""The incflat autotuner: chooses threshold values for a compiled program on the datasets of its .fut file.

`autotune(fut, program)` is the whole job (datasets, measurement, the simple-case tree search, write-back);
`main(argv)` is its command line (`python -m incflat.tuner`, and `incflat autotune`).
"""

from incflat.tuner.autotune import Interrupted, autotune, main
from incflat.tuner.result import DatasetReport, TuneResult

__all__ = ["DatasetReport", "Interrupted", "TuneResult", "autotune", "main"]
