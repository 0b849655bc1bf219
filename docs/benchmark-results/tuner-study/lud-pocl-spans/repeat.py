"""LUD train-512: `instrumented` tuned N more times, then its results and a study's side by side.

    python docs/benchmark-results/tuner-study/lud-pocl-spans/repeat.py STUDY.json OUT N

STUDY.json (or .json.gz) is a tuner_study.py result for lud.fut (its tree and instrumented results are the
reference); the side-by-side pass measures every result in 6 interleaved rounds of 20 runs (after a warm-up
run each): OUT/instr.txt, OUT/side.txt, OUT/side.json."""
import json, pathlib, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from lud_train512 import side_by_side, study_results, tune  # noqa: E402

study_path, OUT, N = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
OUT.mkdir(parents=True, exist_ok=True)
found = {k: v for k, v in study_results(study_path).items() if k in ('tree', 'instrumented')}
for k in range(1, N + 1):
    r, _, seconds = tune('instrumented')
    found[f'i{k}'] = dict(r.assignment)
    with open(OUT / 'instr.txt', 'a') as f:
        print(f'i{k}', 'runs', r.runs, 'secs', round(seconds), json.dumps(r.assignment, sort_keys=True), file=f)
    print(f'i{k} done', flush=True)
side_by_side(found, 'tree', 6, 20, OUT)
