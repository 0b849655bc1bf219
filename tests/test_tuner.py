"""Tests of a whole tuner run, against tests/fake_program.py in place of a compiled program: tuning and
write-back, every strategy, failing versions, the command line, interrupts, --tune-sizes, and the report."""

from __future__ import annotations

import importlib.util
from importlib.machinery import SourceFileLoader
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from incflat.tuner.autotune import Measuring, Searching, TuneRequest, Writing, autotune
from incflat.tuner.command import main
from incflat.tuner.result import DatasetReport
from incflat.datasets import Dataset, InlineValues, read_test_cases, select_datasets
from incflat.ir.errors import ToolError
from incflat.tuner.measure import Limits, Measurement
from incflat.ir.runtime.tuning import NEVER, TUNED_BEGIN, TUNED_END
from incflat.files import SLEEP_BEFORE_RENAME_ENV
from conftest import earlier_tuning
from tuner_fixtures import FAKE, FIXTURES, REPO, T1, T2, T3, T4, fake


# --- end to end, on the fake program ---


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(FIXTURES, tmp_path / "w")
    program = tmp_path / "w" / "matmul"
    shutil.copy(FAKE, program)
    os.chmod(program, 0o754)
    return tmp_path / "w" / "matmul.fut", program


def _sizes(dataset: Dataset) -> tuple[int, ...]:
    text = dataset.input.text if isinstance(dataset.input, InlineValues) else dataset.input.path.read_text()
    return tuple(int(t.removesuffix("i64")) for t in text.split())


