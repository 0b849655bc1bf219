"""futhark_examples/tuner_study.py: a study cut off after some strategies goes on from their saved results."""

import json
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "futhark_examples"))

import tuner_study  # noqa: E402

TREE = {"strategy": "tree", "assignment": {"main.suff_outer_par_0": 64}, "runs": 12, "history": []}
FAILED = {"strategy": "bandit", "error": "TunerError: no datasets", "log": ""}


def test_reuse_takes_the_strategies_of_a_partial_file_and_leaves_failed_ones_to_tune(tmp_path):
    partial = tmp_path / "prog.partial.json"
    partial.write_text(json.dumps([TREE, FAILED]))
    assert tuner_study.reused(partial, "prog") == {"tree": TREE}


def test_reuse_finds_the_program_in_a_study_json(tmp_path):
    study = tmp_path / "study.json"
    study.write_text(json.dumps([{"program": "other", "strategies": [FAILED]},
                                 {"program": "prog", "strategies": [TREE, FAILED]}]))
    assert tuner_study.reused(study, "prog") == {"tree": TREE}
    assert tuner_study.reused(study, "absent") == {}


def test_without_reuse_every_strategy_is_tuned():
    assert tuner_study.reused(None, "prog") == {}


def test_a_reuse_file_that_is_not_a_study_is_an_error_naming_the_option(tmp_path, capsys):
    bad = tmp_path / "notes.txt"
    bad.write_text("not json")
    with pytest.raises(SystemExit) as stopped:
        tuner_study.main(["prog.fut", "--reuse", str(bad)])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert f"--reuse {bad}: not a study's partial file or study.json" in err
