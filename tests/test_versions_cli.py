"""`incflat versions` (text, Graphviz, JSON, statistics) and `--flattening=moderate`."""

import json
import subprocess
import sys

import pytest

from conftest import ROOT, run_program
from incflat import pipeline

MATMUL = ROOT / "futhark_examples" / "matmul.fut"


def incflat(*args) -> str:
    proc = subprocess.run([sys.executable, "-m", "incflat", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_text_shows_the_five_versions_of_matmul_in_the_papers_notation():
    out = incflat("versions", str(MATMUL))
    for v in ("V1: segmap1 <xs", "V2: segmap1 <xs", "V3: segmap1 <xs", "V4: segmap1 <xs", "V5: segred1 <xs"):
        assert v in out
    assert "if main.suff_outer_par_0 <= n:" in out and "if main.suff_outer_par_2 <= n * p:" in out
    assert "if main.suff_intra_par_3 <= m (and fits a workgroup):" in out


def test_json_is_the_threshold_chain():
    tree = json.loads(incflat("versions", "--json", str(MATMUL)))["main"]
    chain = []
    node = tree[0]
    while "threshold" in node:
        chain.append((node["threshold"], node["par"]))
        assert node["true"][0]["version"].startswith("V")
        node = node["false"][0]
    assert chain == [("main.suff_outer_par_0", "n"), ("main.suff_intra_par_1", "p"),
                     ("main.suff_outer_par_2", "n * p"), ("main.suff_intra_par_3", "m")]
    assert node["version"] == "V5" and node["segops"].startswith("segred1")


@pytest.mark.parametrize("stage", pipeline.STAGE_NAMES)
def test_the_ir_after_any_stage(stage):
    out = incflat("versions", "--until", stage, "--verify", str(MATMUL))
    expected = {"parse": "Decl(", "check": "entry main [n][m][p]", "inline_calls": "map",
                "fuse_into_reductions": "redomap", "flatten": "segmap1 <", "rename_interfaces": "main.suff_outer_par_0",
                "generate": "__kernel void segmap_0("}
    assert expected.get(stage, "entry main") in out, out[:2000]
    if stage in ("fuse_into_reductions", "remove_dead_code"):
        assert "redomap" in out and "segmap" not in out
    if stage == "prune_unsupported":
        assert "if main.suff_intra_par_3 <=" in out and "segred1 <" in out
    if stage == "generate":
        assert "main.suff_outer_par_0 (threshold(def, ))" in out and "def entry_main(ctx," in out


def test_the_pipeline_goes_on_from_any_stage():
    target = pipeline.compile(MATMUL.read_text(), "matmul.fut", until="prune_unsupported")
    generated = pipeline.run(target, "prune_unsupported")
    assert [k.name for k in generated.kernels][:2] == ["segmap_0", "segmap_1"]
    with pytest.raises(ValueError, match="cannot run the stages from after check to generate on a Program"):
        pipeline.run(target, "check")
    with pytest.raises(ValueError, match="no stage 'nope'"):
        pipeline.compile("", until="nope")


def test_dot_and_stats():
    dot = incflat("versions", "--dot", str(MATMUL))
    assert dot.startswith("digraph versions {") and dot.count("shape=box") == 5 and dot.count("shape=diamond") == 4
    stats = incflat("versions", "--stats", str(MATMUL)).splitlines()
    incremental = next(line for line in stats if line.startswith("incremental "))
    moderate = next(line for line in stats if line.startswith("moderate "))
    assert incremental.split()[1:4] == ["5", "7", "4"] and moderate.split()[1:4] == ["1", "1", "0"]


def test_a_program_without_entry_points_has_no_versions_and_nothing_to_compare(tmp_path):
    """issue 53: `--stats` divided by the moderate program's code size, 0."""
    fut = tmp_path / "empty.fut"
    fut.write_text("def f (x: i32) = x + 1\n")
    assert incflat("versions", str(fut)) == (
        f"{fut} has no entry points: nothing is compiled, so there are no versions\n")
    stats = incflat("versions", "--stats", str(fut)).splitlines()
    assert stats[-1] == "incremental / moderate: nothing to compare (the program has no entry points)"
    assert stats[2].split()[:5] == ["incremental", "0", "0", "0", "0"]


def test_moderate_flattening_is_one_correct_version(tmp_path, device):
    from incflat.cli import compile_file
    from incflat.pipeline import Options
    fut = tmp_path / "mm.fut"
    fut.write_text(MATMUL.read_text())
    program = compile_file(fut, tmp_path / "mm", Options(flattening="moderate"))
    assert b"threshold" not in run_program(program, b"", "--print-params").stdout
    out = run_program(program, b"[[1f32, 2f32], [3f32, 4f32]] [[5f32, 6f32], [7f32, 8f32]]", "-d", device).stdout
    assert out.decode() == "[[19.0f32, 22.0f32], [43.0f32, 50.0f32]]\n"

