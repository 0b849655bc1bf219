"""Writing tuned values back: `prog.fut.tuning`, and the tuned-defaults block of the compiled program.

Both files are replaced together (`files.replace_together`): an interrupt at any moment leaves both untouched
or both complete.
"""

from __future__ import annotations

import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from incflat.codegen import cprogram
from incflat.files import PlannedFile, ReplaceFailed, replace_together
from incflat.ir.runtime.tuning import ContractError, tuning_file_text, with_defaults
from incflat.ir.errors import ToolError

TOOL = "incflat"


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


def tuning_header(provenance: Provenance) -> str:
    return (f"tuned by {provenance.tool} ({provenance.strategy}) on {provenance.device}, {provenance.date}; "
            f"datasets: {', '.join(provenance.datasets)}")


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


def with_tuned_defaults(program: str | bytes, values: Mapping[str, int], provenance) -> str | bytes:
    """A compiled program's contents with its tuned defaults replaced: the Python program's text (str), or a
    native program's bytes (codegen/cprogram.py)."""
    if isinstance(program, bytes):
        return cprogram.with_defaults(program, dict(values), provenance)
    return with_defaults(program, dict(values), provenance)


def read_program(program: Path) -> str | bytes:
    """The compiled program's contents (see with_tuned_defaults), checked to hold exactly one tuned-defaults
    block."""
    try:
        if cprogram.is_native_program(program):
            contents = program.read_bytes()
        else:
            contents = program.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ToolError(f"cannot read {program}: {e}") from None
    try:
        with_tuned_defaults(contents, {}, None)
    except ContractError as e:
        raise ToolError(f"{program}: {e}") from None
    return contents


def plan_writeback(
    tuning_path: Path, program: Path, values: Mapping[str, int], provenance: Provenance,
    install_as: Path | None = None,
) -> tuple[PlannedFile, ...]:
    """The tuning file and `program` with `values` baked in, written back to `program` or, given `install_as`,
    to that path (with `program`'s mode bits: `incflat autotune` tunes a temporary copy, then installs it)."""
    new_program = with_tuned_defaults(read_program(program), values, provenance.as_dict())
    mode = None if install_as is None else stat.S_IMODE(program.stat().st_mode)
    return (
        PlannedFile(tuning_path, tuning_file_text(dict(values), tuning_header(provenance)).encode()),
        PlannedFile(install_as or program, new_program if isinstance(new_program, bytes) else new_program.encode(),
                    mode),
    )


def commit(plan: Sequence[PlannedFile], log: Callable[[str], None]) -> None:
    """Replaces every planned file, all or none (see the module's docstring)."""
    try:
        # (logged once signals are held back: from this line on, an interrupt leaves every file complete)
        replace_together(plan, lambda: log(f"writing {' and '.join(str(planned.path) for planned in plan)}"))
    except ReplaceFailed as e:
        raise ToolError(f"cannot write {e.filename}: {e.strerror}; nothing was written "
                        f"({' and '.join(str(planned.path) for planned in plan)} are as they were)") from None
    except OSError as e:
        raise ToolError(f"cannot write {e.filename}: {e.strerror}") from None
    for planned in plan:
        log(f"wrote {planned.path}")


