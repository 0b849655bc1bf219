# session 36: backprop's `tree` at the commit that compares rounds in turn, against s26's `random` (reused),
# judged in 10 invocations of 3 runs
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
git rev-parse HEAD > /tmp/so/commit.txt 2>&1
python3 futhark_examples/gen_data.py backprop --exclude-tag ci > /tmp/so/gen-backprop.log 2>&1
echo "data $(date +%s)" >> $P
python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/backprop.fut --runs 3 --rounds 10 --exclude-case ci \
  --strategies tree,random --reuse .devdata/reuse-s36-backprop-random.json --out /tmp/so/study-backprop > /tmp/so/study-backprop.log 2>&1
echo "S36CDONE $(date +%s)" >> $P
