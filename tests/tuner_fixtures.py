"""What the tuner's tests share: tests/fake_program.py, the stand-in for a compiled program (its path, its four
thresholds, and the module itself, whose model of runtimes says which version each dataset runs fastest), the
fixtures folder tests/data/tuner, and a threshold's Param."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from incflat.ir.runtime.tuning import Param

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "data" / "tuner"
FAKE = REPO / "tests" / "fake_program.py"
T1, T2, T3, T4 = "main.suff_outer_par_0", "main.suff_intra_par_1", "main.suff_outer_par_2", "main.suff_intra_par_3"


def threshold(name: str, default, ancestors: tuple) -> Param:
    return Param(name, default=default, ancestors=ancestors)


def _load_fake():
    spec = importlib.util.spec_from_file_location("fake_program", FAKE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fake = _load_fake()
