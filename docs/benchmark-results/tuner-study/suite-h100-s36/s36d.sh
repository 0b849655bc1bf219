# session 36: with the collector off while runs are timed (632ba6d): backprop's round-1 and last-round values of
# s36c in turn (order.py), then `tree` against s26's `random` (reused), judged in 10 invocations of 3 runs
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
grep -c "_collected_between_runs" codegen/runtime/program.py > /tmp/so/commit.txt
python3 futhark_examples/gen_data.py backprop --exclude-tag ci > /tmp/so/gen-backprop.log 2>&1
echo "data $(date +%s)" >> $P
REPS=4 python3 .devdata/order.py > /tmp/so/order.log 2>&1
echo "order $(date +%s)" >> $P
python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/backprop.fut --runs 3 --rounds 10 --exclude-case ci \
  --strategies tree,random --reuse .devdata/reuse-s36-backprop-random.json --out /tmp/so/study-backprop > /tmp/so/study-backprop.log 2>&1
echo "S36DDONE $(date +%s)" >> $P
