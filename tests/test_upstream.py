"""futhark_examples/upstream.py on a fake futhark-benchmarks checkout and anchors folder made here: it times a
program compiled as written, reports one that does not compile, writes nothing into the checkout, resumes from
its saved results, tunes each dataset of a program of two on a copy whose block holds the other dataset
(leave-one-out) and a program of one on --small's inputs, and says what is wrong with a bad option without a
traceback."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "futhark_examples" / "upstream.py"
sys.path.insert(0, str(SCRIPT.parent))

import upstream  # noqa: E402
from conftest import needs_device  # noqa: E402
from incflat.datasets import ValuesFile, parse_test_cases  # noqa: E402
from incflat.pipeline import source_program  # noqa: E402

# As futhark-benchmarks' programs do, the block names data files that the checkout does not hold.
TINY = """-- ==
-- compiled input @ data/large.in

def main [n][m] (xss: [n][m]f32) : [n]f32 = map (\\xs -> reduce (+) 0 xs) xss
"""
BROKEN = 'import "lib/github.com/diku-dk/cpprandom/random"\n\ndef main (x: i32) : i32 = x\n'
INPUTS = """import os
import sys

import numpy as np

small = "--small" in sys.argv
out, *names = [a for a in sys.argv[1:] if a != "--small"]
os.makedirs(out, exist_ok=True)
for name, dataset, rows in [("tiny", "D1", 10), ("tiny", "D2", 16), ("one", "D1", 10)]:
    xss = np.arange(rows // 3 * 4 if small else rows * 4, dtype=np.float32).reshape(-1, 4)
    if name in names:
        with open(os.path.join(out, f"{name}-{dataset}.in"), "wb") as f:
            f.write(b"b\\x02\\x02 f32" + np.asarray(xss.shape, dtype="<u8").tobytes() + xss.astype("<f4").tobytes())
"""
ANCHORS = {"about": "a fake of futhark-*.json", "programs": {
    "tiny": {"file": "misc/tiny.fut", "datasets": {"D1": {"input": ["f32[10, 4]"], "default_us": 50.0,
                                                          "best_version_us": 40.0},
                                                   "D2": {"input": ["f32[16, 4]"], "default_us": 60.0,
                                                          "best_version_us": 50.0}}},
    "one": {"file": "misc/tiny.fut", "datasets": {"D1": {"input": ["f32[10, 4]"], "default_us": 50.0,
                                                         "best_version_us": 40.0}}},
    "broken": {"file": "misc/broken.fut", "datasets": {"D1": {"input": ["i32[]=1"], "default_us": 10.0,
                                                              "best_version_us": 10.0}}}}}


@pytest.fixture
def folders(tmp_path):
    checkout, anchors = tmp_path / "futhark-benchmarks", tmp_path / "anchors"
    (checkout / "misc").mkdir(parents=True)
    (checkout / "misc" / "tiny.fut").write_text(TINY)
    (checkout / "misc" / "broken.fut").write_text(BROKEN)
    anchors.mkdir()
    (anchors / "futhark-test.json").write_text(json.dumps(ANCHORS))
    (anchors / "inputs.py").write_text(INPUTS)
    return checkout, anchors, tmp_path / "out"


def listing(folder: pathlib.Path) -> dict:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@needs_device
def test_run_times_the_program_and_render_tabulates_it(folders):
    checkout, anchors, out = folders
    before = listing(checkout)
    run = ["run", str(checkout), "tiny", "broken", "--anchors", str(anchors), "--out", str(out), "--parts", "untuned"]
    assert upstream.main(run) == 0
    assert listing(checkout) == before, "nothing is written into the checkout"
    saved = (out / "tiny.D1.untuned.json").read_text()
    result = json.loads(saved)
    assert result["error"] is None and len(result["times_us"]) == upstream.RUNS
    assert result["futhark_default_us"] == 50.0 and result["median_us"] > 0
    assert result["launches_per_run"] >= 1 and result["kernels_us_per_run"] > 0
    assert json.loads((out / "broken.compile.json").read_text())["error"].startswith("broken.fut:1:1: error:")
    assert upstream.main(run) == 0  # resumed: every result is there, so nothing is measured again
    assert (out / "tiny.D1.untuned.json").read_text() == saved

    table = out / "report" / "TABLE.md"
    table.parent.mkdir()
    assert upstream.main(["render", "--out", str(out), "--markdown", str(table)]) == 0
    lines = table.read_text().splitlines()
    assert lines[0] == upstream.HEADER
    (row,) = [line for line in lines if line.startswith("| tiny | D1 |")]
    ratio = result["median_us"] / 50
    assert row.startswith(f"| tiny | D1 | 50 | {result['median_us']:,.0f} | {ratio:.2f} | – | – | – | – |")
    ratio2 = json.loads((out / "tiny.D2.untuned.json").read_text())["median_us"] / 60
    assert f"over the 2 datasets that ran: {(ratio * ratio2) ** 0.5:.2f}" in table.read_text()
    assert ("- broken (misc/broken.fut): broken.fut:1:1: error: cannot read the imported file "
            "lib/github.com/diku-dk/cpprandom/random.fut: No such file or directory.") in lines
    combined = json.loads((table.parent / "results.json").read_text())
    assert combined["programs"]["tiny"]["datasets"]["D1"]["untuned"] == result
    assert combined["untuned_datasets"] == 2 and combined["not_compiled"] == [lines[-1].removeprefix("- ")]


def test_the_tuning_copy_has_only_the_training_datasets(tmp_path):
    text = upstream.training_source(TINY, {"D2": "../../inputs/tiny-D2.in"}, "inputs.py's datasets but D1")
    fut = tmp_path / "tuned" / "tiny-without-D1" / "tiny.fut"
    (case,) = parse_test_cases(text, fut)
    path = "../../inputs/tiny-D2.in"
    assert case.name == "D2" and case.input == ValuesFile(path, fut.parent / path)
    assert upstream.DISABLED_BLOCK in text.splitlines() and "data/large.in" in text


def test_the_tuning_copy_imports_the_originals_files(tmp_path):
    """The copy lies in another folder: its imports are made relative to it, so that they name the same files."""
    checkout = tmp_path / "fb" / "misc" / "heston"
    checkout.mkdir(parents=True)
    (checkout / "util.fut").write_text("def twice (x: i32) = x * 2\n")
    source = 'import "util"\n-- ==\n-- input { 1 } output { 2 }\nentry main (x: i32) = twice x\n'
    copy = tmp_path / "out" / "tuned" / "heston-small-inputs"
    copy.mkdir(parents=True)
    text = upstream.training_source(source, {}, "t", os.path.relpath(checkout, copy))
    assert text.splitlines()[0] == 'import "../../../fb/misc/heston/util"'
    (copy / "heston.fut").write_text(text)
    prog = source_program(text, str(copy / "heston.fut"))
    assert [f.name for f in prog.funs if f.entry] == ["main"]


@needs_device
def test_the_tuned_part_tunes_each_dataset_on_the_others_and_times_its_own_tuned_program(folders):
    checkout, anchors, out = folders
    assert upstream.main(["run", str(checkout), "tiny", "one", "--anchors", str(anchors), "--out", str(out),
                          "--parts", "tuned", "--tune-seconds", "60"]) == 0
    programs = set()
    for dataset, other, shape in (("D1", "D2", "f32[16, 4]"), ("D2", "D1", "f32[10, 4]")):
        tuning = json.loads((out / f"tiny.without-{dataset}.tuning.json").read_text())
        assert tuning["error"] is None and tuning["held_out"] == dataset and tuning["training"] == {other: shape}
        folder = out / "tuned" / f"tiny-without-{dataset}"
        assert tuning["tuned_program"] == str(folder / "tiny") and (folder / "tiny.fut.tuning").is_file()
        result = json.loads((out / f"tiny.{dataset}.tuned.json").read_text())
        assert result["error"] is None and result["kernels_us_per_run"] > 0
        assert result["held_out"] == dataset and result["training"] == [other]
        programs.add(result["tuned_program"])
    assert len(programs) == 2, "each dataset is timed with its own tuned program"
    tuning = json.loads((out / "one.tuning.json").read_text())  # one dataset: tuned on --small's inputs
    assert tuning["error"] is None and tuning["held_out"] is None and tuning["training"] == {"small-D1": "f32[3, 4]"}
    result = json.loads((out / "one.D1.tuned.json").read_text())
    assert result["error"] is None and result["training"] == ["small-D1"]
    assert result["training_inputs"] == "inputs.py --small"
    assert not (out / "tiny.D1.untuned.json").exists()

    table = out / "TABLE.md"
    assert upstream.main(["render", "--out", str(out), "--markdown", str(table)]) == 0
    assert json.loads((out / "results.json").read_text())["tuned_datasets"] == 3
    lines = table.read_text().splitlines()
    assert "- tiny D1: tuned on D2" in lines and "- tiny D2: tuned on D1" in lines
    assert "- one D1: tuned on inputs.py --small's small-D1 (f32[3, 4]), its only timed dataset" in lines


def test_an_out_folder_of_the_earlier_tuning_is_refused(folders):
    checkout, anchors, out = folders
    out.mkdir()
    (out / "settings.json").write_text(json.dumps({"small": False}))
    (out / "tiny.tuning.json").write_text("{}")
    with pytest.raises(SystemExit, match="holds tuned results of the earlier tuning"):
        upstream.main(["run", str(checkout), "tiny", "--anchors", str(anchors), "--out", str(out),
                       "--backend", "pyopencl"])  # (a folder of before --backend holds pyopencl's)


@pytest.mark.parametrize("options, message", [
    (["FB_NOWHERE", "--anchors", "ANCHORS"], "FB_DIR FB_NOWHERE: not a folder"),
    (["FB", "--anchors", "FB"], "--anchors FB: holds no futhark-*.json"),
    (["FB", "--anchors", "ANCHORS", "nw"], "no program 'nw' in futhark-test.json (known: tiny, one, broken)"),
    (["FB", "--anchors", "ANCHORS", "--parts", "untuned,fast"], "argument --parts: 'untuned,fast': the parts are"),
    (["FB", "--anchors", "ANCHORS", "--tune-seconds", "-3"], "argument --tune-seconds: '-3': a number of seconds"),
    (["FB", "--anchors", "ANCHORS", "--sma11"], "unrecognized arguments: --sma11"),
])
def test_a_bad_option_is_named_without_a_traceback(folders, options, message):
    checkout, anchors, out = folders
    names = {"FB": str(checkout), "ANCHORS": str(anchors)}
    argv = [names.get(o, o) for o in options]
    done = subprocess.run([sys.executable, str(SCRIPT), "run", *argv, "--out", str(out)], capture_output=True,
                          text=True)
    expected = message.replace("--anchors FB", f"--anchors {checkout}")
    assert done.returncode != 0 and expected in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()


def test_host_time_per_launch_comes_from_the_profiled_invocation_itself():
    """The profiled runs' own mean less their kernels' time, per launch: the timed invocation's median is
    another invocation's, which a host whose speed moves between invocations (1.7x on an H200's) sets apart."""
    profile = {"runs": 10, "kernels": {"a": {"runs": 100, "total_us": 400.0}, "b": {"runs": 100, "total_us": 100.0}}}
    figures = upstream.per_run(profile, [90.0, 110.0] * 5)
    assert figures["kernels_us_per_run"] == 50 and figures["launches_per_run"] == 20
    assert figures["host_us_per_launch"] == (100 - 50) / 20
    assert upstream.per_run(profile, [])["host_us_per_launch"] is None


def test_coverage_counts_what_compiles_and_says_why_the_rest_does_not(tmp_path, capsys):
    """futhark_examples/upstream_coverage.py: every program outside lib/ checked, then compiled; the reasons of the rest
    grouped; nothing written into the checkout."""
    import upstream_coverage as coverage
    fb = tmp_path / "fb"
    for path, text in {"a/ok.fut": "entry main (x: i32) = x + 1\n",
                       "b/stops.fut": "entry main (x: i32) = vjp f32.sin x 1\n",
                       "b/lib/github.com/x/y/z.fut": "def f = )\n"}.items():
        (fb / path).parent.mkdir(parents=True, exist_ok=True)
        (fb / path).write_text(text)
    before = sorted(p.name for p in fb.rglob("*"))
    assert coverage.main([str(fb), "--jobs", "2", "--json", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    assert "a/ok.fut: compiles" in out and "b/stops.fut: stops (stops.fut:1:23: error:" in out
    assert "2 programs: 1 compile, 0 check but do not compile, 1 stop in the checker" in out
    assert '1  "…" is not supported by incflat.' in out
    assert [r["status"] for r in json.loads((tmp_path / "c.json").read_text())] == ["compiles", "stops"]
    assert sorted(p.name for p in fb.rglob("*")) == before


def test_futhark_tests_coverage_counts_outcomes_and_keeps_ad_apart(tmp_path, capsys):
    """futhark_examples/futhark_tests_coverage.py: each program of a Futhark checkout's tests/ tested as `incflat
    test` tests it (here with the interpreter), its outcome counted (a pass, a refusal where a run was expected, an
    error block's program compiling, a wrong value), automatic differentiation counted apart, nothing written."""
    import futhark_tests_coverage as coverage
    root = tmp_path / "futhark"
    programs = {
        "tests/ok.fut": "-- ==\n-- input { 1 } output { 2 }\nentry main (x: i32) = x + 1\n",
        "tests/wrong.fut": "-- ==\n-- input { 1 } output { 3 }\nentry main (x: i32) = x + 1\n",
        "tests/refused.fut": "-- ==\n-- input { 1 } output { 2 }\nentry main (x: i32) = x + nothing\n",
        "tests/rejected_ok.fut": "-- ==\n-- error: Unknown name\nentry main (x: i32) = x + nothing\n",
        "tests/accepted.fut": "-- ==\n-- error: consumed\nentry main (x: i32) = x\n",
        "tests/ad/grad.fut": "-- ==\n-- input { 1f32 } output { 1f32 }\nentry main (x: f32) = vjp f32.sin x 1\n",
    }
    for path, text in programs.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    before = sorted(p.name for p in root.rglob("*"))
    assert coverage.main([str(root), "--json", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    assert "6 programs, 1 outside the subset (1 automatic differentiation); of the 5 inside:" in out
    assert "2 (40.0%) pass" in out and "1 (20.0%) give a wrong result" in out
    assert "1 (20.0%) are refused though their cases expect a run" in out
    assert "1 (20.0%) compile though their block expects an error" in out
    records = {r["program"]: r["status"] for r in json.loads((tmp_path / "c.json").read_text())}
    assert records == {"tests/accepted.fut": "accepted", "tests/ad/grad.fut": "outside", "tests/ok.fut": "passed",
                       "tests/refused.fut": "rejected", "tests/rejected_ok.fut": "passed", "tests/wrong.fut": "wrong"}
    assert sorted(p.name for p in root.rglob("*")) == before
