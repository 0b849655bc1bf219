# session 38, second lease: srad's study again at 6277d63+ (tree against s34's `random`), for the device's share
mkdir -p /tmp/so futhark_examples/benchmarks/data; P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > /tmp/so/device.txt 2>&1
python3 futhark_examples/gen_data.py srad --exclude-tag ci > /tmp/so/gen-srad.log 2>&1
python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/srad.fut --runs 3 --exclude-case ci \
  --strategies tree,random --reuse .devdata/reuse-s38.json --out /tmp/so/study-srad > /tmp/so/study-srad.log 2>&1
echo "S38BDONE $(date +%s)" >> $P
