# session 36: backprop's s36 results judged again: more invocations (--rounds 10, 3 runs each), then longer
# invocations (--rounds 4, 20 runs each); nothing tuned (every result reused)
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
python3 futhark_examples/gen_data.py backprop --exclude-tag ci > /tmp/so/gen-backprop.log 2>&1
echo "data $(date +%s)" >> $P
python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/backprop.fut --runs 3 --rounds 10 --exclude-case ci \
  --strategies tree,random --reuse .devdata/reuse-s36-backprop.json --out /tmp/so/judge-r10 > /tmp/so/judge-r10.log 2>&1
echo "judged r10 $(date +%s)" >> $P
python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/backprop.fut --runs 20 --rounds 4 --exclude-case ci \
  --strategies tree,random --reuse .devdata/reuse-s36-backprop.json --out /tmp/so/judge-n20 > /tmp/so/judge-n20.log 2>&1
echo "S36BDONE $(date +%s)" >> $P
