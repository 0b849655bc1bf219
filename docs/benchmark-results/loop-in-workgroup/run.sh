# session 29: a host loop of workgroup-sized nests as one workgroup (the working tree) against ebf0012 (its
# package in .devdata/before/incflat: git archive ebf0012 ir flatten codegen tuner __init__.py __main__.py
# cli.py harness.py pipeline.py). LUD tuned with the new versions (report.py's AIF tuning), then alternated
# rounds (ROUNDS) of incflat bench on the paper datasets: old package with its own tuning (the retuned file of
# intra-nests), new package with the new file; then one -P run of each paper dataset, new side
mkdir -p /tmp/so futhark_examples/benchmarks/data /tmp/so/rep /tmp/pkgb
ln -sfn "$PWD/.devdata/before/incflat" /tmp/pkgb/incflat
P=/tmp/so/progress
B=futhark_examples/benchmarks
echo "start $(date +%s)" >> $P
python3 futhark_examples/gen_data.py lud --exclude-tag ci >> /tmp/so/gen.log 2>&1
PYTHONPATH=/tmp/pkg:/tmp/site python3 futhark_examples/report.py run lud --parts aif --tune-only --out /tmp/so/rep > /tmp/so/tune.log 2>&1
echo "tuned $(date +%s)" >> $P
for r in ${ROUNDS:-1 2}; do
  for side in old new; do
    if [ $side = old ]; then PP=/tmp/pkgb:/tmp/site; T=docs/benchmark-results/intra-nests/h200-retuned/lud.aif.tuning;
    else PP=/tmp/pkg:/tmp/site; T=/tmp/so/rep/lud.aif.tuning; fi
    PYTHONPATH=$PP python3 -m incflat bench $B/lud.fut --exclude-case ci --tuning $T --convergence-max-seconds 2 --json /tmp/so/$side-aif-$r.json > /tmp/so/$side-aif-$r.log 2>&1
    echo "$r $side $(date +%s)" >> $P
  done
done
for d in $(ls $B/data/lud-*.in | grep -v -e '-ci'); do
  n=$(basename $d .in)
  PYTHONPATH=/tmp/pkg:/tmp/site python3 -m incflat run $B/lud.fut -r 3 -P --tuning /tmp/so/rep/lud.aif.tuning < $d > /dev/null 2> /tmp/so/$n-new.P.txt
done
echo "ALLDONE $(date +%s)" >> $P
