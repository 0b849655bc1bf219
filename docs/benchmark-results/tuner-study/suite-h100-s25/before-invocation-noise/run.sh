# session 25: heston32 first (validates eb83d05's near-default rule), the first timed run on the GPU,
# locvolcalib, then lavamd and pathfinder_batch with the merged side-by-side pass.
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
echo "start $(date +%s)" >> $P
cp .devdata/data/* futhark_examples/benchmarks/data/
B=futhark_examples/benchmarks
S=futhark_examples/tuner_study.py
for p in heston32 backprop lavamd srad_batch pathfinder_batch locvolcalib; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci >> /tmp/so/gen.log 2>&1
done
echo "gen done $(date +%s)" >> $P
python3 $S $B/heston32.fut --runs 3 --exclude-case ci --strategies tree,random --match-budget --out /tmp/so/heston32 > /tmp/so/heston32.log 2>&1
echo "heston32 done $(date +%s)" >> $P
python3 docs/benchmark-results/tuner-study/suite-h100-4182c4e/first_run.py measure backprop train-D1 backprop D1 lavamd train-D2 lavamd D1 srad_batch train-D2 pathfinder_batch train-D2 > /tmp/so/firstrun.txt 2>&1
echo "firstrun done $(date +%s)" >> $P
python3 $S $B/locvolcalib.fut --runs 3 --exclude-case ci --strategies tree,random --match-budget --out /tmp/so/locvolcalib > /tmp/so/locvolcalib.log 2>&1
echo "locvolcalib done $(date +%s)" >> $P
for p in lavamd pathfinder_batch; do
  python3 $S $B/$p.fut --runs 3 --rounds 4 --exclude-case ci --strategies tree,exhaustive --out /tmp/so/$p > /tmp/so/$p.log 2>&1
  echo "$p done $(date +%s)" >> $P
done
echo "ALLDONE $(date +%s)" >> $P
