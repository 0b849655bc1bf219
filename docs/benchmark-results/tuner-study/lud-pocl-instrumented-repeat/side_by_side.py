"""Measures the six `instrumented` results of this folder (run1-3 at 251da74; run4-6 at a6d1ca5, with the
profiles' t-test, since reverted) and `tree`'s of ../lud-pocl-251da74 side by side on LUD's train-512, in the
study's interleaved rounds.

    python docs/benchmark-results/tuner-study/lud-pocl-instrumented-repeat/side_by_side.py
"""
import gzip
import json
import pathlib
import sys
import tempfile
import types

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[3]
sys.path.insert(0, str(REPO / "futhark_examples"))
import tuner_study as ts  # noqa: E402


def assignment(path: pathlib.Path) -> dict:
    return json.loads(gzip.open(path).read())[0]["strategies"][0]["assignment"]


configs = {f"instr{k}-{'old' if k <= 3 else 'new'}": assignment(HERE / f"run{k}.json.gz") for k in range(1, 7)}
configs["tree-251da74"] = assignment(HERE.parent / "lud-pocl-251da74.json.gz")
args = types.SimpleNamespace(exclude_case=["ci", "paper"], runs=3, timeout=120.0, pass_option=[], rounds=3)
fut = REPO / "futhark_examples" / "benchmarks" / "lud.fut"
with tempfile.TemporaryDirectory() as folder:
    local = ts.workspace(fut, pathlib.Path(folder))
    compiled = ts.compile_file(local, pathlib.Path(folder) / fut.stem)
    programs = {"untuned": (compiled, None)} | {name: (compiled, a) for name, a in configs.items()}
    means = ts.side_by_side(local, programs, args)["means"]
best = min(v["train-512"] for v in means.values())
for name, v in means.items():
    print(f"{name:16s} {v['train-512']:10.0f} {v['train-512'] / best:.3f}")
