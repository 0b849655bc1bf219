# usage: bash .devrun/upstream.sh SECONDS PARTS PROGRAM...   (device; resumes from .devrun/results.tar if present)
set -u
limit=$1; parts=$2; shift 2
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/pkg:/tmp/site PYTHONUNBUFFERED=1
mkdir -p /tmp/pkg && ln -sfn "$PWD" /tmp/pkg/incflat
R=/tmp/up; mkdir -p $R
[ -f .devrun/results.tar ] && tar -C $R -xf .devrun/results.tar
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt
timeout $limit python3 futhark_examples/upstream.py run .devrun/fb --anchors .devrun/anchors --out $R/out --parts $parts --tune-seconds 30 "$@" > $R/run.log 2>&1
echo "exit $?" >> $R/run.log
python3 futhark_examples/upstream.py render --out $R/out --markdown $R/table.md > /dev/null 2>&1
tar -C $R -cf $OUT/results.tar . ; cp $R/table.md $R/run.log $OUT/ 2>/dev/null
cat $R/table.md; tail -5 $R/run.log
