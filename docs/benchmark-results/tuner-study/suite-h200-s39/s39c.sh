# session 39, third lease (H200): the c8787bd results of backprop and heston32 (s39b) judged again with more
# invocations (--rounds 10 and 6, 3 runs each); nothing tuned (every result reused)
mkdir -p /tmp/so futhark_examples/benchmarks/data; P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > /tmp/so/device.txt 2>&1
echo "$COMMIT" >> /tmp/so/device.txt
printf '%s\n' backprop heston32 | xargs -P 2 -I{} sh -c 'python3 futhark_examples/gen_data.py {} --exclude-tag ci > /tmp/so/gen-{}.log 2>&1'
echo "data $(date +%s)" >> $P
python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/backprop.fut --runs 3 --rounds 10 --exclude-case ci \
  --strategies tree,random --reuse .devdata/reuse-s39.json --out /tmp/so/judge-backprop > /tmp/so/judge-backprop.log 2>&1
echo "judged backprop $(date +%s)" >> $P
python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/heston32.fut --runs 3 --rounds 6 --exclude-case ci \
  --strategies tree,random --reuse .devdata/reuse-s39.json --out /tmp/so/judge-heston32 > /tmp/so/judge-heston32.log 2>&1
echo "S39CDONE $(date +%s)" >> $P
