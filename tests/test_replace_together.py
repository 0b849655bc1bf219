"""files.replace_together: files replaced together are all new or all old, even where one of the renames fails
(the tuner's program and tuning file: a program made immutable must not leave a new tuning file beside it)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from incflat import files
from incflat.files import PlannedFile, ReplaceFailed, replace_together
from incflat.ir.errors import ToolError
from incflat.tuner.writeback import commit


def failing_rename_of(monkeypatch, victim: Path):
    """os.replace in files fails, as on an immutable file, where it would replace victim."""
    real = os.replace

    def replace(src, dst):
        if Path(dst) == victim:
            raise PermissionError(1, "Operation not permitted")
        real(src, dst)
    monkeypatch.setattr(files.os, "replace", replace)


@pytest.mark.parametrize("failing", [0, 1, 2])
def test_a_failing_rename_leaves_every_file_as_it_was(failing, tmp_path, monkeypatch):
    paths = [tmp_path / "prog.fut.tuning", tmp_path / "prog", tmp_path / "new.json"]
    paths[0].write_bytes(b"old tuning")
    paths[1].write_bytes(b"old program")
    failing_rename_of(monkeypatch, paths[failing])
    with pytest.raises(ReplaceFailed) as raised:
        replace_together([PlannedFile(p, b"new " + p.name.encode()) for p in paths])
    assert raised.value.filename == str(paths[failing])
    assert paths[0].read_bytes() == b"old tuning" and paths[1].read_bytes() == b"old program"
    assert not paths[2].exists(), "a file that was not there is not there"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prog", "prog.fut.tuning"], "no temporary file left"


def test_the_tuners_message_says_nothing_was_written(tmp_path, monkeypatch):
    tuning, program = tmp_path / "prog.fut.tuning", tmp_path / "prog"
    tuning.write_bytes(b"old tuning")
    program.write_bytes(b"old program")
    failing_rename_of(monkeypatch, program)
    with pytest.raises(ToolError) as raised:
        commit([PlannedFile(tuning, b"new tuning"), PlannedFile(program, b"new program")], lambda line: None)
    assert str(raised.value) == (f"cannot write {program}: Operation not permitted; nothing was written "
                                 f"({tuning} and {program} are as they were)")
    assert tuning.read_bytes() == b"old tuning"


@pytest.mark.skipif(shutil.which("chattr") is None or os.geteuid() != 0, reason="needs chattr and root")
def test_an_immutable_program(tmp_path):
    tuning, program = tmp_path / "prog.fut.tuning", tmp_path / "prog"
    tuning.write_bytes(b"old tuning")
    program.write_bytes(b"old program")
    if subprocess.run(["chattr", "+i", str(program)], capture_output=True).returncode != 0:
        pytest.skip("this file system takes no immutable flag")
    try:
        with pytest.raises(ReplaceFailed):
            replace_together([PlannedFile(tuning, b"new tuning"), PlannedFile(program, b"new program")])
    finally:
        subprocess.run(["chattr", "-i", str(program)], check=True)
    assert (tuning.read_bytes(), program.read_bytes()) == (b"old tuning", b"old program")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prog", "prog.fut.tuning"]
