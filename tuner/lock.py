"""One tuner at a time per program: a lock file beside the .fut file, `prog.fut.tuning.lock`.

The lock is an flock(2) on that file, which holds the tuner's pid for the message of a tuner that finds it
taken. The kernel releases an flock when its holder dies, even by SIGKILL, so a lock file left behind by a
killed tuner blocks nothing: the next tuner takes it over. The tuner removes the file when it is done (while
still holding the lock; a tuner that opened the old file meanwhile sees that it is no longer the one at the
path, and opens the new one).

The lock is re-entrant within a process: `incflat autotune` takes it before compiling, and the tuner it runs
takes it again.
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from incflat.ir.errors import ToolError

_PID_LINE = re.compile(rb"([0-9]+)\n")
_held: dict[Path, int] = {}  # lock file -> how many times this process holds it


def lock_path(fut_path: Path) -> Path:
    return fut_path.with_name(fut_path.name + ".tuning.lock")


@contextmanager
def tuning_lock(fut_path: Path) -> Iterator[None]:
    """Holds the lock of fut_path's tuning; ToolError if another tuner holds it."""
    path = lock_path(Path(fut_path)).absolute()
    if path in _held:
        _held[path] += 1
        try:
            yield
        finally:
            _held[path] -= 1
        return
    fd = _acquire(path, fut_path)
    _held[path] = 1
    try:
        yield
    finally:
        del _held[path]
        try:
            path.unlink(missing_ok=True)
        finally:
            os.close(fd)  # releases the flock


def _acquire(path: Path, fut_path: Path) -> int:
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise ToolError(f"cannot create the lock file {path}: {e.strerror}") from None
        try:
            content = os.pread(fd, 4096, 0)
            if content and not _PID_LINE.fullmatch(content):  # a file the tuner did not write
                raise ToolError(f"{path} exists and is not a tuner's lock file; remove it to tune {fut_path}")
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _PID_LINE.fullmatch(os.pread(fd, 4096, 0))
                who = f"pid {int(holder[1])}" if holder else "its pid not written yet"
                raise ToolError(f"another tuner ({who}) is tuning {fut_path}: wait for it to finish or stop it "
                                f"(its lock is {path})") from None
            if _same_file(fd, path):
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the holder removed that file as we locked it: lock the one at the path now


def _same_file(fd: int, path: Path) -> bool:
    try:
        here = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino)
