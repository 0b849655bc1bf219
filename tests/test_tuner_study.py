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


def test_the_study_names_the_device_it_measured_on_and_the_device_each_reused_result_was_tuned_on():
    tuned_here = {"strategy": "instrumented", "assignment": {}, "runs": 16, "tuning_runs": {"d": 16},
                  "seconds": 40.0, "device": "GPU B", "objective_us": 101.0, "ratio_to_optimum": 1.01,
                  "to_2pc": {"runs": 16, "seconds": 40.0}, "held_out_vs_if": None, "held_out_vs_mf": None}
    reused = tuned_here | {"strategy": "tree", "device": "GPU A", "reused": "old.json", "runs": 30,
                           "objective_us": 100.0, "ratio_to_optimum": 1.0}
    study = [{"program": "prog", "versions": 5, "optimum_us": 100.0, "untuned_us": 200.0, "mf_us": 300.0,
              "strategies": [reused, tuned_here]}]
    assert tuner_study.study_device(study) == "GPU B"
    table = tuner_study.markdown(study, tuner_study.study_device(study))
    assert table.startswith("Device: GPU B")
    assert "| tree (reused, tuned on GPU A) | 30 |" in table and "| instrumented | 16 |" in table
    assert tuner_study.study_device([{"strategies": [reused]}]).startswith("unknown")
