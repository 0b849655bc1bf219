"""Writing tuned values back: `prog.fut.tuning`, and the tuned-defaults block of the compiled program.

Both files are replaced together: each new content goes to a temporary file in its folder (flushed, fsynced,
mode bits copied), and only when all are written do they replace the old files with `os.replace`, one right
after the other, with SIGINT and SIGTERM held back until both are in place. An interrupt at any moment leaves
both files untouched or both complete (a SIGKILL could only fall between the two renames, a few microseconds);
the temporary files are removed on the way out. A temporary file carries its writer's pid in its name, so that
one left by a killed writer is recognised and removed later (remove_stale_temporaries).
"""

from __future__ import annotations

import os
import re
import secrets
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from incflat.codegen.runtime.tuning import ContractError, tuning_file_text, with_defaults
from incflat.tuner.errors import TunerError
from incflat.tuner.program import signals_held_back

TOOL = "incflat"
# Test hook: seconds to sleep between writing the temporary files and renaming them, to interrupt write-back there.
SLEEP_BEFORE_RENAME_ENV = "INCFLAT_TUNER_TEST_SLEEP_BEFORE_RENAME"
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)-[0-9a-f]{12}\.tmp")


@dataclass(frozen=True)
class Provenance:
    device: str
    date: str  # ISO 8601
    datasets: tuple[str, ...]
    strategy: str
    tool: str = TOOL

    def as_dict(self) -> dict[str, object]:
        return {
            "device": self.device,
            "date": self.date,
            "datasets": list(self.datasets),
            "strategy": self.strategy,
            "tool": self.tool,
        }


@dataclass(frozen=True)
class PlannedFile:
    path: Path
    data: bytes
    mode: int | None = None  # None: the old file's mode bits


def tuning_header(provenance: Provenance) -> str:
    return (f"tuned by {provenance.tool} ({provenance.strategy}) on {provenance.device}, {provenance.date}; "
            f"datasets: {', '.join(provenance.datasets)}")


def file_place_problem(path: Path) -> str | None:
    """Why no file can be written at path (a folder, or a folder that is not there), else None: what the
    options that name a file to write (--log, --store, bench's --json) refuse before anything runs."""
    if path.is_dir():
        return "is a directory"
    if not path.parent.is_dir():
        return f"no such directory: {path.parent}"
    return None


def tuning_path_of(fut: Path) -> Path:
    """`prog.fut.tuning`, where Futhark's tools keep a program's tuning file."""
    return fut.with_name(fut.name + ".tuning")


def tuning_file_problem(path: Path) -> str | None:
    """Why tuning must not replace `path`, else None: it holds something that tuning would lose (it exists, is not
    empty, and does not open with the header that tuning_header gives every tuning file a tuner writes)."""
    try:
        with open(path, "rb") as f:
            start = f.read(1 << 16)
            whole = not f.read(1)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"{path}: cannot read it ({e.strerror}); refusing to overwrite it"
    if (whole and not start.strip()) or start.startswith(f"-- tuned by {TOOL} (".encode()):
        return None
    return f"{path} exists and was not written by incflat autotune; refusing to overwrite it (--force replaces it)"


def read_program(program: Path) -> str:
    """The compiled program's text, checked to hold exactly one tuned-defaults block."""
    try:
        text = program.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TunerError(f"cannot read {program}: {e}") from None
    try:
        with_defaults(text, {}, None)
    except ContractError as e:
        raise TunerError(f"{program}: {e}") from None
    return text


def plan_writeback(
    tuning_path: Path, program: Path, values: Mapping[str, int], provenance: Provenance,
    install_as: Path | None = None,
) -> tuple[PlannedFile, ...]:
    """The tuning file and `program` with `values` baked in, written back to `program` or, given `install_as`,
    to that path (with `program`'s mode bits: `incflat autotune` tunes a temporary copy, then installs it)."""
    new_program = with_defaults(read_program(program), dict(values), provenance.as_dict())
    mode = None if install_as is None else stat.S_IMODE(program.stat().st_mode)
    return (
        PlannedFile(tuning_path, tuning_file_text(dict(values), tuning_header(provenance)).encode()),
        PlannedFile(install_as or program, new_program.encode(), mode),
    )


def commit(plan: Sequence[PlannedFile], log: Callable[[str], None]) -> None:
    """Replaces every planned file, all or none (see the module's docstring)."""
    try:
        # (logged once signals are held back: from this line on, an interrupt leaves every file complete)
        replace_together(plan, lambda: log(f"writing {' and '.join(str(planned.path) for planned in plan)}"))
    except OSError as e:
        raise TunerError(f"cannot write {e.filename}: {e.strerror}") from None
    for planned in plan:
        log(f"wrote {planned.path}")


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
    `started` is called once they are). An OSError is named by the path the caller gave, not by the hidden
    temporary file."""
    temporaries: list[Path] = []
    try:
        with signals_held_back():
            started()
            for planned in files:
                temporaries.append(write_temporary(planned))
            if SLEEP_BEFORE_RENAME_ENV in os.environ:
                time.sleep(float(os.environ[SLEEP_BEFORE_RENAME_ENV]))
            for temporary, planned in zip(temporaries, files):
                _named(planned.path, os.replace, temporary, planned.path)
            for folder in {planned.path.parent for planned in files}:
                _named(folder, _fsync_folder, folder)
    finally:
        for temporary in temporaries:
            temporary.unlink(missing_ok=True)


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


def _named(path: Path, action: Callable, *args) -> None:
    try:
        action(*args)
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(path)) from None


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX: the folder entry is data of the folder)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
