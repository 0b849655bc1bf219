# untuned table of every program, then lud tuned leave-one-out (TUNE seconds a tuning), on the working tree
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/pkg:/tmp/site PYTHONUNBUFFERED=1
mkdir -p /tmp/pkg && ln -sfn "$PWD" /tmp/pkg/incflat
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
R=/tmp/up; mkdir -p $R
if [ "${UNTUNED:-1}" = 1 ]; then
  timeout 240 python3 futhark_examples/upstream.py run .devrun/fb --anchors .devrun/anchors --out $R --parts untuned > $OUT/untuned.log 2>&1
  echo "exit $?" >> $OUT/untuned.log
fi
if [ -n "${TUNE:-}" ]; then
  timeout ${TUNE_LIMIT:-330} python3 futhark_examples/upstream.py run .devrun/fb --anchors .devrun/anchors --out $R --parts tuned --tune-seconds $TUNE ${TUNED_PROGRAMS:-lud} > $OUT/tuned.log 2>&1
  echo "exit $?" >> $OUT/tuned.log
  mkdir -p $OUT/tunings; for d in $R/tuned/*/; do n=$(basename $d); cp $d/*.tuning $OUT/tunings/$n.tuning 2>/dev/null; cp $d/*.autotune.txt $OUT/tunings/$n.autotune.txt 2>/dev/null; done
fi
python3 futhark_examples/upstream.py render --out $R --markdown $OUT/table.md > /dev/null 2>&1
cp $R/results.json $OUT/ 2>/dev/null; cat $OUT/table.md; tail -3 $OUT/*.log
