"""After the span change: -P span sums for tree and tree+o6 against -t; instrumented 4x, side by side."""
import gzip, json, pathlib, statistics, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from lud_train512 import QUICK, per_guard, profiled, side_by_side, timed, tune  # noqa: E402

OUT = pathlib.Path(sys.argv[1]); OUT.mkdir(parents=True, exist_ok=True)
study = json.load(gzip.open('docs/benchmark-results/tuner-study/lud-train512-h200-251da74.json.gz'))[0]
T = {s['strategy']: s['assignment'] for s in study['strategies']}['tree']

with open(OUT / 'spans.txt', 'w') as f:
    for name, params in (('tree', T), ('o6', T | {'main.suff_outer_par_6': 32})):
        plain = timed(params, 12)
        ts, profile = profiled(params, 12)
        n = len(ts) + 1
        print(f'== {name}: -t {statistics.median(plain):.0f} us, under -P {statistics.median(ts):.0f} us', file=f)
        for (th, outcome), (c, k, h, sp) in sorted(per_guard(profile).items()):
            print(f'{th:<28} {str(outcome):<6} {c // n:>6} kernel {k / n:>9.0f} host {h / n:>9.0f} span {sp / n:>9.0f}', file=f)
print('spans done', flush=True)

found = {'tree': T}
for label in (['i1'] if QUICK else ['i1', 'i2', 'i3', 'i4']):
    r, log, seconds = tune('instrumented')
    found[label] = dict(r.assignment)
    with open(OUT / 'instr.txt', 'a') as f:
        print(label, 'runs', r.runs, 'secs', round(seconds), json.dumps(r.assignment, sort_keys=True), file=f)
    (OUT / f'instr-{label}.log').write_text(log)
    print(label, 'done', flush=True)
side_by_side(found, 'tree', 6, 20, OUT)
