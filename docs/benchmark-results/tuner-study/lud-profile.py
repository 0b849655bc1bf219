"""The -P guard records of one dataset under each strategy's result in a tuner study, summed per guard outcome:
kernel time against the host's time (how lud-h200-435680a.profile-2048.txt was made).

    python docs/benchmark-results/tuner-study/lud-profile.py STUDY.json PROGRAM.fut DATA.in OUT.txt
"""
import collections
import json
import pathlib
import subprocess
import sys
import tempfile

from incflat.compiled import compile_cached

study_path, fut, data, out_path = sys.argv[1:5]
study = json.load(open(study_path))[0]
exe = compile_cached(pathlib.Path(fut))
tmp = pathlib.Path(tempfile.mkdtemp())
with open(out_path, "w") as out:
    for result in study["strategies"]:
        name = result["strategy"]
        params = [x for k, v in result["assignment"].items() for x in ("--param", f"{k}={v}")]
        with open(data, "rb") as stdin:
            subprocess.run([sys.executable, str(exe), "-r", "3", "-t", str(tmp / f"{name}.t"), "-P",
                            "--profile-json", str(tmp / f"{name}.json"), *params],
                           stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        summed = collections.defaultdict(lambda: [0, 0.0, 0.0])
        for r in json.loads((tmp / f"{name}.json").read_text())["versions"]:
            s = summed[r["threshold"], r["outcome"]]
            s[0] += 1
            s[1] += r["time_us"]
            s[2] += r["host_us"]
        print(f"== {name}: -t {(tmp / f'{name}.t').read_text().split()}", file=out)
        for (threshold, outcome), (n, kernel, host) in sorted(summed.items()):
            print(f"{threshold:<28} {str(outcome):<6} {n:>6} kernel {kernel:>12.0f} host {host:>12.0f}", file=out)
