import io, json, pathlib, sys, tempfile, time
from incflat.harness import compile_cached
from incflat.tuner import strategies as st
from incflat.tuner.autotune import autotune
from incflat.tuner.simple import tune_simple

def tree2(space, objective, rng, log):
    trees = st._trees(space)
    loops = {n.name for n in space.order if any(len(set(d.epars.get(n.name, ()))) > 1 for d in space.datasets)}
    seeded = st.instrumented(space, objective, rng, log)
    if seeded.stopped:
        return seeded
    tuned = tune_simple(space.forest, space.datasets, objective.bench, log, start=seeded.assignment,
                        settled=loops, notes=seeded.notes)
    return tuned if tuned.stopped else st._no_worse_than(seeded, tuned, space, objective, log)
st.STRATEGIES['tree2'] = tree2
B = pathlib.Path('futhark_examples/benchmarks')
exe = compile_cached(B / 'lud.fut')
out = {}
for label in sys.argv[1:]:
    work = pathlib.Path(tempfile.mkdtemp())
    fut = work / 'lud.fut'; fut.write_text((B / 'lud.fut').read_text()); (work / 'data').symlink_to((B / 'data').resolve())
    compiled = work / 'lud'; compiled.write_bytes(exe.read_bytes()); compiled.chmod(0o755)
    log = io.StringIO(); t0 = time.monotonic()
    r = autotune(fut, compiled, runs=3, timeout=120, exclude=['ci', 'paper'], out=log, strategy='tree2', seed=1, store=None)
    print(label, 'runs', r.runs, 'secs', round(time.monotonic() - t0), 'o6', r.assignment.get('main.suff_outer_par_6'), json.dumps(r.assignment, sort_keys=True), flush=True)
    pathlib.Path(f'/tmp/tree2-{label}.log').write_text(log.getvalue())
