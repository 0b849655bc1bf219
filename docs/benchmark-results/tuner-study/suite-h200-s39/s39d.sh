# session 39, fourth lease (H200): backprop's study at the tuner's default precision (--runs 5, c8787bd), judged
# with 6 invocations of 5 runs, against s26's `random` (reused)
mkdir -p /tmp/so futhark_examples/benchmarks/data; P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > /tmp/so/device.txt 2>&1
echo "$COMMIT" >> /tmp/so/device.txt
python3 futhark_examples/gen_data.py backprop --exclude-tag ci > /tmp/so/gen-backprop.log 2>&1
echo "data $(date +%s)" >> $P
python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/backprop.fut --runs 5 --rounds 6 --exclude-case ci \
  --strategies tree,random --reuse .devdata/reuse-s36-backprop-random.json --out /tmp/so/study-backprop-r5 > /tmp/so/study-backprop-r5.log 2>&1
echo "S39DDONE $(date +%s)" >> $P
