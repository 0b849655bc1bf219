# session 35, last: LUD's train-512, `tree` (its rounds judged) and `instrumented` at this commit
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
python3 futhark_examples/gen_data.py lud --tag train > /tmp/so/gen-lud.log 2>&1
python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/lud.fut --runs 3 --exclude-case ci \
  --exclude-case paper --strategies tree,instrumented --out /tmp/so/study-lud > /tmp/so/study-lud.log 2>&1
echo "S35BDONE $(date +%s)" >> $P
