# session 27: tree with ties decided by the faster means (working tree), on the four programs of session 26's
# study; random's results of session 26 (87ace67, same compiled programs) reused and measured side by side
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
echo "start $(date +%s)" >> $P
B=futhark_examples/benchmarks
S=futhark_examples/tuner_study.py
for p in heston32 backprop srad optionpricing; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci >> /tmp/so/gen.log 2>&1
done
echo "data $(date +%s)" >> $P
for p in heston32 backprop srad optionpricing; do
  python3 $S $B/$p.fut --runs 3 --exclude-case ci --strategies tree,random --reuse .devdata/reuse-$p.json --out /tmp/so/st-$p > /tmp/so/st-$p.log 2>&1
  echo "$p done $(date +%s)" >> $P
done
echo "ALLDONE $(date +%s)" >> $P
