# session 27: tree's old rule (87ace67, ties keep the value; .devdata/before) against the new (ties by the faster
# means) on srad and optionpricing in one lease, then the two results, random's (session 26) and the untuned
# program side by side (sbs.py, three rounds)
mkdir -p /tmp/so futhark_examples/benchmarks/data /tmp/pkgb
ln -sfn "$PWD/.devdata/before/incflat" /tmp/pkgb/incflat
P=/tmp/so/progress
echo "start $(date +%s)" >> $P
B=futhark_examples/benchmarks
S=futhark_examples/tuner_study.py
for p in srad optionpricing; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci >> /tmp/so/gen.log 2>&1
done
echo "data $(date +%s)" >> $P
for p in srad optionpricing; do
  PYTHONPATH=/tmp/pkgb:/tmp/site python3 $S $B/$p.fut --runs 3 --exclude-case ci --strategies tree --out /tmp/so/old-$p > /tmp/so/old-$p.log 2>&1
  echo "$p old $(date +%s)" >> $P
  python3 $S $B/$p.fut --runs 3 --exclude-case ci --strategies tree --out /tmp/so/new-$p > /tmp/so/new-$p.log 2>&1
  echo "$p new $(date +%s)" >> $P
  python3 .devdata/sbs.py $B/$p.fut /tmp/so/sbs-$p.json old=/tmp/so/old-$p/study.json:tree new=/tmp/so/new-$p/study.json:tree random=.devdata/reuse-$p.json:random > /tmp/so/sbs-$p.txt 2>&1
  echo "$p sbs $(date +%s)" >> $P
done
echo "ALLDONE $(date +%s)" >> $P
