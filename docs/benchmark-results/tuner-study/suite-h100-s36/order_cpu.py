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
fut = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "futhark_examples/benchmarks/backprop.fut")
with tempfile.TemporaryDirectory() as folder:
    local = workspace(fut, pathlib.Path(folder))
    compiled = compile_file(local, pathlib.Path(folder) / "p")
    program = Program(compiled, [])
    d = select_datasets(read_test_cases(local), None, ("paper", "train"))
    d = (d.tuning + d.held_out)[0]
    modes = {"A": [A], "U": [None], "A,A": [A, A], "A,B": [A, B], "B,A": [B, A], "U,A": [None, A], "A,U": [A, None],
             "U,A,B": [None, A, B], "A,B,U": [A, B, None]}
    for mode, configs in modes.items():
        res = {}
        for rep in range(3):
            ran = program.run_in_turn(d, configs, timeout=60, timing_runs=9)
            for i, runs in enumerate((ran.times_us, *ran.alternate_times_us)):
                res.setdefault(i, []).extend(runs[1:])
        print(mode, [round(statistics.fmean(r)) for r in res.values()], [list(r[:8]) for r in res.values()][:2], flush=True)