def _leaf_run(program: Path, stdin: str, *args: str) -> int:
    """The version the fake program ran (it says so on stderr)."""
    done = subprocess.run([sys.executable, str(program), *args], input=stdin, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return int(re.search(r"^fake: ran V([0-9]+)$", done.stderr, re.MULTILINE).group(1))


def test_held_out_and_mf_measurements_get_the_runs_their_noise_asks_for_like_the_tuned_ones(tmp_path, monkeypatch):
    """No probe learns a held-out dataset's noise, and MF has a bench of its own: their first measurements
    make --runs runs, then one more invocation brings them to the count the tuned measurements ask for."""
    fut, program = _workspace(tmp_path)
    monkeypatch.setenv("FAKE_PROGRAM_NOISE", "0.05")  # 5%: more runs than --max-runs 8 would bring the RSE to 1%
    result = autotune(TuneRequest(fut, program, Measuring(runs=2, max_runs=8, max_time=1.0),
                                  writing=Writing(out=io.StringIO()), moderate=program))
    held = [d for d in result.datasets if d.held_out]
    assert held
    for report in result.datasets:
        assert len(report.moderate.times_us) == 8, report.name
        if report.held_out:
            assert len(report.before.times_us) == len(report.after.times_us) == 8, report.name
        else:  # (and those compared while the invocation noise was unknown, another invocation's runs)
            assert len(report.before.invocations[0]) == len(report.after.invocations[0]) == 8, report.name


def test_tuning_sends_each_dataset_to_its_cheapest_version_and_writes_back(tmp_path):
    fut, program = _workspace(tmp_path)
    out = io.StringIO()
    # two runs, no spread: every difference is significant
    result = autotune(TuneRequest(fut, program, Measuring(runs=2), writing=Writing(out=out)))
    selection = select_datasets(read_test_cases(fut))

    def cheapest(d):
        return min(range(1, 6), key=lambda leaf: fake.runtime_us(leaf, *_sizes(d)))

    leaves = {d.name: cheapest(d) for d in selection.tuning}
    assert sorted(set(leaves.values())) == [1, 2, 3, 4, 5]  # every version is best for some dataset
    for d in selection.tuning:
        assert fake.choose_leaf(result.assignment, _sizes(d), log=False) == leaves[d.name], d.name
    # Each value is the upper end of its range (the smallest ePar among the datasets that preferred true),
    # unless the program's default (the device's 32768) lies in it: every dataset's result agrees with it.
    assert result.assignment == {T1: 16384, T2: 256, T3: fake.DEVICE_DEFAULT_THRESHOLD, T4: 256}
    # Runs per tuning dataset: the -L probe, then one per code version, the untuned run being one of them (its
    # path's experiment), and one paired invocation that settles the first significant difference while the
    # dataset's invocation noise is not known (and teaches it: another invocation of each side); the rest came
    # from the cache. A held-out dataset: untuned and tuned, and where the two did not differ apart (the same
    # version, and no noise here), the two in turn in one invocation (the report's figure then).
    for report in result.datasets:
        same = report.held_out and report.before.mean_us == report.after.mean_us
        assert bool(report.in_turn) == same, report.name
        assert report.runs == (2 + same if report.held_out else 1 + 5 + 1), report.name
        # the pairs measured configurations again: the probe and a configuration per code version
        assert report.configurations == (2 if report.held_out else 1 + 5), report.name
        # (a second round, which changes nothing, is answered from the cache: 2 ends of each threshold that the
        # tuned values send the dataset through, one for V1 up to all four for V4 and V5; and the version the
        # untuned run took once)
        guards = min(leaves.get(report.name, 0), 4)
        assert report.cache_hits == (0 if report.held_out else 3 + 1 + 2 * guards + 1), report.name
        assert report.after.runtime_us <= report.before.runtime_us
    text = out.getvalue()
    assert "held-dots" in text and "speedup" in text and f"program runs: {result.runs}" in text

    lines = (fut.parent / "matmul.fut.tuning").read_text().splitlines()
    assert lines[0].startswith("-- tuned by incflat (tree) on Fake GPU (Fake OpenCL), ")
    assert lines[1:] == [f"{name}={result.assignment[name]}" for name in sorted(result.assignment)]
    assert os.stat(program).st_mode & 0o777 == 0o754
    baked = _baked(program)
    assert baked["TUNED_DEFAULTS"] == result.assignment
    assert baked["TUNING_PROVENANCE"]["device"] == "Fake GPU (Fake OpenCL)"
    assert baked["TUNING_PROVENANCE"]["datasets"] == [d.name for d in selection.tuning]
    assert baked["TUNING_PROVENANCE"]["strategy"] == "tree" and baked["TUNING_PROVENANCE"]["tool"] == "incflat"

    # The rewritten program uses the tuned values with no options; --tuning and --param still override them.
    for d in selection.tuning + selection.held_out:
        stdin = " ".join(map(str, _sizes(d)))
        assert _leaf_run(program, stdin) == fake.choose_leaf(result.assignment, _sizes(d), False)
        assert _leaf_run(program, stdin, "--param", f"{T1}=1") == 1
    override = tmp_path / "override.tuning"
    override.write_text(f"-- all false\n{T1}={NEVER}\n{T2}={NEVER}\n{T3}={NEVER}\n{T4}={NEVER}\n")
    assert _leaf_run(program, "65536 64 64", "--tuning", str(override)) == 5


def test_a_version_with_a_wrong_result_fails_its_experiment_and_is_never_chosen(tmp_path, monkeypatch, capsys):
    """Results are checked against a dataset's `output` (futhark test's comparison) at each configuration's
    first measurement: a difference fails the experiment, so the tuner takes a version whose results are right;
    the untuned program's wrong result on a tuning dataset is an error, as its crash is."""
    fut, program = _workspace(tmp_path)
    small = next(d for d in select_datasets(read_test_cases(fut)).tuning if d.name == "small-dots")
    best = min(range(1, 6), key=lambda leaf: fake.runtime_us(leaf, *_sizes(small)))
    assert best != 5  # (the untuned program runs V5 on small-dots)
    monkeypatch.setenv("FAKE_PROGRAM_WRONG_LEAF", str(best))
    out = io.StringIO()
    result = autotune(TuneRequest(fut, program, Measuring(runs=2), writing=Writing(out=out)))
    assert fake.choose_leaf(result.assignment, _sizes(small), log=False) != best
    assert "small-dots [" in out.getvalue()
    assert "failed: wrong result: value #0: expected 352i64, got 353i64" in out.getvalue()
    report = next(r for r in result.datasets if r.name == "small-dots")
    assert report.after.ok and report.after.runtime_us <= report.before.runtime_us
    monkeypatch.setenv("FAKE_PROGRAM_WRONG_LEAF", "5")
    fut, program = _workspace(tmp_path / "again")
    assert main([str(fut), str(program), "--runs", "1", "--no-moderate"]) == 1
    assert capsys.readouterr().err == ("Error: the untuned program fails on dataset small-dots: wrong result: "
                                       "value #0: expected 352i64, got 353i64\n")


def test_an_expected_output_that_cannot_be_read_is_an_error_naming_it(tmp_path):
    fut, program = _workspace(tmp_path)
    fut.write_text("-- ==\n-- \"one\" input { 64i64 256i64 32i64 } output @ nosuch.out\n")
    with pytest.raises(ToolError, match="^one: cannot read its expected output nosuch.out: No such file"):
        autotune(TuneRequest(fut, program, Measuring(runs=1), writing=Writing(out=io.StringIO())))
    (fut.parent / "nosuch.out").write_text("352i64 ]")
    with pytest.raises(ToolError, match="^one: its expected output is not Futhark values: "):
        autotune(TuneRequest(fut, program, Measuring(runs=1), writing=Writing(out=io.StringIO())))


@pytest.mark.parametrize("strategy", ["monotonic", "exhaustive", "active", "binary", "instrumented", "random", "cma",
                                      "bandit"])
def test_every_strategy_tunes_and_writes_back(tmp_path, strategy):
    """The exact strategies send every tuning dataset to its cheapest version, as the tree does; the others
    (a local search, the fake program's missing -P records, samplers within a budget of 60 program runs)
    write a tuning whose summed runtime on the tuning datasets (their objective) is no more than untuned."""
    fut, program = _workspace(tmp_path)
    limits = Limits(budget=60) if strategy in ("random", "cma", "bandit") else Limits()
    result = autotune(TuneRequest(fut, program, Measuring(runs=2, limits=limits), Searching(strategy=strategy, seed=3),
                                  Writing(out=io.StringIO())))
    selection = select_datasets(read_test_cases(fut))
    for d in selection.tuning if strategy in ("monotonic", "exhaustive", "active") else ():
        leaves = {leaf: fake.runtime_us(leaf, *_sizes(d)) for leaf in range(1, 6)}
        assert fake.choose_leaf(result.assignment, _sizes(d), log=False) == min(leaves, key=leaves.get), d.name
    tuning = [report for report in result.datasets if not report.held_out]
    assert sum(r.after.runtime_us for r in tuning) <= sum(r.before.runtime_us for r in tuning)
    assert (fut.parent / "matmul.fut.tuning").read_text().startswith(f"-- tuned by incflat ({strategy}) on ")
    assert _baked(program)["TUNED_DEFAULTS"] == result.assignment


def _baked(program: Path) -> dict:
    """The tuned-defaults block of the (fake) compiled program, from the program loaded as a module."""
    spec = importlib.util.spec_from_loader("baked_program", SourceFileLoader("baked_program", str(program)))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {"TUNED_DEFAULTS": module.TUNED_DEFAULTS, "TUNING_PROVENANCE": module.TUNING_PROVENANCE}


def test_failing_versions_are_recorded_not_fatal(tmp_path, monkeypatch):
    fut, program = _workspace(tmp_path)
    fut.write_text("-- ==\n-- input { 64i64 256i64 32i64 }\n-- input { 4096i64 1024i64 16i64 }\n")
    monkeypatch.setenv("FAKE_PROGRAM_FAIL_LEAF", "4")  # the untuned runs take V3 and V5
    out = io.StringIO()
    result = autotune(TuneRequest(fut, program, Measuring(runs=1), writing=Writing(out=out)))
    assert "failed: exit status 1: Error: version V4 ran out of memory" in out.getvalue()
    for sizes in ((64, 256, 32), (4096, 1024, 16)):  # V4 "fails": neither takes it
        assert fake.choose_leaf(result.assignment, sizes, log=False) != 4


def test_a_workgroup_version_that_cannot_run_is_a_failed_experiment_not_its_fallbacks_time(tmp_path, monkeypatch):
    """V2's workgroup never fits the device: where the thresholds choose it, the program falls back to the next
    version. The tuner's experiments run with --no-fallback, so V2's is recorded as failed (not as the
    fallback's time under V2's name), and each dataset goes to its cheapest version that can run; the untuned
    and held-out runs fall back as the program does."""
    fut, program = _workspace(tmp_path)
    monkeypatch.setenv("FAKE_PROGRAM_NO_FIT", "2")
    out = io.StringIO()
    result = autotune(TuneRequest(fut, program, Measuring(runs=2), writing=Writing(out=out)))
    assert "[main.suff_intra_par_1=1]: failed: exit status 1: Error: the version guarded by main.suff_intra_par_1 " \
        "cannot run at 32 on Fake GPU (V2's workgroup does not fit the fake device), and --no-fallback was given" in (
            out.getvalue())
    assert "main.suff_intra_par_1: its version cannot run on" in out.getvalue()
    selection = select_datasets(read_test_cases(fut))
    runnable = (1, 3, 4, 5)
    favoured = [d for d in selection.tuning
                if min(range(1, 6), key=lambda leaf: fake.runtime_us(leaf, *_sizes(d))) == 2]
    assert favoured, "some dataset would take V2 if it could run"
    for d in selection.tuning:
        cheapest = min(runnable, key=lambda leaf: fake.runtime_us(leaf, *_sizes(d)))
        assert fake.choose_leaf(result.assignment, _sizes(d), log=False, no_fit={2: -1}) == cheapest, d.name
    assert all(report.after is not None and report.after.ok and report.before.ok for report in result.datasets)


@pytest.mark.parametrize("strategy", ["tree", "exhaustive"])
def test_where_a_workgroup_version_cannot_run_its_guard_is_free_and_the_fallback_serves(tmp_path, monkeypatch,
                                                                                      strategy):
    """V2 is the fastest version on both datasets, but its workgroup fits only up to 256 threads: "wide" (p =
    1024) cannot run it, and there the program falls back to the next version. So wide says nothing about
    V2's threshold: a value that sends "narrow" (p = 256) to V2 serves both, wide falling back to V3, its best
    version that runs. (Had V2's failed experiment been a preference, wide's [1025, never] and narrow's
    [1, 256] would conflict, and one of them would lose its best version.)"""
    fut, program = _workspace(tmp_path)
    fut.write_text('-- ==\n-- "wide" input { 1024i64 64i64 1024i64 }\n-- "narrow" input { 256i64 16i64 256i64 }\n')
    monkeypatch.setenv("FAKE_PROGRAM_NO_FIT", "2<=256")
    out = io.StringIO()
    result = autotune(TuneRequest(fut, program, Measuring(runs=1), Searching(strategy=strategy), Writing(out=out)))
    no_fit = {2: 256}
    assert fake.choose_leaf(result.assignment, (1024, 64, 1024), log=False, no_fit=no_fit) == 3
    assert fake.choose_leaf(result.assignment, (256, 16, 256), log=False, no_fit=no_fit) == 2
    wide = next(d for d in result.datasets if d.name == "wide")
    assert wide.version.names == ("V3",)  # the report names the version that runs, not the one that cannot


def test_an_untuned_run_that_fell_back_is_the_experiment_of_the_path_it_took(tmp_path, monkeypatch):
    """The untuned program takes V2 on "fell" (p = 32768 reaches the default 32768), whose workgroup never fits,
    and falls back to V3, the version the tuned values choose there. Which versions cannot run is learnt by the
    search, after the untuned run: once it is known, that run is the experiment of V3's path, one measurement
    with the tuned program's, not a figure of its own set against it (on an H200, where three tuners shared the
    host, nn_batch's untuned and tuned runs of one version measured 1.84 and 3.77 s: a "0.49x")."""
    fut, program = _workspace(tmp_path)
    fut.write_text('-- ==\n-- "fell" input { 1i64 64i64 32768i64 }\n')
    monkeypatch.setenv("FAKE_PROGRAM_NO_FIT", "2")
    result = autotune(TuneRequest(fut, program, Measuring(runs=2), writing=Writing(out=io.StringIO())))
    (fell,) = result.datasets
    assert fake.choose_leaf(result.assignment, (1, 64, 32768), log=False, no_fit={2: -1}) == 3
    untuned = dict.fromkeys(fake.THRESHOLDS, fake.DEVICE_DEFAULT_THRESHOLD)
    assert fake.choose_leaf(untuned, (1, 64, 32768), log=False, no_fit={2: -1}) == 3
    assert fell.before is fell.after and fell.speedup == 1.0 and not fell.significant


def test_command_line_errors_are_one_line(tmp_path, monkeypatch, capsys):
    fut, program = _workspace(tmp_path)
    monkeypatch.setenv("FAKE_PROGRAM_FAIL_LEAF", "5")  # the untuned program takes V5 for small-dots
    assert main([str(fut), str(program), "--runs", "1", "--no-moderate"]) == 1
    assert capsys.readouterr().err == (
        "Error: the untuned program fails on dataset small-dots: exit status 1: Error: version V5 ran out of memory\n"
    )
    monkeypatch.delenv("FAKE_PROGRAM_FAIL_LEAF")
    fut.write_text("-- ==\n-- input { 1 \n")
    assert main([str(fut), str(program), "--no-moderate"]) == 1
    assert capsys.readouterr().err == f"Error: {fut}:2: bad test block: '{{' after 'input' is never closed\n"
    shutil.copy(FIXTURES / "matmul.fut", fut)
    program_text = program.read_text()
    program.write_text(program_text.replace(TUNED_BEGIN, "# no block"))
    assert main([str(fut), str(program), "--no-moderate"]) == 1  # found before any run
    assert capsys.readouterr().err == (f"Error: {program}: the program has 0 '{TUNED_BEGIN}' and 1 '{TUNED_END}' "
                                       "lines, not one block\n")
    program.write_text(program_text)
    (tmp_path / "w" / "data" / "dots.in").unlink()
    assert main([str(fut), str(program), "--no-moderate"]) == 1
    assert "input file" in capsys.readouterr().err
    assert not (fut.parent / "matmul.fut.tuning").exists()


# --- interrupts ---

# Several held-out datasets, so that the measurements after write-back take a while.
INTERRUPT_FUT = "-- ==\n-- input { 65536i64 64i64 64i64 }\n-- input { 64i64 256i64 32i64 }\n" + "".join(
    f"-- notune input {{ {n}i64 64i64 64i64 }}\n" for n in (16, 32, 64, 128)
)
OLD_TUNING = earlier_tuning({T1: 5})


# SIGTERM (and a second Ctrl-C) aborts, writing nothing more; the first Ctrl-C stops the measuring, and the best
# values found so far are written. Either way both files are as they were, or both complete.
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize(
    "moment, trigger, program_sleep, rename_sleep, after_sigterm",
    [
        ("at start-up", None, "0.05", "0", None),
        ("while measuring", f"[{T3}=1]", "0.05", "0", "interrupted; nothing was written"),
        ("during write-back", "writing ", "0", "1", "are complete"),  # signals wait until both are in place
        ("after write-back", "tuned:", "0.05", "0", "are complete"),
    ],
)
def test_interrupts_leave_both_files_untouched_or_both_complete(
    tmp_path, sig, moment, trigger, program_sleep, rename_sleep, after_sigterm
):
    fut = tmp_path / "prog.fut"
    fut.write_text(INTERRUPT_FUT)
    program = tmp_path / "prog"
    shutil.copy(FAKE, program)
    tuning = tmp_path / "prog.fut.tuning"
    tuning.write_text(OLD_TUNING)
    program_before = program.read_bytes()
    env = os.environ | {"FAKE_PROGRAM_SLEEP": program_sleep, SLEEP_BEFORE_RENAME_ENV: rename_sleep}
    tuner = subprocess.Popen(
        [sys.executable, "-m", "tuner", str(fut), str(program), "--runs", "1", "--no-moderate"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    if trigger is None:
        time.sleep(0.1)
    else:
        for line in tuner.stdout:
            if trigger in line:
                break
        else:
            pytest.fail(f"the tuner finished before {trigger!r}")
    tuner.send_signal(sig)
    stdout, stderr = tuner.communicate(timeout=30)

    program_now = program.read_bytes()
    untouched = program_now == program_before and tuning.read_text() == OLD_TUNING
    complete = _complete_program(program) and _complete_tuning(tuning.read_text())
    assert untouched or complete
    if trigger is not None:
        assert tuner.returncode == 128 + sig, stderr
    if sig == signal.SIGTERM and after_sigterm is not None:
        assert stderr.startswith("interrupted; ") and after_sigterm in stderr, stderr
        assert untouched == (after_sigterm == "interrupted; nothing was written")
    if sig == signal.SIGINT and trigger is not None:
        assert stderr == f"interrupted; stopped measuring, and {tuning} and {program} are complete\n", stderr
        assert complete and "stopped early: interrupted" in stdout
    if sig == signal.SIGINT and moment == "while measuring":  # T4 was tuned; the others not yet: their defaults
        default = fake.DEVICE_DEFAULT_THRESHOLD
        assert f"{T1}={default}" in tuning.read_text() and f"{T3}={default}" in tuning.read_text()
        assert "not tuned yet" in stdout
    assert {p.name for p in tmp_path.iterdir()} - {"prog.fut.tuning.db"} == {"prog", "prog.fut", "prog.fut.tuning"}


def _complete_program(program: Path) -> bool:
    text = program.read_text()
    return set(_baked(program)["TUNED_DEFAULTS"]) == {T1, T2, T3, T4} and text.endswith("    main()\n")


def _complete_tuning(text: str) -> bool:
    lines = text.splitlines()
    return lines[0].startswith("-- tuned by incflat") and [line.split("=")[0] for line in lines[1:]] == [
        T2, T4, T1, T3
    ]


def test_tune_sizes_leaves_alone_the_sizes_of_kernels_it_cannot_see_run(tmp_path):
    """The fake program writes no -P records: no kernel is seen to run, so its size parameter is left at the
    default (and said so), and the thresholds are tuned as without --tune-sizes."""
    fut, program = _workspace(tmp_path)
    result = autotune(TuneRequest(fut, program, Measuring(runs=2), Searching(sizes=True), Writing(out=io.StringIO())))
    assert result.assignment == {T1: 16384, T2: 256, T3: fake.DEVICE_DEFAULT_THRESHOLD, T4: 256}
    assert any(n.endswith("left alone: main.segmap_tblock_size_4") for n in result.notes)
    assert "(tree + sizes)" in (fut.parent / "matmul.fut.tuning").read_text().splitlines()[0]


def test_a_sampling_strategy_with_tune_sizes_searches_them_jointly(tmp_path):
    """random + --tune-sizes: the sizes of kernels seen to run become dimensions of the search (two profiled
    runs per tuning dataset find them; the fake program reports none), and no tune_sizes step follows."""
    fut, program = _workspace(tmp_path)
    out = io.StringIO()
    result = autotune(TuneRequest(fut, program, Measuring(runs=2), Searching(strategy="random", seed=3, sizes=True),
                                  Writing(out=out)))
    assert set(result.assignment) <= {T1, T2, T3, T4}
    assert "\nsizes:" not in out.getvalue()
    assert "(random + sizes)" in (fut.parent / "matmul.fut.tuning").read_text().splitlines()[0]


def test_a_worse_search_leaves_a_program_tuned_before_as_it_was(tmp_path):
    """The tree tunes the fake program in place; binary search from never then ends slower than those baked
    values (the fake's runs have no spread, so the difference is significant): both files stay as they were."""
    fut, program = _workspace(tmp_path)
    autotune(TuneRequest(fut, program, Measuring(runs=2), writing=Writing(out=io.StringIO())))
    tuned_program, tuned_file = program.read_bytes(), (fut.parent / "matmul.fut.tuning").read_bytes()
    result = autotune(TuneRequest(fut, program, Measuring(runs=2), Searching(strategy="binary"),
                                  Writing(out=io.StringIO())))
    assert result.assignment == {}
    assert any("significantly slower" in n and "kept the defaults" in n for n in result.notes)
    assert any(n.endswith("were left as they were") for n in result.notes)
    assert program.read_bytes() == tuned_program and (fut.parent / "matmul.fut.tuning").read_bytes() == tuned_file


# --- the report: MF, intervals, versions, wall time; --plot ---

REPORT_FUT = ('-- ==\n-- "rows" input { 65536i64 64i64 64i64 }\n-- "dots" input { 64i64 256i64 32i64 }\n'
              '-- "held" notune input { 16i64 64i64 64i64 }\n')


def test_the_report_shows_mf_untuned_and_tuned_with_intervals_the_version_and_wall_time_and_plots(tmp_path):
    fut, program = _workspace(tmp_path)
    fut.write_text(REPORT_FUT)
    moderate = tmp_path / "prog-mf"  # a stand-in for the program compiled with moderate flattening
    shutil.copy(FAKE, moderate)
    out, plots = io.StringIO(), tmp_path / "plots"
    result = autotune(TuneRequest(fut, program, Measuring(runs=2), writing=Writing(plot_dir=plots, out=out),
                                  moderate=moderate))
    text = out.getvalue()
    header = next(line for line in text.splitlines() if line.startswith("dataset "))
    assert header.split() == ["dataset", "role", "MF", "untuned", "IF", "tuned", "IF", "speedup", "runs", "configs",
                              "cached", "stored", "wall", "s"]
    interval = r"[\d,.]+ ± [\d,.]+"
    for report in result.datasets:
        row = next(line for line in text.splitlines() if line.startswith(report.name + " "))
        assert re.match(rf"{report.name} +(tuning|held-out) +{interval} +{interval} +{interval} +", row), row
        assert len(row) <= 120, row
        assert report.moderate is not None and report.moderate.ok  # the same program here: the untuned times
        assert report.moderate.times_us == report.before.invocations[0]
        assert report.wall_s > 0 and row.endswith(f"{report.wall_s:.1f}")
    assert f"{result.wall_s:.1f} s in program runs" in text
    versions = text.split("versions chosen")[1].splitlines()
    for report in result.datasets:
        line = next(line for line in versions if line.strip().startswith(report.name + " "))
        if report.held_out:
            assert report.version is None and "held out: not probed" in line
        else:
            sizes = {"rows": (65536, 64, 64), "dots": (64, 256, 32)}[report.name]
            leaf = fake.choose_leaf(result.assignment, sizes, log=False)
            # the chain: the guards before the leaf's are false, its own is true (V5: all four are false)
            outcomes = [f"{t}:no" for t in (T1, T2, T3, T4)[:leaf - 1]] + ([f"{(T1, T2, T3, T4)[leaf - 1]}:yes"]
                                                                          if leaf < 5 else [])
            assert report.version.name == f"V{leaf}" and report.version.outcomes == " ".join(outcomes)
            assert line.split() == [report.name, f"V{leaf}", *outcomes], line
    # the charts: one per tuned threshold and the best so far, PNG files
    tuned = [t for t in (T1, T2, T3, T4) if t in result.assignment]
    expected = [f"threshold-{t}.png" for t in tuned] + ["best-so-far.png"]
    assert sorted(p.name for p in plots.iterdir()) == sorted(expected)
    assert sorted(result.plots) == sorted(plots.iterdir())
    assert all(p.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") for p in plots.iterdir())
    from incflat.tuner.plot import plot_path_problem
    assert plot_path_problem(plots) is None  # its own charts: replaced by the next run
    (plots / "threshold-mine.png").write_bytes(b"\x89PNG\r\n\x1a\nsomeone else's")
    assert "refusing to overwrite it" in plot_path_problem(plots)


def test_a_failing_moderate_program_is_reported_not_fatal(tmp_path, capsys):
    fut, program = _workspace(tmp_path)
    fut.write_text(REPORT_FUT)
    broken = tmp_path / "broken-mf"
    broken.write_text("import sys\nprint('Error: no such entry point', file=sys.stderr)\nsys.exit(1)\n")
    out = io.StringIO()
    result = autotune(TuneRequest(fut, program, Measuring(runs=1), writing=Writing(store=None, out=out),
                                  moderate=broken))
    assert result.assignment and all(not r.moderate.ok for r in result.datasets)
    assert "failed: MF: exit status 1: Error: no such entry point" in out.getvalue()
    # through the command line: a .fut that does not compile fails the MF column (the fake is the IF program)
    fut.write_text(REPORT_FUT + "\nentry main (x: i64) = x +\n")
    assert main([str(fut), str(program), "--runs", "1", "--no-store"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert f"failed: MF: cannot compile {fut} with --flattening=moderate: " in captured.out


def test_plot_options_are_checked_before_anything_runs(tmp_path, capsys, monkeypatch):
    fut, program = _workspace(tmp_path)
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("precious\n")
    with pytest.raises(SystemExit) as exit:
        main([str(fut), str(program), "--plot", str(not_a_folder)])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == (f"incflat autotune: error: --plot {not_a_folder}: exists and is not a "
                                            "directory")
    from incflat.cli import main as incflat_main
    assert incflat_main(["autotune", str(fut), "--plot", str(not_a_folder)]) == 2
    assert capsys.readouterr().err == f"incflat: error: --plot {not_a_folder}: exists and is not a directory\n"
    assert not_a_folder.read_text() == "precious\n"
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    with pytest.raises(SystemExit):
        main([str(fut), str(program), "--plot", str(tmp_path / "plots")])
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"incflat autotune: error: --plot {tmp_path / 'plots'}: needs matplotlib, which is not installed: "
        "pip install 'incflat[report]'")
    assert not (tmp_path / "plots").exists()


def test_the_reports_speedup_is_same_inside_the_datasets_invocation_noise():
    before, after = Measurement((104.0, 104.5, 103.5, 104.0)), Measurement((100.0, 100.5, 99.5, 100.0))
    assert DatasetReport("d", False, before, after, runs=2, cache_hits=0).significant
    assert not DatasetReport("d", False, before, after, runs=2, cache_hits=0, invocation_noise=0.1 ** 2).significant


# --- incflat autotune passes the options on ---


def test_incflat_autotune_passes_max_time_on(tmp_path, monkeypatch):
    from incflat import cli, tuner
    seen = []
    monkeypatch.setattr(tuner, "main", lambda argv, **keywords: seen.append(argv) or 0)
    monkeypatch.setattr(cli, "compiled_text", lambda fut, verify=None: b"# compiled\n")  # nothing to compile
    fut = tmp_path / "m.fut"
    fut.write_text("def main (x: i32) = x\n")
    for given, passed in (([], "1.0"), (["--max-time", "0"], "0.0"), (["--max-time", ".00001"], "0.00001")):
        assert cli.main(["autotune", str(fut), *given]) == 0
        argv = seen.pop()
        assert argv[argv.index("--max-time") + 1] == passed
