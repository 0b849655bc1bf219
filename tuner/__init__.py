"""The incflat autotuner: chooses threshold values for a compiled program on the datasets of its .fut file.

`autotune(TuneRequest(fut, program))` is the whole job (datasets, measurement, the search, write-back, the
report); `main(argv)` is its command line (`python -m incflat.tuner`, and `incflat autotune`).
"""

from incflat.tuner.autotune import (CompileModerate, Interrupted, Measuring, Searching, TuneRequest, Writing,
                                    autotune)
from incflat.tuner.command import main
from incflat.tuner.result import DatasetReport, TuneResult

__all__ = ["CompileModerate", "DatasetReport", "Interrupted", "Measuring", "Searching", "TuneRequest", "TuneResult",
           "Writing", "autotune", "main"]
