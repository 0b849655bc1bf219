"""Talking to a compiled program through its command line (docs/contracts.md), and to a native program's timed
runs through its `--server` processes (tuner/server.py), and nothing else. Each runs as a child process
(tuner/children.py)."""

from __future__ import annotations

import contextlib
import gzip
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from incflat.ir.runtime.tuning import ContractError, Param, parse_listing, tuning_file_text
from incflat.datasets import Dataset, InlineValues
from incflat.ir.errors import ToolError
from incflat.tuner.children import (RunResult, checked, decode, failure_reason, input_file, output_file, param_args,
                                     run_child)

# ePar values per threshold for one dataset: the sorted distinct values it was compared against.
EPars = Mapping[str, tuple[int, ...]]


def parse_times(text: str) -> tuple[float, ...]:
    return tuple(float(line) for line in text.split())


class Program:
    """A compiled program: a Python one run as `python PROGRAM ...`, so that its executable bit and shebang do
    not matter, or a native one (--backend=opencl) run itself.

    A native program's timed runs of one configuration (run_in_turn of one, and run with timing_runs) go
    through its `--server` processes, one per configuration, kept for the next invocation of that configuration
    (tuner/server.py), unless
    `servers` is False (None: unless the environment's INCFLAT_TUNER_SERVERS is 0); at most `max_servers` live
    at once. Options that a server cannot take (-L, -P, --profile-json, ...) run a process of their own, as
    does every other invocation. `close` ends the servers."""

    def __init__(self, path: Path, extra_args: Sequence[str] = (), servers: bool | None = None,
                 max_servers: int | None = None, shown: Path | None = None):
        from incflat.codegen.cprogram import is_native_program
        from incflat.tuner import server
        self.path = path
        self.shown = shown or path  # the name messages give it (`incflat autotune` tunes a temporary copy)
        self.extra_args = tuple(extra_args)
        native = is_native_program(path)
        # (a native program by its absolute path: a bare name would be looked up on PATH)
        self.command = [str(path.absolute())] if native else [sys.executable, str(path)]
        self.servers = (server.ServerPool(self.command, self.extra_args, path, max_servers or server.MAX_SERVERS)
                        if native and server.servers_wanted(servers) and server.server_options(self.extra_args)
                        else None)
        self._longest_timeout = 0.0  # the longest limit given: starting a server and loading its input

    def close(self) -> None:
        """Ends the program's servers (a later run starts them again)."""
        if self.servers is not None:
            self.servers.close()

    def __enter__(self) -> "Program":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def params(self, timeout: float) -> list[Param]:
        """The program's tuning parameters, from its `--print-params` listing."""
        self._longest_timeout = max(self._longest_timeout, timeout)
        result, listing = self._invoke(["--print-params"], None, timeout, keep_stdout=True)
        if not result.ok:
            raise ToolError(f"{self.shown} --print-params failed: {result.failure}")
        try:
            return parse_listing(decode(listing))
        except ContractError as e:
            raise ToolError(f"{self.shown} --print-params: {e}") from None

    def run(
        self,
        dataset: Dataset,
        *,
        params: Mapping[str, int] | None,
        timeout: float,
        options: Sequence[str] = (),
        timing_runs: int | None = None,
        check: Callable[[bytes], str | None] | None = None,
    ) -> RunResult:
        """Run `dataset` once (or `timing_runs` times with `-r`/`-t`); params None means no `--param` at all.
        Its results are written in binary (`-b`): printing a large result as text can take far longer than the
        runs themselves. They are discarded, or given to `check`, which says what is wrong with them (a failure:
        "wrong result: ...") or returns None."""
        self._longest_timeout = max(self._longest_timeout, timeout)
        if timing_runs is None:
            args = ["-e", dataset.entry, "-b", *options, *param_args(params or {})]
            return checked(*self._invoke(args, dataset, timeout, keep_stdout=check is not None), check)
        return self.run_in_turn(dataset, [params], timeout=timeout, timing_runs=timing_runs, options=options,
                                check=check)

    def run_in_turn(
        self,
        dataset: Dataset,
        configurations: Sequence[Mapping[str, int] | None],
        *,
        timeout: float,
        timing_runs: int,
        options: Sequence[str] = (),
        check: Callable[[bytes], str | None] | None = None,
    ) -> RunResult:
        """Run `dataset` under several configurations in one invocation, `timing_runs` runs each taken in turn
        (`--alternate-tuning`): the first's as --params (None: none), each other's over the program's
        defaults (None: the defaults). The first's runs are `times_us`, the others' `alternate_times_us`; the
        first's results go to `check` if given (as `run`). Through the servers where they can (see Program),
        with the same runs, results and failures."""
        self._longest_timeout = max(self._longest_timeout, timeout)
        if self.servers is not None and len(configurations) == 1:  # (in turn: one process, see server.ServerPool.run)
            served = self.servers.run(dataset, configurations[0], timeout=timeout, timing_runs=timing_runs,
                                      setup_timeout=self._longest_timeout, options=options, check=check)
            if served is not None:
                return served
        first, *others = configurations
        args = ["-e", dataset.entry, "-b", *options, *param_args(first or {}), "-r", str(timing_runs)]
        with contextlib.ExitStack() as stack:
            times_path, read_times = stack.enter_context(output_file())
            for values in others:
                args += ["--alternate-tuning", stack.enter_context(input_file(tuning_file_text(dict(values or {}))))]
            readers = []
            for _ in others:
                path, read = stack.enter_context(output_file())
                args += ["--alternate-times", path]
                readers.append(read)
            result = checked(*self._invoke([*args, "-t", times_path], dataset, timeout,
                                            keep_stdout=check is not None), check)
            if not result.ok:
                return result
            try:
                times = [parse_times(read()) for read in [read_times, *readers]]
            except (OSError, ValueError) as e:
                return RunResult(f"unreadable runtimes file ({e})", result.stderr, result.wall_s)
        if any(len(runs) != timing_runs for runs in times):
            return RunResult(f"expected {timing_runs} runtimes{' of each configuration' if others else ''}, got "
                             f"{', '.join(str(len(runs)) for runs in times)}", result.stderr, result.wall_s)
        return RunResult(None, result.stderr, result.wall_s, times[0], alternate_times_us=tuple(times[1:]))

    def _invoke(
        self, args: list[str], dataset: Dataset | None, timeout: float, keep_stdout: bool = False
    ) -> tuple[RunResult, bytes]:
        argv = [*self.command, *args, *self.extra_args]
        stdout = subprocess.PIPE if keep_stdout else subprocess.DEVNULL  # results can be large
        start = time.monotonic()
        try:
            with _stdin(dataset) as (stdin, data):
                returncode, out, err = run_child(argv, stdin, data, stdout, timeout)
        except subprocess.TimeoutExpired as e:
            return RunResult(f"timed out after {timeout:.3g} s", decode(e.stderr), time.monotonic() - start,
                             timed_out=True), b""
        except OSError as e:
            return RunResult(f"{e.filename or argv[0]}: {e.strerror or e}", "", 0.0), b""
        stderr = decode(err)
        if self.shown != self.path:  # (what the program says of itself names the copy)
            stderr = stderr.replace(str(self.path), str(self.shown)).replace(self.path.name, self.shown.name)
        reason = None if returncode == 0 else failure_reason(returncode, stderr)
        return RunResult(reason, stderr, time.monotonic() - start), out


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

