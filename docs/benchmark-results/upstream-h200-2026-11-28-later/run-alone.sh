# untuned, every program, alone; then lud tuned leave-one-out on 256, 1024, 2048 (held out: 64), its log kept
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/pkg:/tmp/site PYTHONUNBUFFERED=1
mkdir -p /tmp/pkg && ln -sfn "$PWD" /tmp/pkg/incflat
R=/tmp/up; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat .devrun/commit.txt >> $R/device.txt
timeout 200 python3 futhark_examples/upstream.py run .devrun/fb --anchors .devrun/anchors --out $R/out --parts untuned > $R/untuned.log 2>&1
echo "exit $?" >> $R/untuned.log
timeout 170 python3 futhark_examples/upstream.py run .devrun/fb --anchors .devrun/anchors --out $R/out --parts tuned --tune-seconds 100 lud > $R/tuned.log 2>&1
echo "exit $?" >> $R/tuned.log
python3 futhark_examples/upstream.py render --out $R/out --markdown $R/table.md > /dev/null 2>&1
mkdir -p $OUT/lud; cp -r $R/out/tuned/lud-without-64/*.txt $R/out/tuned/lud-without-64/*.tuning $OUT/lud/ 2>/dev/null
cp $R/table.md $R/device.txt $R/*.log $OUT/; cp $R/results.json $OUT/ 2>/dev/null
cat $R/device.txt $R/table.md; tail -3 $R/tuned.log
