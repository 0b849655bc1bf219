# session 34: the tuner study with paired comparisons: srad and heston32 (tree fresh, random reused), then
# lavamd (tree against exhaustive) and srad_batch (tree against random at tree's runs)
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
for p in srad heston32; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci > /tmp/so/gen-$p.log 2>&1
  python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/$p.fut --runs 3 --exclude-case ci \
    --strategies tree,random --reuse .devdata/reuse-$p.json --out /tmp/so/study-$p > /tmp/so/study-$p.log 2>&1
  echo "studied $p $(date +%s)" >> $P
done
echo "PART1 $(date +%s)" >> $P
for p in lavamd srad_batch; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci > /tmp/so/gen-$p.log 2>&1
  case $p in srad_batch) S="tree,random --match-budget";; *) S="tree,exhaustive";; esac
  python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/$p.fut --runs 3 --exclude-case ci \
    --strategies $S --out /tmp/so/study-$p > /tmp/so/study-$p.log 2>&1
  echo "studied $p $(date +%s)" >> $P
done
echo "S34BDONE $(date +%s)" >> $P
