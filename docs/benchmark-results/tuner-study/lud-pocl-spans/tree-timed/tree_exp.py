"""An experiment, not the tuner's behaviour: `tree` with only the guards that see several values in one run
(true loop guards) kept from the profiled pass, so that its timed rounds compare every other guard too.

    python docs/benchmark-results/tuner-study/lud-pocl-spans/tree-timed/tree_exp.py OUT LABEL ...

Each LABEL is one tuner run of LUD train-512: OUT/tree_exp.txt (a line each: LABEL runs N secs S {assignment})
and OUT/tree2-LABEL.log."""
import json, pathlib, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from lud_train512 import tune  # noqa: E402
from incflat.tuner import strategies as st  # noqa: E402
from incflat.tuner.simple import tune_simple  # noqa: E402


def tree2(space, objective, rng, log):
    loops = {n.name for n in space.order if any(len(d.epars.get(n.name, ())) > 1 for d in space.datasets)}
    seeded = st.instrumented(space, objective, rng, log)
    if seeded.stopped:
        return seeded
    tuned = tune_simple(space.forest, space.datasets, objective.bench, log, start=seeded.assignment,
                        settled=loops, notes=seeded.notes)
    return tuned if tuned.stopped else st._no_worse_than(seeded, tuned, space, objective, log)


st.STRATEGIES['tree2'] = tree2
OUT = pathlib.Path(sys.argv[1]); OUT.mkdir(parents=True, exist_ok=True)
for label in sys.argv[2:]:
    r, log, seconds = tune('tree2')
    with open(OUT / 'tree_exp.txt', 'a') as f:
        print(label, 'runs', r.runs, 'secs', round(seconds), json.dumps(r.assignment, sort_keys=True), file=f)
    (OUT / f'tree2-{label}.log').write_text(log)
    print(label, 'done', flush=True)
