#!/bin/bash
# before (prev.tgz) vs after (new.tgz) packing: LocVolCalib forced sweeps and the one-lease AIF tuning; -t means, -P totals
set -u
cd "$(dirname "$0")/.."
export OCL_ICD_VENDORS=/tmp/icd PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1 || exit 1
mkdir -p /tmp/icd /tmp/prev /tmp/new futhark_examples/benchmarks/data $OUT/r
echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
tar xzf .devdata/prev.tgz -C /tmp/prev
tar xzf .devdata/new.tgz -C /tmp/new
tar xzf .devdata/lvc.tgz -C futhark_examples/benchmarks/data
D=$PWD/futhark_examples/benchmarks/data
AIF=$(grep = docs/benchmark-results/after-kernel-scalars/locvolcalib-one-lease/locvolcalib.aif.tuning | grep -v '^--' | sed 's/^/--param /' | tr '\n' ' ')
for ds in ${DATASETS:-small medium large}; do
for sw in aif outer intra; do
for tree in prev new; do
  PP=/tmp/site:/tmp/$tree
  if [ $sw = aif ]; then P="$AIF"; else
    if [ $sw = outer ]; then o=1; i=2147483647; else o=2147483647; i=1; fi
    P="--param main.suff_outer_par_0=2147483647 --param main.suff_intra_par_1=2147483647 --param main.suff_outer_par_8=$o --param main.suff_outer_par_10=$o --param main.suff_intra_par_9=$i --param main.suff_intra_par_11=$i"
  fi
  tag=$ds-$sw-$tree
  (cd /tmp/$tree/incflat && PYTHONPATH=$PP timeout 200 python3 -m incflat run futhark_examples/benchmarks/locvolcalib.fut $P \
    -r ${RUNS:-10} -t $OUT/r/$tag.t < $D/locvolcalib-$ds.in > $OUT/r/$tag.res 2> $OUT/r/$tag.err)
  rc=$?
  (cd /tmp/$tree/incflat && PYTHONPATH=$PP timeout 100 python3 -m incflat run futhark_examples/benchmarks/locvolcalib.fut $P \
    -r 1 -P --profile-json $OUT/r/$tag.prof.json < $D/locvolcalib-$ds.in > /dev/null 2> $OUT/r/$tag.perr)
  python3 - "$tag" "$rc" "$OUT/r/$tag.t" "$OUT/r/$tag.prof.json" "$OUT/r/$tag.res" <<'PY'
import json, statistics, sys
tag, rc, tf, pf, rf = sys.argv[1:]
try:
    ts = [int(x) for x in open(tf).read().split()]
    gpu = sum(k["total_us"] for k in json.load(open(pf))["kernels"].values())
    print(f"{tag:<24} rc={rc} mean_ms={statistics.mean(ts)/1e3:8.2f} median_ms={statistics.median(ts)/1e3:8.2f} min_ms={min(ts)/1e3:8.2f} gpu_ms={gpu/1e3:8.2f} res={open(rf).read()[:60]!r}")
except Exception as e:
    print(tag, "rc", rc, "failed", e)
PY
done
done
done
tar czf $OUT/exp5.tgz -C $OUT r
