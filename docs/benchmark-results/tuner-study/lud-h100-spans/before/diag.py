"""LUD train-512: (1) `diag.py OUT combos`: the 8 combinations of the thresholds where tree's and
instrumented's results of the 251da74 H200 study differ, timed side by side; (2) `diag.py OUT instr`:
instrumented run several times, dumping each loop threshold's per-ePar costs, then its results side by side.
Made at commit 2ba9d59 (profiled runs waited for each kernel)."""
import gzip, itertools, json, pathlib, statistics, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from lud_train512 import QUICK, rounds, timed, tune  # noqa: E402
from incflat.tuner import instrumented as ins  # noqa: E402

OUT = pathlib.Path(sys.argv[1]); OUT.mkdir(parents=True, exist_ok=True)
part = sys.argv[2]
study = json.load(gzip.open('docs/benchmark-results/tuner-study/lud-train512-h200-251da74.json.gz'))[0]
res = {s['strategy']: s['assignment'] for s in study['strategies']}
T, I = res['tree'], res['instrumented']
diff = sorted(k for k in T if T[k] != I[k])

if part == 'combos':
    combos = {}
    for r in range(len(diff) + 1):
        for subset in itertools.combinations(diff, r):
            combos['+'.join(k.split('_')[-2] + k.split('_')[-1] for k in subset) or 'tree'] = T | {k: I[k] for k in subset}
    times = {name: [] for name in combos}
    for rnd in range(rounds(5)):
        for name, params in combos.items():
            times[name] += timed(params, 20)
        print('round', rnd, flush=True)
    with open(OUT / 'combos.txt', 'w') as f:
        print('diff', [(k, T[k], I[k]) for k in diff], file=f)
        for name, ts in times.items():
            print(f'{name:<24} mean {statistics.mean(ts):9.0f} median {statistics.median(ts):9.0f} sd {statistics.stdev(ts):7.0f} min {min(ts):8.0f}', file=f)
    json.dump(times, open(OUT / 'combos.json', 'w'))

if part == 'instr':
    dump = open(OUT / 'curves.jsonl', 'a')
    orig = ins.Profiles.best_breakpoint
    def bb(self, datasets, when_true, when_false, name, candidates):
        value = orig(self, datasets, when_true, when_false, name, candidates)
        try:
            entry = {'name': name, 'chosen': value, 'label': LABEL, 'per_epar': []}
            for d in datasets:
                per = {}
                for side, a in (('t', when_true), ('f', when_false)):
                    runs, records = self._made[(d.dataset.name, ins.path(self.forest, a, d.epars))]
                    mine = [(r['epar'], r['time_us'], r['host_us']) for r in records['versions'] if r['threshold'] == name]
                    n = len(mine) // (runs + 1)
                    per[side] = [mine[k * n:(k + 1) * n] for k in range(1, runs + 1)]
                for i in range(len(per['t'][0])):
                    row = {'epar': per['t'][0][i][0]}
                    for side in 'tf':
                        row[side + '_kernel'] = [run[i][1] for run in per[side]]
                        row[side + '_host'] = [run[i][2] for run in per[side]]
                    entry['per_epar'].append(row)
            dump.write(json.dumps(entry) + '\n'); dump.flush()
        except Exception as e:
            dump.write(json.dumps({'name': name, 'error': repr(e)}) + '\n')
        return value
    ins.Profiles.best_breakpoint = bb
    for LABEL, max_runs in ([('a12', None)] if QUICK else [('a12', None), ('b12', None), ('c36', 36), ('d36', 36), ('e12', None)]):
        r, log, seconds = tune('instrumented', max_runs=max_runs)
        with open(OUT / 'instr.txt', 'a') as f:
            print(LABEL, max_runs, 'runs', r.runs, 'secs', round(seconds), json.dumps(r.assignment, sort_keys=True), file=f)
        (OUT / f'instr-{LABEL}.log').write_text(log)
        print(LABEL, 'done', flush=True)
    # the results side by side with tree's
    results = {l.split()[0]: json.loads(l[l.index('{'):]) for l in open(OUT / 'instr.txt')}
    results['tree'] = T; results['instr251'] = I
    times = {name: [] for name in results}
    for rnd in range(rounds(4)):
        for name, params in results.items():
            times[name] += timed(params, 20)
    with open(OUT / 'instr_side.txt', 'w') as f:
        for name, ts in times.items():
            print(f'{name:<10} mean {statistics.mean(ts):9.0f} median {statistics.median(ts):9.0f} sd {statistics.stdev(ts):7.0f}', file=f)
            print('   differs from tree:', {k: v for k, v in results[name].items() if T.get(k) != v}, file=f)
