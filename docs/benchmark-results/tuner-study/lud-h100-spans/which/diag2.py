"""LUD train-512: which of a12/d36's differences from tree's result makes them slow; -P summaries."""
import collections, gzip, json, os, pathlib, statistics, subprocess, sys, tempfile
from incflat.harness import compile_cached

OUT = pathlib.Path(sys.argv[1]); OUT.mkdir(parents=True, exist_ok=True)
B = pathlib.Path('futhark_examples/benchmarks')
study = json.load(gzip.open('docs/benchmark-results/tuner-study/lud-train512-h200-251da74.json.gz'))[0]
T = {s['strategy']: s['assignment'] for s in study['strategies']}['tree']
NEVER = 2147483647
found = {l.split()[0]: json.loads(l[l.index('{'):]) for l in open(pathlib.Path(__file__).with_name('instr23.txt'))}
configs = {'tree': T, 'o6': T | {'main.suff_outer_par_6': 32}, 'o10': T | {'main.suff_outer_par_10': 32},
           'o14': T | {'main.suff_outer_par_14': 64}, 'i27': T | {'main.suff_intra_par_27': NEVER},
           'o6+o10': T | {'main.suff_outer_par_6': 32, 'main.suff_outer_par_10': 32},
           'a12': found['a12'], 'd36': found['d36'], 'c36': found['c36']}
exe = compile_cached(B / 'lud.fut')
data = B / 'data/lud-train-512.in'
tmp = pathlib.Path(tempfile.mkdtemp())
quick = bool(os.environ.get('QUICK'))

def run(params, runs, extra=()):
    args = [x for k, v in params.items() for x in ('--param', f'{k}={v}')]
    with open(data, 'rb') as stdin:
        subprocess.run([sys.executable, str(exe), '-r', str(runs + 1), '-t', str(tmp / 't'), *extra, *args],
                       stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return [float(x) for x in (tmp / 't').read_text().split()][1:]

times = {name: [] for name in configs}
for rnd in range(1 if quick else 7):
    for name, params in configs.items():
        times[name].append(run(params, 2 if quick else 20))
    print('round', rnd, flush=True)
with open(OUT / 'diag2.txt', 'w') as f:
    for name, rounds in times.items():
        flat = [t for r in rounds for t in r]
        print(f'{name:<8} median {statistics.median(flat):8.0f} mean {statistics.mean(flat):8.0f} per round',
              ' '.join(f'{statistics.median(r):6.0f}' for r in rounds), file=f)
json.dump(times, open(OUT / 'diag2.json', 'w'))
with open(OUT / 'profiles.txt', 'w') as f:
    for name in ('tree', 'o6', 'o10', 'a12'):
        ts = run(configs[name], 2 if quick else 12, ('-P', '--profile-json', str(tmp / 'p.json')))
        prof = json.loads((tmp / 'p.json').read_text())
        print(f'== {name}: -t under -P {statistics.median(ts):.0f} us; kernels total {sum(k["total_us"] for k in prof["kernels"].values()) / (len(ts) + 1):.0f} us/run', file=f)
        summed = collections.defaultdict(lambda: [0, 0.0, 0.0])
        for r in prof['versions']:
            s = summed[r['threshold'], r['outcome']]
            s[0] += 1; s[1] += r['time_us']; s[2] += r['host_us']
        for (th, outcome), (n, k, h) in sorted(summed.items()):
            print(f'{th:<28} {str(outcome):<6} {n:>6} kernel/run {k / (len(ts) + 1):>9.0f} host/run {h / (len(ts) + 1):>9.0f}', file=f)
