# session 35: `tree` (a later round keeps a tie's value) against s34's `random` results on the training
# datasets, judged in turn; then nn_batch against exhaustive
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
for p in srad srad_batch heston32 nn_batch; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci > /tmp/so/gen-$p.log 2>&1
  case $p in nn_batch) S="tree,exhaustive";; *) S="tree,random --reuse .devdata/reuse-s35.json";; esac
  python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/$p.fut --runs 3 --exclude-case ci \
    --strategies $S --out /tmp/so/study-$p > /tmp/so/study-$p.log 2>&1
  echo "studied $p $(date +%s)" >> $P
done
echo "S35DONE $(date +%s)" >> $P
