import gzip, json, os, pathlib, sys, tempfile, subprocess
sys.path.insert(0, "futhark_examples")
from tuner_study import workspace
from incflat.cli import compile_file
from incflat.codegen.runtime.tuning import tuning_file_text
d = json.load(gzip.open('docs/benchmark-results/tuner-study/cpu-intel-82738e8-lud-budget300.json.gz'))[0]
cfg = {s['strategy']: s['assignment'] for s in d['strategies']}
fut = pathlib.Path("futhark_examples/benchmarks/lud.fut")
with tempfile.TemporaryDirectory() as folder:
    local = workspace(fut, pathlib.Path(folder))
    compiled = compile_file(local, pathlib.Path(folder) / "lud")
    files = []
    for n in ([] if os.environ.get("ALONE") else ["bandit", "instrumented", "untuned"]):
        f = pathlib.Path(folder) / f"{n}.tuning"; f.write_text(tuning_file_text(cfg.get(n) or {})); files.append(f)
    args = [sys.executable, str(compiled), "-b", "-r", "6"] + ([] if os.environ.get("ALONE") == "untuned" else [a for (k, v) in cfg[os.environ.get("ALONE", "tree")].items() for a in ("--param", f"{k}={v}")])
    for f in files: args += ["--alternate-tuning", str(f)]
    inp = open("futhark_examples/benchmarks/data/lud-train-512.in", "rb")
    r = subprocess.run(args, stdin=inp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ, POOLDEBUG="1"))
    print(r.stderr.decode()[-4000:])
