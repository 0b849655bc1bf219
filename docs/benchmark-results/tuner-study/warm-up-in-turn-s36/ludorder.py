import gzip, json, pathlib, statistics, sys, tempfile
sys.path.insert(0, "futhark_examples")
from tuner_study import workspace
from incflat.cli import compile_file
from incflat.tuner.datasets import read_test_cases, select_datasets
from incflat.tuner.program import Program
d = json.load(gzip.open('docs/benchmark-results/tuner-study/cpu-intel-82738e8-lud-budget300.json.gz'))[0]
cfg = {s['strategy']: s['assignment'] for s in d['strategies']}
fut = pathlib.Path("futhark_examples/benchmarks/lud.fut")
with tempfile.TemporaryDirectory() as folder:
    local = workspace(fut, pathlib.Path(folder))
    compiled = compile_file(local, pathlib.Path(folder) / "lud")
    program = Program(compiled, [])
    ds = select_datasets(read_test_cases(local), None, ("ci", "paper")).tuning[0]
    orders = [["tree", "bandit", "instrumented", "untuned"], ["bandit", "instrumented", "untuned", "tree"],
              ["instrumented", "tree"], ["tree", "instrumented"]]
    for order in orders:
        res = {}
        for rep in range(int(sys.argv[1])):
            ran = program.run_in_turn(ds, [cfg.get(n) for n in order], timeout=120, timing_runs=5)
            for n, runs in zip(order, (ran.times_us, *ran.alternate_times_us)):
                res.setdefault(n, []).append(runs)
        for n in order:
            print(order, n, [round(statistics.fmean(r[i] for r in res[n])) for i in range(5)], flush=True)
