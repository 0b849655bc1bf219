"""The tuner's child processes: a program's run (`run_child`) and what it shares with its server processes
(tuner/server.py). A child dies with the tuner: on Linux the kernel kills it when the tuner dies, even by
SIGKILL (PR_SET_PDEATHSIG), and an interrupt kills it before it propagates (kill_children). The files a
program writes for the tuner (`-t`) are unnamed temporary files, passed as `/dev/fd/N`: nothing is left in a
temporary folder, whatever happens to the tuner.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

from incflat.files import signals_held_back


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


def param_args(params: Mapping[str, int]) -> list[str]:
    return [arg for name in sorted(params) for arg in ("--param", f"{name}={params[name]}")]


def checked(result: RunResult, out: bytes, check: Callable[[bytes], str | None] | None) -> RunResult:
    """`result`, or a failure where `check` finds its results `out` wrong (no `check`: not checked)."""
    problem = check(out) if check is not None and result.ok else None
    return result if problem is None else dataclasses.replace(result, failure=f"wrong result: {problem}")


# The measurement children running now: an interrupt's handler kills them (kill_children).
children: set[subprocess.Popen] = set()


def kill_children() -> None:
    """Kills the program runs in progress (their results are then failures, which the caller discards)."""
    for child in list(children):
        child.kill()


def run_child(
    argv: list[str], stdin: int | IO[bytes] | None, data: bytes | None, stdout: int, timeout: float
) -> tuple[int, bytes, bytes]:
    """subprocess.run's work, with the child registered for kill_children, dying with the tuner, and sharing
    the tuner's inherited-for-output files (output_file)."""
    # Signals wait until the child is registered: their handlers would otherwise run inside Popen's at-fork
    # callbacks, where Python prints an exception and swallows it, or before kill_children can see the child.
    with signals_held_back() as unblock:
        child = subprocess.Popen(argv, stdin=subprocess.PIPE if data is not None else stdin, stdout=stdout,
                                 stderr=subprocess.PIPE, pass_fds=tuple(_shared_fds),
                                 preexec_fn=child_set_up(unblock))
        children.add(child)
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
            children.discard(child)
    return child.returncode, out or b"", err or b""


def child_set_up(unblock: Callable[[], None]) -> Callable[[], None]:
    """The child's preexec_fn: the signal mask as it was before signals_held_back, and death with the tuner."""
    die_with_parent = _die_with_parent()

    def set_up() -> None:
        unblock()
        if die_with_parent is not None:
            die_with_parent()

    return set_up


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


@functools.cache
def _prctl():
    """Linux's prctl, None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def die_with(parent: int) -> None:
    """Has the kernel SIGKILL this process when its parent, `parent`, dies, even by SIGKILL (Linux's
    PR_SET_PDEATHSIG; elsewhere nothing); exits at once if it has died already."""
    prctl = _prctl()
    if prctl is None:
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn that has the child die with this process (die_with); None where that does not exist."""
    if _prctl() is None:
        return None
    return functools.partial(die_with, os.getpid())


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


def decode(data: bytes | str | None) -> str:
    if isinstance(data, str):
        return data
    return (data or b"").decode(errors="replace")


def failure_reason(returncode: int, stderr: str) -> str:
    """The program's own `Error: ...` line if it printed one, else its last stderr line, else the exit status."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error")]
    detail = errors[-1] if errors else lines[-1] if lines else "no message"
    return f"exit status {returncode}: {detail}"
