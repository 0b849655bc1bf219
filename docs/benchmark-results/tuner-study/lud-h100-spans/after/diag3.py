"""After the span change: -P span sums for tree and tree+o6 against -t; instrumented 4x, side by side."""
import collections, gzip, io, json, os, pathlib, statistics, subprocess, sys, tempfile, time
from incflat.harness import compile_cached
from incflat.tuner.autotune import autotune

OUT = pathlib.Path(sys.argv[1]); OUT.mkdir(parents=True, exist_ok=True)
B = pathlib.Path('futhark_examples/benchmarks')
study = json.load(gzip.open('docs/benchmark-results/tuner-study/lud-train512-h200-251da74.json.gz'))[0]
T = {s['strategy']: s['assignment'] for s in study['strategies']}['tree']
quick = bool(os.environ.get('QUICK'))
exe = compile_cached(B / 'lud.fut')
data = B / 'data/lud-train-512.in'
tmp = pathlib.Path(tempfile.mkdtemp())

def run(params, runs, extra=()):
    args = [x for k, v in params.items() for x in ('--param', f'{k}={v}')]
    with open(data, 'rb') as stdin:
        subprocess.run([sys.executable, str(exe), '-r', str(runs + 1), '-t', str(tmp / 't'), *extra, *args],
                       stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return [float(x) for x in (tmp / 't').read_text().split()][1:]

with open(OUT / 'spans.txt', 'w') as f:
    for name, params in (('tree', T), ('o6', T | {'main.suff_outer_par_6': 32})):
        plain = run(params, 2 if quick else 12)
        ts = run(params, 2 if quick else 12, ('--profile-json', str(tmp / 'p.json')))
        prof = json.loads((tmp / 'p.json').read_text())
        n = len(ts) + 1
        print(f'== {name}: -t {statistics.median(plain):.0f} us, under -P {statistics.median(ts):.0f} us', file=f)
        summed = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
        for r in prof['versions']:
            s = summed[r['threshold'], r['outcome']]
            s[0] += 1; s[1] += r['time_us']; s[2] += r['host_us']; s[3] += r['span_us']
        for (th, outcome), (c, k, h, sp) in sorted(summed.items()):
            print(f'{th:<28} {str(outcome):<6} {c // n:>6} kernel {k / n:>9.0f} host {h / n:>9.0f} span {sp / n:>9.0f}', file=f)
print('spans done', flush=True)

found = {'tree': T}
for label in (['i1'] if quick else ['i1', 'i2', 'i3', 'i4']):
    work = pathlib.Path(tempfile.mkdtemp())
    fut = work / 'lud.fut'; fut.write_text((B / 'lud.fut').read_text()); (work / 'data').symlink_to((B / 'data').resolve())
    compiled = work / 'lud'; compiled.write_bytes(exe.read_bytes()); compiled.chmod(0o755)
    log = io.StringIO(); t0 = time.monotonic()
    r = autotune(fut, compiled, runs=3, timeout=120, exclude=['ci', 'paper'], out=log, strategy='instrumented',
                 seed=1, store=None)
    found[label] = dict(r.assignment)
    with open(OUT / 'instr.txt', 'a') as f:
        print(label, 'runs', r.runs, 'secs', round(time.monotonic() - t0), json.dumps(r.assignment, sort_keys=True), file=f)
    (OUT / f'instr-{label}.log').write_text(log.getvalue())
    print(label, 'done', flush=True)
times = {name: [] for name in found}
for rnd in range(1 if quick else 6):
    for name, params in found.items():
        times[name].append(run(params, 2 if quick else 20))
json.dump(times, open(OUT / 'side.json', 'w'))
with open(OUT / 'side.txt', 'w') as f:
    best = min(statistics.median([t for r in rs for t in r]) for rs in times.values())
    for name, rounds in times.items():
        flat = [t for r in rounds for t in r]
        print(f'{name:<6} median {statistics.median(flat):8.0f} ({statistics.median(flat) / best:.3f}) mean {statistics.mean(flat):8.0f} per round',
              ' '.join(f'{statistics.median(r):6.0f}' for r in rounds), file=f)
        print('   differs from tree:', {k: v for k, v in found[name].items() if T.get(k) != v}, file=f)
