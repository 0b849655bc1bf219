# docs/benchmarks.md's table on a machine of four H200s: GPU 0 times every program untuned; GPUs 1-3 tune
# (leave-one-out) and time lud (100 s a tuning), LocVolCalib (110 s), and nw, OptionPricing, backprop and
# pathfinder (30 s).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/pkg:/tmp/site PYTHONUNBUFFERED=1
mkdir -p /tmp/pkg && ln -sfn "$PWD" /tmp/pkg/incflat
R=/tmp/up; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat .devrun/commit.txt >> $R/device.txt
run() { gpu=$1; secs=$2; shift 2
  CUDA_VISIBLE_DEVICES=$gpu timeout 530 python3 futhark_examples/upstream.py run .devrun/fb --anchors .devrun/anchors --out $R/gpu$gpu --tune-seconds $secs "$@" > $R/gpu$gpu.log 2>&1
  echo "exit $? at $(date +%T)" >> $R/gpu$gpu.log; }
date +%T > $R/start.txt
run 0 20 --parts untuned LocVolCalib OptionPricing backprop pathfinder lud nw &
run 1 100 --parts tuned lud &
run 2 110 --parts tuned LocVolCalib &
run 3 30 --parts tuned nw OptionPricing backprop pathfinder &
wait
mkdir -p $R/all && cp $R/gpu0/*.json $R/all/
for g in 1 2 3; do for f in $R/gpu$g/*.json; do [ -e $R/all/$(basename $f) ] || cp $f $R/all/; done; done
python3 futhark_examples/upstream.py render --out $R/all --markdown $R/table.md > $R/render.log 2>&1
cp $R/table.md $R/device.txt $R/start.txt $R/render.log $R/gpu*.log $OUT/; cp $R/results.json $OUT/ 2>/dev/null || cp $R/all/results.json $OUT/ 2>/dev/null
tar -C $R -czf $OUT/all.tgz all
cat $R/device.txt $R/table.md; tail -2 $R/gpu*.log
