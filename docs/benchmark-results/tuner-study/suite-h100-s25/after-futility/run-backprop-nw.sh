# session 25, as committed (b925aa2): backprop (tree, random at its runs) and nw (tree alone)
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
echo "start $(date +%s)" >> $P
cp .devdata/data/* futhark_examples/benchmarks/data/
B=futhark_examples/benchmarks
S=futhark_examples/tuner_study.py
for p in backprop nw; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci >> /tmp/so/gen.log 2>&1
done
python3 $S $B/backprop.fut --runs 3 --exclude-case ci --strategies tree,random --match-budget --out /tmp/so/backprop > /tmp/so/backprop.log 2>&1
echo "backprop done $(date +%s)" >> $P
python3 $S $B/nw.fut --runs 3 --exclude-case ci --strategies tree --out /tmp/so/nw > /tmp/so/nw.log 2>&1
echo "nw done $(date +%s)" >> $P
echo "ALLDONE $(date +%s)" >> $P
