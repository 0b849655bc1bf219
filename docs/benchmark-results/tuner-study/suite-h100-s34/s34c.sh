# session 34, last: srad's results in turn in one process (the study's side-by-side pass measures them apart),
# then srad_batch (tree against random at tree's runs) and nn_batch (tree against exhaustive)
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
python3 futhark_examples/gen_data.py srad --tag train > /dev/null 2>&1
python3 -m incflat compile futhark_examples/benchmarks/srad.fut -o /tmp/so/srad > /dev/null 2>&1
for proc in 1 2 3 4; do
  python3 .devdata/pair.py /tmp/so/srad futhark_examples/benchmarks/data/srad-train-D1.in .devdata/srad-s34-configs.json 30 > /tmp/so/srad-pair-$proc.json 2>> /tmp/so/err.txt
done
echo "paired $(date +%s)" >> $P
for p in srad_batch nn_batch; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci > /tmp/so/gen-$p.log 2>&1
  case $p in srad_batch) S="tree,random --match-budget";; *) S="tree,exhaustive";; esac
  python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/$p.fut --runs 3 --exclude-case ci \
    --strategies $S --out /tmp/so/study-$p > /tmp/so/study-$p.log 2>&1
  echo "studied $p $(date +%s)" >> $P
done
echo "S34CDONE $(date +%s)" >> $P
