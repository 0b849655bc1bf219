# session 25, after the early futility stop under a known invocation noise: srad (tree, random at its runs),
# heston32 and optionpricing (tree alone)
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
echo "start $(date +%s)" >> $P
cp .devdata/data/* futhark_examples/benchmarks/data/
B=futhark_examples/benchmarks
S=futhark_examples/tuner_study.py
for p in heston32 optionpricing srad; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci >> /tmp/so/gen.log 2>&1
done
python3 $S $B/srad.fut --runs 3 --exclude-case ci --strategies tree,random --match-budget --out /tmp/so/srad > /tmp/so/srad.log 2>&1
echo "srad done $(date +%s)" >> $P
python3 $S $B/heston32.fut --runs 3 --exclude-case ci --strategies tree --out /tmp/so/heston32 > /tmp/so/heston32.log 2>&1
echo "heston32 done $(date +%s)" >> $P
python3 $S $B/optionpricing.fut --runs 3 --exclude-case ci --strategies tree --out /tmp/so/optionpricing > /tmp/so/optionpricing.log 2>&1
echo "optionpricing done $(date +%s)" >> $P
echo "ALLDONE $(date +%s)" >> $P
