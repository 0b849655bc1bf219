"""instrumented on LUD train-512 N times, then every distinct result judged in turn (the study's pass)."""
import json, pathlib, sys, tempfile
sys.path.insert(0, "./futhark_examples")
import tuner_study as ts
from incflat import pipeline
from incflat.cli import compile_file
from incflat.tuner.program import Program

n, out = int(sys.argv[1]), pathlib.Path(sys.argv[2])
args = type("A", (), {"runs": 3, "timeout": 120.0, "exclude_case": ["ci", "paper"], "pass_option": [], "seed": 1,
                      "rounds": 3})()
fut = pathlib.Path("./futhark_examples/benchmarks/lud.fut")
with tempfile.TemporaryDirectory() as folder:
    work = pathlib.Path(folder)
    local = ts.workspace(fut, work)
    compiled = compile_file(local, work / "lud")
    pristine = compiled.read_bytes()
    listing = Program(compiled, []).params(120)
    results = []
    for k in range(n):
        r = ts.tune_with("instrumented", local, compiled, pristine, args)
        results.append(r)
        print(k, r.get("runs"), r.get("error"), flush=True)
    compiled.write_bytes(pristine)
    programs = {"untuned": (compiled, None)}
    programs |= {f"i{k}": (compiled, r["assignment"]) for k, r in enumerate(results) if "error" not in r}
    moderate = compiled  # (no MF here)
    programs["MF"] = (compiled, None)
    measured = ts.side_by_side(local, programs, args, incremental=(compiled, listing))
means = {k: sum(v.values()) for k, v in measured["means"].items()}
best = min(means.values())
json.dump({"results": results, "measured": measured}, open(out, "w"))
for k, v in sorted(means.items(), key=lambda kv: kv[1]):
    print(k, round(v), round(v / best, 3), measured["chosen"].get(k))
