"""Writing tuned values back: `prog.fut.tuning`, and the tuned-defaults block of the compiled program.

Both files are replaced atomically: the new content goes to a temporary file in the same folder (flushed,
fsynced, mode bits copied), which then replaces the old one with `os.replace`. An interrupt at any moment
leaves each file either untouched or complete, and the temporary file is removed on the way out.
"""

from __future__ import annotations

import os
import secrets
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from incflat.codegen.runtime.tuning import ContractError, tuning_file_text, with_defaults
from incflat.tuner.errors import TunerError

TOOL = "incflat"
# Test hook: seconds to sleep between writing a temporary file and renaming it, to interrupt write-back there.
SLEEP_BEFORE_RENAME_ENV = "INCFLAT_TUNER_TEST_SLEEP_BEFORE_RENAME"


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


def tuning_header(provenance: Provenance) -> str:
    return (f"tuned by {provenance.tool} ({provenance.strategy}) on {provenance.device}, {provenance.date}; "
            f"datasets: {', '.join(provenance.datasets)}")


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
    tuning_path: Path, program: Path, values: Mapping[str, int], provenance: Provenance
) -> tuple[PlannedFile, ...]:
    new_program = with_defaults(read_program(program), dict(values), provenance.as_dict())
    return (
        PlannedFile(tuning_path, tuning_file_text(dict(values), tuning_header(provenance)).encode()),
        PlannedFile(program, new_program.encode()),
    )


def commit(plan: Sequence[PlannedFile], log: Callable[[str], None]) -> None:
    for planned in plan:
        try:
            atomic_write(planned.path, planned.data)
        except OSError as e:
            raise TunerError(f"cannot write {planned.path}: {e.strerror}") from None
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
    # A fresh random name, so that removing it on the way out can only remove our own file.
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        elif path.exists():
            os.chmod(temporary, stat.S_IMODE(path.stat().st_mode))
        if SLEEP_BEFORE_RENAME_ENV in os.environ:
            time.sleep(float(os.environ[SLEEP_BEFORE_RENAME_ENV]))
        os.replace(temporary, path)
    except OSError as e:  # named by the path the caller gave, not by the hidden temporary file
        temporary.unlink(missing_ok=True)
        raise OSError(e.errno, e.strerror, str(path)) from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX: the folder entry is data of the folder)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
