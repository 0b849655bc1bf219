# session 33: the tuner study of backprop, srad, optionpricing, heston32 (tree fresh, random reused), reach counted
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start2 $(date +%s)" >> $P
for p in backprop srad optionpricing heston32; do python3 futhark_examples/gen_data.py $p --exclude-tag ci; done > /tmp/so/gen.log 2>&1
echo "data $(date +%s)" >> $P
for p in backprop srad optionpricing heston32; do
  python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/$p.fut --runs 3 --exclude-case ci \
    --strategies tree,random --reuse .devdata/reuse-$p.json --out /tmp/so/study-$p > /tmp/so/study-$p.log 2>&1
  echo "studied $p $(date +%s)" >> $P
done
echo "STUDY2DONE $(date +%s)" >> $P

# then, on a fresh machine: srad at --runs 10 (after the scan of locvolcalib-nofallback-h200/fallback-scan.txt)
python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/srad.fut --runs 10 --exclude-case ci \
    --strategies tree,random --reuse .devdata/reuse-srad.json --out /tmp/so/study-srad-r10

# later in the session (other H200 machines): srad's -P (srad-profiles.sh: srad-profiles.txt, srad-times.txt), then
# lavamd, pathfinder_batch, srad_batch at 12be66e (P-12be66e.md), and pathfinder_batch again at bf35c80:
for p in lavamd pathfinder_batch srad_batch nn_batch; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci > /tmp/so/gen-$p.log 2>&1
  case $p in srad_batch) S="tree,random --match-budget";; *) S="tree,exhaustive";; esac
  python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/$p.fut --runs 3 --exclude-case ci \
    --strategies $S --out /tmp/so/study-$p > /tmp/so/study-$p.log 2>&1
  echo "studied $p $(date +%s)" >> $P
done
python3 futhark_examples/gen_data.py pathfinder_batch --exclude-tag ci > /tmp/so/gen-pb.log 2>&1
python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/pathfinder_batch.fut --runs 3 --exclude-case ci \
    --strategies tree,exhaustive --out /tmp/so/study-pathfinder_batch-2 > /tmp/so/study-pb2.log 2>&1
