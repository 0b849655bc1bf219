# session 26: where heston32's, srad's and backprop's host time goes (cProfile, several invocations),
# then the tuner study of the final rule on heston32, optionpricing, srad, backprop
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
echo "start $(date +%s)" >> $P
cp .devdata/data/* futhark_examples/benchmarks/data/ 2>/dev/null
B=futhark_examples/benchmarks
D=$B/data
S=futhark_examples/tuner_study.py
for p in heston32 srad backprop optionpricing locvolcalib; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci >> /tmp/so/gen.log 2>&1
done
echo "data $(date +%s)" >> $P
python3 futhark_examples/report.py run locvolcalib --parts aif --tune-only --tuning-runs 3 --out /tmp/so/lvc > /tmp/so/lvc-tune.log 2>&1
echo "tuned $(date +%s)" >> $P
python3 futhark_examples/report.py guards locvolcalib --out /tmp/so/lvc > /tmp/so/lvc-guards.log 2>&1
echo "lvc done $(date +%s)" >> $P
python3 $S $B/heston32.fut --runs 3 --exclude-case ci --strategies tree,random --match-budget --out /tmp/so/st-heston32 > /tmp/so/st-heston32.log 2>&1
echo "heston32 done $(date +%s)" >> $P
python3 $S $B/srad.fut --runs 3 --exclude-case ci --strategies tree,random --match-budget --out /tmp/so/st-srad > /tmp/so/st-srad.log 2>&1
echo "srad done $(date +%s)" >> $P
python3 $S $B/optionpricing.fut --runs 3 --exclude-case ci --strategies tree,random --match-budget --out /tmp/so/st-optionpricing > /tmp/so/st-optionpricing.log 2>&1
echo "optionpricing done $(date +%s)" >> $P
python3 $S $B/backprop.fut --runs 3 --exclude-case ci --strategies tree,random --match-budget --out /tmp/so/st-backprop > /tmp/so/st-backprop.log 2>&1
echo "backprop done $(date +%s)" >> $P
echo "ALLDONE $(date +%s)" >> $P
