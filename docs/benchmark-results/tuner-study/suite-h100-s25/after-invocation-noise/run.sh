# session 25, after the invocation-aware comparison: heston32 again (tree vs random at tree's runs, 4 rounds
# side by side), then optionpricing and srad (the cost of the confirmations on a quiet and on a noisy program).
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
echo "start $(date +%s)" >> $P
cp .devdata/data/* futhark_examples/benchmarks/data/
B=futhark_examples/benchmarks
S=futhark_examples/tuner_study.py
for p in heston32 optionpricing srad; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci >> /tmp/so/gen.log 2>&1
done
echo "gen done $(date +%s)" >> $P
python3 $S $B/heston32.fut --runs 3 --rounds 4 --exclude-case ci --strategies tree,random --match-budget --out /tmp/so/heston32 > /tmp/so/heston32.log 2>&1
echo "heston32 done $(date +%s)" >> $P
for p in optionpricing srad; do
  python3 $S $B/$p.fut --runs 3 --exclude-case ci --strategies tree,random --match-budget --out /tmp/so/$p > /tmp/so/$p.log 2>&1
  echo "$p done $(date +%s)" >> $P
done
echo "ALLDONE $(date +%s)" >> $P
