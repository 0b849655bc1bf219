# session 29, second lease: NW and LUD tuned again with the new versions (report.py's AIF tuning: the default
# strategy on the training datasets, 5 runs a measurement), then alternated rounds (ROUNDS) of incflat bench
# on the paper datasets with the report's old tuning file and the new one (same compiler), and one -P run of
# each paper dataset with the new file
mkdir -p /tmp/so futhark_examples/benchmarks/data /tmp/so/rep
P=/tmp/so/progress
B=futhark_examples/benchmarks
PROGS=${PROGS:-nw lud}
echo "start $(date +%s)" >> $P
python3 futhark_examples/gen_data.py $PROGS --exclude-tag ci >> /tmp/so/gen.log 2>&1
export PYTHONPATH=/tmp/pkg:/tmp/site
python3 futhark_examples/report.py run $PROGS --parts aif --tune-only --out /tmp/so/rep > /tmp/so/tune.log 2>&1
echo "tuned $(date +%s)" >> $P
for r in ${ROUNDS:-1 2}; do
  for side in old new; do
    for p in $PROGS; do
      if [ $side = old ]; then T=docs/benchmark-results/$p.aif.tuning; else T=/tmp/so/rep/$p.aif.tuning; fi
      python3 -m incflat bench $B/$p.fut --exclude-case ci --exclude-case train --tuning $T --convergence-max-seconds 2 --json /tmp/so/$p-$side-aif-$r.json > /tmp/so/$p-$side-aif-$r.log 2>&1
    done
    echo "$r $side $(date +%s)" >> $P
  done
done
for p in $PROGS; do
  for d in $(ls $B/data/$p-*.in | grep -v -e '-ci' -e 'train'); do
    n=$(basename $d .in)
    python3 -m incflat run $B/$p.fut -r 3 -P --tuning /tmp/so/rep/$p.aif.tuning < $d > /dev/null 2> /tmp/so/$n-retuned.P.txt
  done
done
echo "ALLDONE $(date +%s)" >> $P
