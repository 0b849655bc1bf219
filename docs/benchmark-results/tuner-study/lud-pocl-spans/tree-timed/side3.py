import json, pathlib, subprocess, sys, tempfile, statistics, re
from incflat.harness import compile_cached
B = pathlib.Path('futhark_examples/benchmarks')
S = {s['strategy']: s['assignment'] for s in json.load(open('/tmp/pocl_lud/study.json'))[0]['strategies']}
I = {l.split()[0]: json.loads(l[l.index('{'):]) for l in open('/tmp/pocl_rep/instr.txt')}
def tuned(log):
    text = pathlib.Path(log).read_text()
    block = text[text.index('tuned values:'):].splitlines()[1:]
    return {m.group(1): int(m.group(2)) for l in block if (m := re.match(r'\s+(main\.\S+)=(\d+)$', l))}
configs = {'tree': S['tree'], 'i2': I['i2'], 'tree-timed t1': tuned('/tmp/tree2-t1.log'), 'tree-timed t2': tuned('/tmp/tree2-t2.log')}
exe = compile_cached(B / 'lud.fut'); data = B / 'data/lud-train-512.in'; tmp = pathlib.Path(tempfile.mkdtemp())
def run(params, runs):
    args = [x for k, v in params.items() for x in ('--param', f'{k}={v}')]
    with open(data, 'rb') as stdin:
        subprocess.run([sys.executable, str(exe), '-r', str(runs + 1), '-t', str(tmp / 't'), *args], stdin=stdin, stdout=subprocess.DEVNULL, check=True)
    return [float(x) for x in (tmp / 't').read_text().split()][1:]
times = {n: [] for n in configs}
for rnd in range(8):
    for n, p in configs.items():
        times[n].append(statistics.median(run(p, 10)))
best = min(statistics.median(v) for v in times.values())
for n, v in times.items():
    print(f'{n:<14} {statistics.median(v):8.0f} ({statistics.median(v)/best:.3f})  rounds', ' '.join(f'{x:6.0f}' for x in v))
