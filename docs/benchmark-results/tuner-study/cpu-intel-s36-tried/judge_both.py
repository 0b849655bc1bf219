"""instrumented's LUD results profiled apart (9e8ff8e) and in turn (the dropped patch), judged in one pass."""
import json, pathlib, statistics, sys, tempfile
sys.path.insert(0, "./futhark_examples")
import tuner_study as ts
from incflat.cli import compile_file
from incflat.tuner.program import Program

apart, in_turn = (json.load(open(p)) for p in sys.argv[1:3])
args = type("A", (), {"runs": 3, "timeout": 120.0, "exclude_case": ["ci", "paper"], "pass_option": [], "seed": 1,
                      "rounds": 4})()
fut = pathlib.Path("./futhark_examples/benchmarks/lud.fut")
with tempfile.TemporaryDirectory() as folder:
    work = pathlib.Path(folder)
    local = ts.workspace(fut, work)
    compiled = compile_file(local, work / "lud")
    listing = Program(compiled, []).params(120)
    programs = {"untuned": (compiled, None)}
    programs |= {f"apart{k}": (compiled, r["assignment"]) for k, r in enumerate(apart["results"])}
    programs |= {f"inturn{k}": (compiled, r["assignment"]) for k, r in enumerate(in_turn["results"])}
    measured = ts.side_by_side(local, programs, args, incremental=(compiled, listing))
json.dump(measured, open(sys.argv[3], "w"))
objective = {k: sum(ts.pooled_trimmed_mean(v[d]) for d in measured["tuning"]) for k, v in measured["invocations"].items()}
best = min(objective.values())
for k, v in sorted(objective.items(), key=lambda kv: kv[1]):
    print(f"{k:10} {v:8.0f} {v / best:6.3f}")
