# session 34: this session's GPU results (1b79df4) judged again with the study's configurations in turn (7d...)
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
for p in srad srad_batch heston32 lavamd; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci > /tmp/so/gen-$p.log 2>&1
  case $p in lavamd) S="tree,exhaustive";; *) S="tree,random";; esac
  python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/$p.fut --runs 3 --exclude-case ci \
    --strategies $S --reuse .devdata/reuse-s34.json --out /tmp/so/judge-$p > /tmp/so/judge-$p.log 2>&1
  echo "judged $p $(date +%s)" >> $P
done
echo "S34DDONE $(date +%s)" >> $P
