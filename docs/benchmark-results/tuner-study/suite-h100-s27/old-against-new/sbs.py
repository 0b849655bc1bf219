"""Side by side, in one pass: the untuned program and named assignments from study files.
usage: sbs.py PROGRAM.fut OUT.json LABEL=FILE:STRATEGY ... (FILE a study.json or partial file)"""
import argparse, json, pathlib, sys, tempfile
sys.path.insert(0, "futhark_examples")
import tuner_study as ts

fut = pathlib.Path(sys.argv[1])
out = pathlib.Path(sys.argv[2])
args = argparse.Namespace(runs=3, timeout=120.0, pass_option=[], rounds=3, exclude_case=["ci"])
with tempfile.TemporaryDirectory() as folder:
    work = pathlib.Path(folder)
    local = ts.workspace(fut, work)
    compiled = ts.compile_file(local, work / fut.stem)
    listing = ts.Program(compiled, []).params(120)
    programs = {"untuned": (compiled, None)}
    for spec in sys.argv[3:]:
        label, _, rest = spec.partition("=")
        path, _, strategy = rest.rpartition(":")
        found = ts.reused(pathlib.Path(path), fut.stem)
        programs[label] = (compiled, found[strategy]["assignment"])
    measured = ts.side_by_side(local, programs, args, incremental=(compiled, listing))
out.write_text(json.dumps(measured, indent=1))
tuning = measured["tuning"]
for name, means in measured["means"].items():
    print(name, round(sum(means[d] for d in tuning)), {d: round(v) for d, v in means.items()},
          measured.get("chosen", {}).get(name, {}).get(tuning[0], ""))
