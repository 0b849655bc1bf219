"""Writing files so that nothing is lost: a file is replaced complete or not at all, and several files together.

Each new content goes to a temporary file in its folder (flushed, fsynced, mode bits copied), and only when all
are written do they replace the old files with `os.replace`, one right after the other, with SIGINT and SIGTERM
held back until all are in place. An interrupt at any moment leaves every file untouched or every file complete
(a SIGKILL could only fall between two renames, a few microseconds); the temporary files are removed on the way
out. A temporary file carries its writer's pid in its name, so that one left by a killed writer is recognised
and removed later (remove_stale_temporaries). `incflat compile`, the compile cache, bench's `--json` and the
tuner's write-back all write through here.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import signal
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# Test hook: seconds to sleep between writing the temporary files and renaming them, to interrupt write-back there.
SLEEP_BEFORE_RENAME_ENV = "INCFLAT_TUNER_TEST_SLEEP_BEFORE_RENAME"
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)-[0-9a-f]{12}\.tmp")


@dataclass(frozen=True)
class PlannedFile:
    path: Path
    data: bytes
    mode: int | None = None  # None: the old file's mode bits


def file_place_problem(path: Path) -> str | None:
    """Why no file can be written at path (a folder, a file that is not a regular one, or a folder that is not
    there), else None: what the options that name a file to write (--log, --store, bench's --json) refuse
    before anything runs."""
    if path.is_dir():
        return "is a directory"
    try:
        path.stat()
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "a loop of symbolic links"
    if path.exists() and not path.is_file():  # (a FIFO would block the check of what the file holds)
        return "not a regular file"
    if not path.parent.is_dir():
        return f"no such directory: {path.parent}"
    return None


@contextmanager
def signals_held_back() -> Iterator[Callable[[], None]]:
    """SIGINT, SIGTERM and SIGHUP are delivered when the block ends (their handlers then run), not inside it.
    Yields the function that restores the mask as it was, for a child started inside the block, which inherits
    it."""
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)

    def unblock() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    try:
        yield unblock
    finally:
        unblock()


def written(plan: Sequence[PlannedFile]) -> list[Path]:
    """The planned files that now hold their new content (after an interrupt: the others are untouched)."""
    def holds(planned: PlannedFile) -> bool:
        try:
            return planned.path.read_bytes() == planned.data
        except OSError:
            return False

    return [planned.path for planned in plan if holds(planned)]


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replaces path with data, complete or not at all; the mode bits are `mode`, else the old file's."""
    replace_together([PlannedFile(path, data, mode)])


def replace_together(files: Sequence[PlannedFile], started: Callable[[], None] = lambda: None) -> None:
    """Writes each file's temporary copy, then renames them all, SIGINT and SIGTERM held back meanwhile (and
    `started` is called once they are). A rename that fails (a file made immutable, a folder entry that may
    not change) puts back the files renamed before it, from links to their old contents made beforehand, and
    raises ReplaceFailed: no file changed. An OSError is named by the path the caller gave, not by the hidden
    temporary file."""
    temporaries: list[Path] = []
    old: dict[Path, Path | None] = {}  # each file renamed over -> a link to its old content (None: it was new)
    try:
        with signals_held_back():
            started()
            for planned in files:
                temporaries.append(write_temporary(planned))
            for planned in files:
                old[planned.path] = _linked_aside(planned.path)
            if SLEEP_BEFORE_RENAME_ENV in os.environ:
                time.sleep(float(os.environ[SLEEP_BEFORE_RENAME_ENV]))
            renamed: list[Path] = []
            for temporary, planned in zip(temporaries, files):
                try:
                    _named(planned.path, os.replace, temporary, planned.path)
                except OSError as e:
                    _put_back(renamed, old)
                    raise ReplaceFailed(e.errno, e.strerror, e.filename) from None
                renamed.append(planned.path)
            for folder in {planned.path.parent for planned in files}:
                _named(folder, _fsync_folder, folder)
    finally:
        for path in [*temporaries, *(link for link in old.values() if link is not None)]:
            path.unlink(missing_ok=True)


class ReplaceFailed(OSError):
    """A file of several replaced together could not be replaced; none of them changed."""


def _linked_aside(path: Path) -> Path | None:
    """path's content kept beside it under a temporary name (a hard link, or a copy where the file system or
    the file takes none), None where path does not exist."""
    if not path.exists():
        return None
    link = temporary_path(path)
    try:
        os.link(path, link)
    except OSError:
        return write_temporary(PlannedFile(path, _named(path, path.read_bytes)))
    return link


def _put_back(renamed: Sequence[Path], old: dict) -> None:
    """The old content of each path in renamed, or no file where there was none."""
    for path in reversed(renamed):
        link = old[path]
        if link is None:
            path.unlink(missing_ok=True)
        else:
            os.replace(link, path)


def temporary_path(path: Path) -> Path:
    """A fresh name beside path for a temporary file of this process (removing it can only remove our own)."""
    return path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(6)}.tmp")


def remove_stale_temporaries(path: Path) -> None:
    """Removes the temporary files of path (temporary_path) whose writer is no longer running: a SIGKILL leaves
    them behind."""
    try:
        siblings = list(path.parent.iterdir())
    except OSError:
        return
    for sibling in siblings:
        match = _TEMPORARY.fullmatch(sibling.name)
        if match and match["name"] == path.name and not _running(int(match["pid"])):
            sibling.unlink(missing_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def write_temporary(planned: PlannedFile) -> Path:
    """A new temporary file beside planned.path (temporary_path) with its data, flushed and fsynced, and its
    mode; an OSError is named by planned.path, and leaves no temporary file."""
    temporary = temporary_path(planned.path)

    def write() -> None:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as file:
            file.write(planned.data)
            file.flush()
            os.fsync(file.fileno())
        if planned.mode is not None:
            os.chmod(temporary, planned.mode)
        elif planned.path.exists():
            os.chmod(temporary, stat.S_IMODE(planned.path.stat().st_mode))

    try:
        _named(planned.path, write)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


def _named(path: Path, action: Callable, *args):
    """action(*args), an OSError it raises named by path."""
    try:
        return action(*args)
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(path)) from None


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX: the folder entry is data of the folder)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
