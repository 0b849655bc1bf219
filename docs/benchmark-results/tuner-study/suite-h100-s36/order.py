"""Backprop on the GPU: round 1's values (A) against the last round's (B), as the tuner pairs them (A then B,
and B then A) and as the study's judge groups them (untuned, A, B), 8 invocations each, 6 timed runs each."""
import os, json, pathlib, statistics, sys, tempfile
sys.path.insert(0, "futhark_examples")
from tuner_study import workspace
from incflat.cli import compile_file
from incflat.tuner.datasets import read_test_cases, select_datasets
from incflat.tuner.program import Program

study = json.load(open(".devdata/s36c-study.json"))[0]
tree = study["strategies"][0]
marked = [h for h in tree["history"] if h.get("checkpoint")]
A, B = marked[0]["assignment"], tree["assignment"]
fut = pathlib.Path("futhark_examples/benchmarks/backprop.fut")
out = {}
with tempfile.TemporaryDirectory() as folder:
    local = workspace(fut, pathlib.Path(folder))
    compiled = compile_file(local, pathlib.Path(folder) / "backprop")
    program = Program(compiled, [])
    data = select_datasets(read_test_cases(local), None, tuple(os.environ.get("EXCLUDE", "ci").split(","))).tuning
    modes = {"A,A": [A, A], "A,B": [A, B], "B,A": [B, A], "untuned,A,B": [None, A, B]}
    modes = {m: modes[m] for m in os.environ.get("MODES", ";".join(modes)).split(";")}
    for d in data:
        for rep in range(int(os.environ.get("REPS", 8))):
            for mode, configs in modes.items():
                ran = program.run_in_turn(d, configs, timeout=60, timing_runs=7)
                if not ran.ok:
                    print(d.name, mode, "failed", ran.failure, flush=True); continue
                for k, runs in enumerate((ran.times_us, *ran.alternate_times_us)):
                    out.setdefault(d.name, {}).setdefault(mode, {}).setdefault(f"{k}:{mode.split(',')[k]}", []).append(list(runs[1:]))
        for mode, sides in out[d.name].items():
            print(d.name, mode, {w: round(statistics.fmean(x for inv in r for x in inv)) for w, r in sides.items()}, flush=True)
json.dump(out, open(os.environ.get("ORDER_OUT", "/tmp/so/order.json"), "w"))
