# The table of docs/benchmarks.md on a machine of two H200s: GPU 0 times every program untuned; GPU 1 tunes
# and times OptionPricing, backprop and pathfinder (leave-one-out, 20 s a tuning; lud and LocVolCalib need more).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/pkg:/tmp/site PYTHONUNBUFFERED=1
mkdir -p /tmp/pkg && ln -sfn "$PWD" /tmp/pkg/incflat
R=/tmp/up; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat .devrun/commit.txt >> $R/device.txt
seen=$(CUDA_VISIBLE_DEVICES=1 python3 -c "import pyopencl as cl; print(sum(len(p.get_devices()) for p in cl.get_platforms()))")
echo "devices seen with CUDA_VISIBLE_DEVICES=1: $seen" >> $R/device.txt
run() { python3 futhark_examples/upstream.py run .devrun/fb --anchors .devrun/anchors --tune-seconds 20 "$@"; }
if [ "$seen" = 1 ]; then
  (CUDA_VISIBLE_DEVICES=0 timeout 400 bash -c "$(declare -f run); run --out $R/gpu0 --parts untuned LocVolCalib OptionPricing backprop pathfinder lud" > $R/gpu0.log 2>&1) &
  (CUDA_VISIBLE_DEVICES=1 timeout 400 bash -c "$(declare -f run); run --out $R/gpu1 --parts tuned OptionPricing backprop pathfinder" > $R/gpu1.log 2>&1) &
  wait
else
  timeout 520 bash -c "$(declare -f run); run --out $R/gpu0 --parts untuned LocVolCalib OptionPricing backprop pathfinder lud && run --out $R/gpu0 --parts tuned pathfinder lud backprop" > $R/gpu0.log 2>&1
fi
mkdir -p $R/all && cp $R/gpu0/*.json $R/all/ && { [ -d $R/gpu1 ] && for f in $R/gpu1/*.json; do [ -e $R/all/$(basename $f) ] || cp $f $R/all/; done; }
python3 futhark_examples/upstream.py render --out $R/all --markdown $R/table.md > /dev/null 2>&1
cp $R/table.md $R/device.txt $R/gpu0.log $OUT/; [ -f $R/gpu1.log ] && cp $R/gpu1.log $OUT/
cp $R/all/results.json $OUT/ 2>/dev/null
cat $R/device.txt $R/table.md
