# session 29: the working tree against the package in .devdata/before/incflat (for this folder's results
# 35215fc: git archive 35215fc ir flatten codegen tuner __init__.py __main__.py cli.py harness.py pipeline.py),
# IF and AIF (the tuning files of docs/benchmark-results, or of the folder TUNINGS), alternating rounds
# (ROUNDS) of incflat bench on the paper and training datasets of PROGS; then one -P run of each program's AIF,
# new side
mkdir -p /tmp/so futhark_examples/benchmarks/data /tmp/pkgb
ln -sfn "$PWD/.devdata/before/incflat" /tmp/pkgb/incflat
P=/tmp/so/progress
B=futhark_examples/benchmarks
PROGS=${PROGS:-nw lud}
echo "start $(date +%s)" >> $P
python3 futhark_examples/gen_data.py $PROGS --exclude-tag ci >> /tmp/so/gen.log 2>&1
echo "data $(date +%s)" >> $P
for r in ${ROUNDS:-1 2}; do
  for side in old new; do
    if [ $side = old ]; then PP=/tmp/pkgb:/tmp/site; else PP=/tmp/pkg:/tmp/site; fi
    for p in $PROGS; do
      PYTHONPATH=$PP python3 -m incflat bench $B/$p.fut --exclude-case ci --no-tuning --convergence-max-seconds 2 --json /tmp/so/$p-$side-if-$r.json > /tmp/so/$p-$side-if-$r.log 2>&1
      PYTHONPATH=$PP python3 -m incflat bench $B/$p.fut --exclude-case ci --tuning ${TUNINGS:-docs/benchmark-results}/$p.aif.tuning --convergence-max-seconds 2 --json /tmp/so/$p-$side-aif-$r.json > /tmp/so/$p-$side-aif-$r.log 2>&1
    done
    echo "$r $side $(date +%s)" >> $P
  done
done
for p in $PROGS; do
  for d in $(ls $B/data/$p-*.in | grep -v -e '-ci' ); do
    n=$(basename $d .in)
    PYTHONPATH=/tmp/pkg:/tmp/site python3 -m incflat run $B/$p.fut -r 3 -P --profile-json /tmp/so/$n-new-aif.prof.json --tuning ${TUNINGS:-docs/benchmark-results}/$p.aif.tuning < $d > /dev/null 2> /tmp/so/$n-new-aif.P.txt
  done
done
echo "ALLDONE $(date +%s)" >> $P
