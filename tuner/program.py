"""Talking to a compiled program through its command line (docs/contracts.md), and nothing else."""

from __future__ import annotations

import gzip
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from incflat.codegen.runtime.tuning import ContractError, Param, parse_listing
from incflat.tuner.datasets import Dataset, InlineValues
from incflat.tuner.errors import TunerError

# ePar values per threshold for one dataset: the sorted distinct values it was compared against.
EPars = Mapping[str, tuple[int, ...]]


@dataclass(frozen=True)
class RunResult:
    """One invocation. `failure` is None on success, else a one-line reason."""

    failure: str | None
    stderr: str
    wall_s: float
    times_us: tuple[float, ...] = ()

    @property
    def ok(self) -> bool:
        return self.failure is None


def parse_times(text: str) -> tuple[float, ...]:
    return tuple(float(line) for line in text.split())


def param_args(params: Mapping[str, int]) -> list[str]:
    return [arg for name in sorted(params) for arg in ("--param", f"{name}={params[name]}")]


class Program:
    """A compiled program, run as `python PROGRAM ...` so that its executable bit and shebang do not matter."""

    def __init__(self, path: Path, extra_args: Sequence[str] = ()):
        self.path = path
        self.extra_args = tuple(extra_args)

    def params(self, timeout: float) -> list[Param]:
        """The program's tuning parameters, from its `--print-params` listing."""
        result, listing = self._invoke(["--print-params"], None, timeout, keep_stdout=True)
        if not result.ok:
            raise TunerError(f"{self.path} --print-params failed: {result.failure}")
        try:
            return parse_listing(listing)
        except ContractError as e:
            raise TunerError(f"{self.path} --print-params: {e}") from None

    def run(
        self,
        dataset: Dataset,
        *,
        params: Mapping[str, int] | None,
        timeout: float,
        options: Sequence[str] = (),
        timing_runs: int | None = None,
    ) -> RunResult:
        """Run `dataset` once (or `timing_runs` times with `-r`/`-t`); params None means no `--param` at all."""
        args = ["-e", dataset.entry, *options, *param_args(params or {})]
        if timing_runs is None:
            return self._invoke(args, dataset, timeout)[0]
        with tempfile.TemporaryDirectory(prefix="incflat-tune-") as folder:
            times_file = Path(folder) / "times"
            result, _ = self._invoke([*args, "-r", str(timing_runs), "-t", str(times_file)], dataset, timeout)
            if not result.ok:
                return result
            try:
                times = parse_times(times_file.read_text())
            except (OSError, ValueError) as e:
                return RunResult(f"unreadable runtimes file ({e})", result.stderr, result.wall_s)
        if len(times) != timing_runs:
            return RunResult(f"expected {timing_runs} runtimes, got {len(times)}", result.stderr, result.wall_s)
        return RunResult(None, result.stderr, result.wall_s, times)

    def _invoke(
        self, args: list[str], dataset: Dataset | None, timeout: float, keep_stdout: bool = False
    ) -> tuple[RunResult, str]:
        argv = [sys.executable, str(self.path), *args, *self.extra_args]
        stdout = subprocess.PIPE if keep_stdout else subprocess.DEVNULL  # results can be large
        start = time.monotonic()
        try:
            with _stdin(dataset) as (stdin, data):
                done = subprocess.run(
                    argv, stdin=stdin, input=data, stdout=stdout, stderr=subprocess.PIPE, timeout=timeout, check=False
                )
        except subprocess.TimeoutExpired as e:
            return RunResult(f"timed out after {timeout:.3g} s", _decode(e.stderr), time.monotonic() - start), ""
        except OSError as e:
            return RunResult(f"{e.filename or argv[0]}: {e.strerror or e}", "", 0.0), ""
        stderr = _decode(done.stderr)
        reason = None if done.returncode == 0 else _failure_reason(done.returncode, stderr)
        return RunResult(reason, stderr, time.monotonic() - start), _decode(done.stdout)


@contextmanager
def _stdin(dataset: Dataset | None) -> Iterator[tuple[int | IO[bytes] | None, bytes | None]]:
    """(stdin, input) for subprocess.run: inline values as bytes, a values file opened (it may be large)."""
    if dataset is None:
        yield subprocess.DEVNULL, None
    elif isinstance(dataset.input, InlineValues):
        yield None, dataset.input.text.encode()
    elif dataset.input.path.suffix == ".gz":  # Futhark's tools accept gzipped data files
        with gzip.open(dataset.input.path, "rb") as compressed:
            yield None, compressed.read()
    else:
        with open(dataset.input.path, "rb") as file:
            yield file, None


def _decode(data: bytes | str | None) -> str:
    if isinstance(data, str):
        return data
    return (data or b"").decode(errors="replace")


def _failure_reason(returncode: int, stderr: str) -> str:
    """The program's own `Error: ...` line if it printed one, else its last stderr line, else the exit status."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error")]
    detail = errors[-1] if errors else lines[-1] if lines else "no message"
    return f"exit status {returncode}: {detail}"
