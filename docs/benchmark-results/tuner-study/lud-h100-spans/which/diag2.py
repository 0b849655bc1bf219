"""LUD train-512: which of a12/d36's differences from tree's result makes them slow; -P summaries.
Made at commit 2ba9d59 (profiled runs waited for each kernel; its records had no spans)."""
import gzip, json, pathlib, statistics, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from lud_train512 import per_guard, profiled, rounds, timed  # noqa: E402

OUT = pathlib.Path(sys.argv[1]); OUT.mkdir(parents=True, exist_ok=True)
study = json.load(gzip.open('docs/benchmark-results/tuner-study/lud-train512-h200-251da74.json.gz'))[0]
T = {s['strategy']: s['assignment'] for s in study['strategies']}['tree']
NEVER = 2147483647
found = {l.split()[0]: json.loads(l[l.index('{'):]) for l in open(pathlib.Path(__file__).with_name('instr23.txt'))}
configs = {'tree': T, 'o6': T | {'main.suff_outer_par_6': 32}, 'o10': T | {'main.suff_outer_par_10': 32},
           'o14': T | {'main.suff_outer_par_14': 64}, 'i27': T | {'main.suff_intra_par_27': NEVER},
           'o6+o10': T | {'main.suff_outer_par_6': 32, 'main.suff_outer_par_10': 32},
           'a12': found['a12'], 'd36': found['d36'], 'c36': found['c36']}

times = {name: [] for name in configs}
for rnd in range(rounds(7)):
    for name, params in configs.items():
        times[name].append(timed(params, 20))
    print('round', rnd, flush=True)
with open(OUT / 'diag2.txt', 'w') as f:
    for name, runs in times.items():
        flat = [t for r in runs for t in r]
        print(f'{name:<8} median {statistics.median(flat):8.0f} mean {statistics.mean(flat):8.0f} per round',
              ' '.join(f'{statistics.median(r):6.0f}' for r in runs), file=f)
json.dump(times, open(OUT / 'diag2.json', 'w'))
with open(OUT / 'profiles.txt', 'w') as f:
    for name in ('tree', 'o6', 'o10', 'a12'):
        ts, profile = profiled(configs[name], 12)
        n = len(ts) + 1
        print(f'== {name}: -t under -P {statistics.median(ts):.0f} us; kernels total {sum(k["total_us"] for k in profile["kernels"].values()) / n:.0f} us/run', file=f)
        for (th, outcome), (count, k, h, _) in sorted(per_guard(profile).items()):
            print(f'{th:<28} {str(outcome):<6} {count:>6} kernel/run {k / n:>9.0f} host/run {h / n:>9.0f}', file=f)
