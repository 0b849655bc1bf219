"""Talking to a compiled program through its command line (docs/contracts.md), and nothing else.

A program runs as a child process that dies with the tuner: on Linux the kernel kills it when the tuner dies,
even by SIGKILL (PR_SET_PDEATHSIG), and an interrupt kills it before it propagates. The files a program writes
for the tuner (`-t`) are unnamed temporary files, passed as `/dev/fd/N`: nothing is left in a temporary folder,
whatever happens to the tuner.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
import gzip
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from incflat.ir.runtime.tuning import ContractError, Param, parse_listing, tuning_file_text
from incflat.datasets import Dataset, InlineValues
from incflat.files import signals_held_back
from incflat.ir.errors import ToolError

# ePar values per threshold for one dataset: the sorted distinct values it was compared against.
EPars = Mapping[str, tuple[int, ...]]


@dataclass(frozen=True)
class RunResult:
    """One invocation. `failure` is None on success, else a one-line reason."""

    failure: str | None
    stderr: str
    wall_s: float
    times_us: tuple[float, ...] = ()
    timed_out: bool = False  # the failure is the time limit: a longer one might succeed
    alternate_times_us: tuple[tuple[float, ...], ...] = ()  # run_in_turn: the other configurations' runs

    @property
    def ok(self) -> bool:
        return self.failure is None


def parse_times(text: str) -> tuple[float, ...]:
    return tuple(float(line) for line in text.split())


def param_args(params: Mapping[str, int]) -> list[str]:
    return [arg for name in sorted(params) for arg in ("--param", f"{name}={params[name]}")]


class Program:
    """A compiled program: a Python one run as `python PROGRAM ...`, so that its executable bit and shebang do
    not matter, or a native one (--backend=opencl) run itself."""

    def __init__(self, path: Path, extra_args: Sequence[str] = ()):
        from incflat.codegen.cprogram import is_native_program
        self.path = path
        self.extra_args = tuple(extra_args)
        # (a native program by its absolute path: a bare name would be looked up on PATH)
        self.command = [str(path.absolute())] if is_native_program(path) else [sys.executable, str(path)]

    def params(self, timeout: float) -> list[Param]:
        """The program's tuning parameters, from its `--print-params` listing."""
        result, listing = self._invoke(["--print-params"], None, timeout, keep_stdout=True)
        if not result.ok:
            raise ToolError(f"{self.path} --print-params failed: {result.failure}")
        try:
            return parse_listing(_decode(listing))
        except ContractError as e:
            raise ToolError(f"{self.path} --print-params: {e}") from None

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
        if timing_runs is None:
            args = ["-e", dataset.entry, "-b", *options, *param_args(params or {})]
            return _checked(*self._invoke(args, dataset, timeout, keep_stdout=check is not None), check)
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
        first's results go to `check` if given (as `run`)."""
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
            result = _checked(*self._invoke([*args, "-t", times_path], dataset, timeout,
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
                returncode, out, err = _run_child(argv, stdin, data, stdout, timeout)
        except subprocess.TimeoutExpired as e:
            return RunResult(f"timed out after {timeout:.3g} s", _decode(e.stderr), time.monotonic() - start,
                             timed_out=True), b""
        except OSError as e:
            return RunResult(f"{e.filename or argv[0]}: {e.strerror or e}", "", 0.0), b""
        stderr = _decode(err)
        reason = None if returncode == 0 else _failure_reason(returncode, stderr)
        return RunResult(reason, stderr, time.monotonic() - start), out


def _checked(result: RunResult, out: bytes, check: Callable[[bytes], str | None] | None) -> RunResult:
    """`result`, or a failure where `check` finds its results `out` wrong (no `check`: not checked)."""
    problem = check(out) if check is not None and result.ok else None
    return result if problem is None else dataclasses.replace(result, failure=f"wrong result: {problem}")


# The measurement children running now: an interrupt's handler kills them (kill_children).
_children: set[subprocess.Popen] = set()


def kill_children() -> None:
    """Kills the program runs in progress (their results are then failures, which the caller discards)."""
    for child in list(_children):
        child.kill()


def _run_child(
    argv: list[str], stdin: int | IO[bytes] | None, data: bytes | None, stdout: int, timeout: float
) -> tuple[int, bytes, bytes]:
    """subprocess.run's work, with the child registered for kill_children, dying with the tuner, and sharing
    the tuner's inherited-for-output files (output_file)."""
    # Signals wait until the child is registered: their handlers would otherwise run inside Popen's at-fork
    # callbacks, where Python prints an exception and swallows it, or before kill_children can see the child.
    with signals_held_back() as unblock:
        child = subprocess.Popen(argv, stdin=subprocess.PIPE if data is not None else stdin, stdout=stdout,
                                 stderr=subprocess.PIPE, pass_fds=tuple(_shared_fds),
                                 preexec_fn=_child_set_up(unblock))
        _children.add(child)
    with child:
        try:
            out, err = child.communicate(data, timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.communicate()
            raise subprocess.TimeoutExpired(argv, timeout, out, err) from None
        except BaseException:  # an interrupt: the child must not outlive it
            child.kill()
            raise
        finally:
            _children.discard(child)
    return child.returncode, out or b"", err or b""


def _child_set_up(unblock: Callable[[], None]) -> Callable[[], None]:
    """The child's preexec_fn: the signal mask as it was before signals_held_back, and death with the tuner."""
    die_with_parent = _die_with_parent()

    def set_up() -> None:
        unblock()
        if die_with_parent is not None:
            die_with_parent()

    return set_up


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


@functools.cache
def _die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn that has the kernel SIGKILL the child when the tuner dies (Linux's PR_SET_PDEATHSIG);
    None where that does not exist."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def die_with_parent() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the tuner died before the request took effect
            os._exit(1)

    return die_with_parent


# The descriptors of the unnamed files in use (output_file, input_file), which the children inherit.
_shared_fds: set[int] = set()


@contextmanager
def output_file() -> Iterator[tuple[str, Callable[[], str]]]:
    """An unnamed temporary file for a program's output option (`-t FILE`): the path to give the program
    (/dev/fd/N), and a function that reads what it wrote. It has no name on disk, so nothing can be left
    behind."""
    with tempfile.TemporaryFile() as file:
        fd = file.fileno()
        _shared_fds.add(fd)
        try:
            def read() -> str:
                file.seek(0)
                return file.read().decode()

            yield f"/dev/fd/{fd}", read
        finally:
            _shared_fds.discard(fd)


@contextmanager
def input_file(text: str) -> Iterator[str]:
    """An unnamed temporary file holding `text`, for a program's input option (`--alternate-tuning FILE`): the
    path to give the program (/dev/fd/N, which it opens afresh, from the start)."""
    with tempfile.TemporaryFile() as file:
        file.write(text.encode())
        file.flush()
        _shared_fds.add(file.fileno())
        try:
            yield f"/dev/fd/{file.fileno()}"
        finally:
            _shared_fds.discard(file.fileno())


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
