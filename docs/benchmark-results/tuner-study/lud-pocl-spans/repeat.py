"""LUD train-512: `instrumented` tuned N more times, then its results and a study's side by side.

    python repeat.py STUDY.json OUT N

STUDY.json is a tuner_study.py result for lud.fut (its tree and instrumented results are the reference);
the side-by-side pass measures every result in 6 interleaved rounds of 20 runs (after a warm-up run each)."""
import io, json, pathlib, statistics, subprocess, sys, tempfile, time
from incflat.harness import compile_cached
from incflat.tuner.autotune import autotune

study_path, OUT, N = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
OUT.mkdir(parents=True, exist_ok=True)
B = pathlib.Path('futhark_examples/benchmarks')
found = {s['strategy']: s['assignment'] for s in json.loads(study_path.read_text())[0]['strategies']
         if s['strategy'] in ('tree', 'instrumented')}
exe = compile_cached(B / 'lud.fut')
data = B / 'data/lud-train-512.in'
tmp = pathlib.Path(tempfile.mkdtemp())


def run(params, runs):
    args = [x for k, v in params.items() for x in ('--param', f'{k}={v}')]
    with open(data, 'rb') as stdin:
        subprocess.run([sys.executable, str(exe), '-r', str(runs + 1), '-t', str(tmp / 't'), *args],
                       stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return [float(x) for x in (tmp / 't').read_text().split()][1:]


for k in range(1, N + 1):
    work = pathlib.Path(tempfile.mkdtemp())
    fut = work / 'lud.fut'
    fut.write_text((B / 'lud.fut').read_text())
    (work / 'data').symlink_to((B / 'data').resolve())
    compiled = work / 'lud'
    compiled.write_bytes(exe.read_bytes())
    compiled.chmod(0o755)
    log, start = io.StringIO(), time.monotonic()
    r = autotune(fut, compiled, runs=3, timeout=120, exclude=['ci', 'paper'], out=log, strategy='instrumented',
                 seed=1, store=None)
    found[f'i{k}'] = dict(r.assignment)
    with open(OUT / 'instr.txt', 'a') as f:
        print(f'i{k}', 'runs', r.runs, 'secs', round(time.monotonic() - start), json.dumps(r.assignment, sort_keys=True),
              file=f)
    print(f'i{k} done', flush=True)
times = {name: [] for name in found}
for _ in range(6):
    for name, params in found.items():
        times[name].append(run(params, 20))
json.dump(times, open(OUT / 'side.json', 'w'))
medians = {name: statistics.median([t for r in rounds for t in r]) for name, rounds in times.items()}
with open(OUT / 'side.txt', 'w') as f:
    for name, rounds in times.items():
        print(f'{name:<12} median {medians[name]:8.0f} ({medians[name] / min(medians.values()):.3f}) per round',
              ' '.join(f'{statistics.median(r):6.0f}' for r in rounds), file=f)
        print('   differs from tree:', {k: v for k, v in found[name].items() if found['tree'].get(k) != v}, file=f)
