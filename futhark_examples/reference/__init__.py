"""The benchmark suite's datasets and its independent numpy references.

Every program of `futhark_examples/benchmarks/` has a module here with the same name, holding:

- `DATASETS`: its datasets (`Dataset`: a name, the shape arguments, the run tags), exactly the cases of the
  program's `-- ==` block, which reads them as `data/PROGRAM-NAME.in` and `data/PROGRAM-NAME.out`;
- `inputs(rng, **shape)`: the entry point's arguments, synthetic and seeded (numpy values, in order);
- `reference(*inputs)`: the expected results (a tuple of numpy values), computed with numpy alone.

Data is generated on demand (`futhark_examples/gen_data.py`, or `ensure` from Python) and never committed.
A stamp beside each pair of files records what made it (this module, the program's module and the sibling
modules it imports from), so changing a generator or a reference regenerates the files instead of checking
against stale ones.

Tags: `ci` marks the small datasets that the test suite runs on PoCL; `paper` marks the PPoPP'19 shapes;
`notune` (Futhark's own tag) marks the datasets the tuner must not train on.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import pathlib
import re
import zlib
from dataclasses import dataclass, field
from types import ModuleType

import futhark_data
import numpy as np

EXAMPLES_DIR = pathlib.Path(__file__).resolve().parent.parent
BENCHMARKS_DIR = EXAMPLES_DIR / "benchmarks"
DATA_DIR = BENCHMARKS_DIR / "data"

# The suite, in the order of the paper's Table 1 (then LUD, the thesis's loop case).
PROGRAMS = (
    "locvolcalib", "optionpricing", "heston32", "backprop", "lavamd", "nw", "nn", "nn_batch",
    "srad", "srad_batch", "pathfinder", "pathfinder_batch", "lud",
)


@dataclass(frozen=True)
class Dataset:
    name: str
    shape: dict = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    checked: bool = True  # whether the block checks the results (else it only times them, and no .out is written)


def module(program: str) -> ModuleType:
    if program not in PROGRAMS:
        raise KeyError(f"no benchmark program {program!r} (known: {', '.join(PROGRAMS)})")
    return importlib.import_module(f"{__name__}.{program}")


def source(program: str) -> pathlib.Path:
    return BENCHMARKS_DIR / f"{program}.fut"


def datasets(program: str) -> tuple[Dataset, ...]:
    return module(program).DATASETS


def dataset(program: str, name: str) -> Dataset:
    for d in datasets(program):
        if d.name == name:
            return d
    raise KeyError(f"{program} has no dataset {name!r}")


def files(program: str, name: str) -> tuple[pathlib.Path, pathlib.Path]:
    """The input and the expected-output file of a dataset, as the program's `-- ==` block names them."""
    stem = DATA_DIR / f"{program}-{name}"
    return stem.with_suffix(".in"), stem.with_suffix(".out")


def seed(program: str, name: str) -> int:
    return zlib.crc32(f"{program}/{name}".encode())


def generate(program: str, name: str) -> tuple[list, list | None]:
    """The inputs and the expected outputs of a dataset (None for a dataset that is not checked), computed
    now."""
    mod, d = module(program), dataset(program, name)
    values = list(mod.inputs(np.random.default_rng(seed(program, name)), **d.shape))
    if not d.checked:
        return values, None
    expected = mod.reference(*values)
    return values, list(expected if isinstance(expected, tuple) else (expected,))


def _stamp(program: str, name: str) -> str:
    """What the files of a dataset depend on: this module, the program's module and the sibling modules it
    imports from, and the dataset."""
    digest = hashlib.sha256()
    mod = module(program)
    siblings = sorted(set(re.findall(r"^from \.(\w+) import", inspect.getsource(mod), re.MULTILINE)))
    for m in [mod, importlib.import_module(__name__)] + [importlib.import_module(f"{__name__}.{s}") for s in siblings]:
        digest.update(inspect.getsource(m).encode())
    digest.update(repr(dataset(program, name)).encode())
    return digest.hexdigest()


def ensure(program: str, name: str, force: bool = False) -> tuple[pathlib.Path, pathlib.Path]:
    """Writes a dataset's files unless they are there and up to date; returns their paths."""
    in_path, out_path = files(program, name)
    stamp_path = in_path.with_suffix(".stamp")
    stamp = _stamp(program, name)
    checked = dataset(program, name).checked
    if not force and in_path.exists() and (out_path.exists() or not checked) and stamp_path.exists() \
            and stamp_path.read_text() == stamp:
        return in_path, out_path
    values, expected = generate(program, name)
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    _write_values(in_path, values)
    if checked:
        _write_values(out_path, expected)
    _atomic_write(stamp_path, stamp.encode())
    return in_path, out_path


def _write_values(path: pathlib.Path, values: list) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        for v in values:
            futhark_data.dump(_futhark_value(v), f, binary=True)
    os.replace(tmp, path)


def _atomic_write(path: pathlib.Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _futhark_value(v):
    """numpy scalars and arrays as futhark_data writes them (Python scalars are not typed, so refused)."""
    if isinstance(v, (np.ndarray, np.generic)):
        return np.ascontiguousarray(v) if isinstance(v, np.ndarray) else v
    raise TypeError(f"dataset values must be numpy scalars or arrays, not {type(v).__name__}")


def closeness_problem(program: str, got: list, expected: list) -> str | None:
    """futhark test's tolerance is at least 0.002 in absolute terms: a program whose results are small (option
    prices of a few thousandths) states a relative tolerance too, `TOLERANCE` in its module. The first value
    off by more than it, described, or None."""
    tolerance = getattr(module(program), "TOLERANCE", None)
    if tolerance is None:
        return None
    for k, (g, e) in enumerate(zip(got, expected)):
        g, e = np.asarray(g, np.float64), np.asarray(e, np.float64)
        if g.shape != e.shape or not np.allclose(g, e, **tolerance):
            worst = np.max(np.abs(g - e) / np.maximum(np.abs(e), 1e-30)) if g.shape == e.shape else np.inf
            return f"value #{k}: off by a relative {worst:.2e}, more than {tolerance}"
    return None
