# session 26: where heston32's, srad's and backprop's host time goes (cProfile, several invocations),
# then the tuner study of the final rule on heston32, optionpricing, srad, backprop
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
echo "start $(date +%s)" >> $P
cp .devdata/data/* futhark_examples/benchmarks/data/ 2>/dev/null
B=futhark_examples/benchmarks
D=$B/data
S=futhark_examples/tuner_study.py
for p in heston32 srad backprop optionpricing; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci >> /tmp/so/gen.log 2>&1
done
echo "data $(date +%s)" >> $P
for p in heston32 srad backprop; do python3 -m incflat compile $B/$p.fut -o /tmp/$p >> /tmp/so/compile.log 2>&1; done
nvidia-smi -q -d CLOCK | head -30 > /tmp/so/clocks.txt
for i in 1 2 3; do python3 .devdata/reads.py >> /tmp/so/reads.txt 2>&1; done
for i in 1 2 3 4 5 6; do
  for pd in heston32:1062 srad:D1 backprop:D1; do
    p=${pd%%:*}; d=${pd##*:}
    python3 -m cProfile -o /tmp/so/$p-$d-$i.prof /tmp/$p -r 10 -t /tmp/so/$p-$d-$i.t -b < $D/$p-$d.in > /dev/null 2>>/tmp/so/prof.err
    python3 .devdata/profsum.py /tmp/so/$p-$d-$i.prof "$p $d $i t=$(sort -n /tmp/so/$p-$d-$i.t | sed -n 5p)" >> /tmp/so/profsum.txt 2>&1
  done
done
python3 .devdata/profsum.py /tmp/so/heston32-1062-1.prof x > /dev/null
python3 -c "
import pstats; pstats.Stats('/tmp/so/heston32-1062-1.prof').sort_stats('tottime').print_stats(30)" > /tmp/so/heston32-top.txt 2>&1
echo "profiles $(date +%s)" >> $P
python3 $S $B/heston32.fut --runs 3 --exclude-case ci --strategies tree,random --match-budget --out /tmp/so/st-heston32 > /tmp/so/st-heston32.log 2>&1
echo "heston32 done $(date +%s)" >> $P
python3 $S $B/srad.fut --runs 3 --exclude-case ci --strategies tree,random --match-budget --out /tmp/so/st-srad > /tmp/so/st-srad.log 2>&1
echo "srad done $(date +%s)" >> $P
python3 $S $B/optionpricing.fut --runs 3 --exclude-case ci --strategies tree,random --match-budget --out /tmp/so/st-optionpricing > /tmp/so/st-optionpricing.log 2>&1
echo "optionpricing done $(date +%s)" >> $P
python3 $S $B/backprop.fut --runs 3 --exclude-case ci --strategies tree,random --match-budget --out /tmp/so/st-backprop > /tmp/so/st-backprop.log 2>&1
echo "backprop done $(date +%s)" >> $P
echo "ALLDONE $(date +%s)" >> $P
