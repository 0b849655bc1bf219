# scatter of 100,000 values into 1,000,000 floats, before (cee5730: through the host) and after (86a8b96: on the
# device). From the repository root, with make's .venv and its OCL_ICD_VENDORS; writes into /tmp/scatter-bench.
set -e
W=/tmp/scatter-bench; D=docs/benchmark-results/scatter-on-device
mkdir -p $W/old/incflat $W/new/incflat
git archive cee5730 ir flatten codegen tuner __init__.py __main__.py cli.py harness.py pipeline.py | tar x -C $W/old/incflat
git archive 86a8b96 ir flatten codegen tuner __init__.py __main__.py cli.py harness.py pipeline.py | tar x -C $W/new/incflat
.venv/bin/python - <<'PY'
import numpy as np, futhark_data
rng = np.random.default_rng(1)
with open("/tmp/scatter-bench/s.in", "wb") as f:
    futhark_data.dump(rng.random(1000000, dtype=np.float32), f, True)
    futhark_data.dump(rng.integers(-10, 1000010, 100000).astype(np.int64), f, True)
    futhark_data.dump(rng.random(100000, dtype=np.float32), f, True)
PY
for side in old new; do
  PYTHONPATH=$W/$side .venv/bin/python -m incflat compile $D/scatter.fut -o $W/$side/scatter
  .venv/bin/python $W/$side/scatter -r 5 -t $W/$side.t -b < $W/s.in > $W/$side.out
  echo "$side: $(tr '\n' ' ' < $W/$side.t)"
done
cmp $W/old.out $W/new.out && echo "same results"
