"""`--log FILE`: every evaluation of a tuner run as one JSON object a line.

The first line marks the file as such a log (`{"incflat_autotune_log": 1, ...}`). The tuner replaces a file
only if its first line says that (or the file does not exist): it never overwrites a file it did not write.
Each further line is a measure.Record: dataset, params (null: none given), key (the experiment: the datasets'
paths through the version tree), label, times_us (of this invocation; for an answer from the cache or the
store, all the measurement's runs), failure, wall_s (of the invocation; 0 for an answer from the cache or the
store; of a paired invocation, on its first configuration's line), source (run, run again, cached, stored,
untimed, or paired: runs taken in turn with another configuration's in one invocation) and seconds since the
tuner started.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import IO

from incflat.ir.errors import ToolError
from incflat.tuner.measure import Record
from incflat.files import file_place_problem

MARK = "incflat_autotune_log"
VERSION = 1


def log_path_problem(path: Path) -> str | None:
    """Why the tuner must not write its log to path, or None."""
    if problem := file_place_problem(path):
        return problem
    if not path.exists():
        return None
    try:
        with open(path, "rb") as file:
            first = json.loads(file.readline(1 << 16))
    except (OSError, ValueError):
        first = None
    if not (isinstance(first, dict) and MARK in first):
        return "the file exists and is not a log that incflat autotune wrote; refusing to overwrite it"
    return None


class EvaluationLog:
    def __init__(self, path: Path, program: Path):
        problem = log_path_problem(path)
        if problem:
            raise ToolError(f"--log {path}: {problem}")
        self._started = time.monotonic()
        try:
            self._file: IO[str] = open(path, "w", encoding="utf-8")
        except OSError as e:
            raise ToolError(f"--log {path}: cannot write: {e.strerror}") from None
        self._write({MARK: VERSION, "program": str(program), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")})

    def add(self, record: Record) -> None:
        m = record.measurement
        self._write({
            "dataset": record.dataset.name, "params": dict(record.params) if record.params is not None else None,
            "key": record.key, "label": record.label, "times_us": list(m.times_us), "failure": m.failure,
            "wall_s": round(record.wall_s, 6), "source": record.source,
            "seconds": round(time.monotonic() - self._started, 3),
        })

    def close(self) -> None:
        self._file.close()

    def _write(self, entry: dict) -> None:
        self._file.write(json.dumps(entry, default=str) + "\n")
        self._file.flush()
