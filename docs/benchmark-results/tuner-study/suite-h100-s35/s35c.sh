# session 35, last: backprop and optionpricing, `tree` (its rounds judged) against s26's `random` on the H100
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
for p in backprop optionpricing; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci > /tmp/so/gen-$p.log 2>&1
  python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/$p.fut --runs 3 --exclude-case ci \
    --strategies tree,random --reuse .devdata/reuse-$p.json --out /tmp/so/study-$p > /tmp/so/study-$p.log 2>&1
  echo "studied $p $(date +%s)" >> $P
done
echo "S35CDONE $(date +%s)" >> $P
