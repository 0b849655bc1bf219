# session 28: hoisting only iotas and replicates of known-valid sizes (working tree) against HEAD (.devdata/before),
# locvolcalib's paper datasets (IF, AIF), alternating rounds
mkdir -p /tmp/so futhark_examples/benchmarks/data /tmp/pkgb
ln -sfn "$PWD/.devdata/before/incflat" /tmp/pkgb/incflat
P=/tmp/so/progress
echo "start $(date +%s)" >> $P
B=futhark_examples/benchmarks
python3 futhark_examples/gen_data.py locvolcalib --tag paper >> /tmp/so/gen.log 2>&1
echo "data $(date +%s)" >> $P
T=docs/benchmark-results/locvolcalib-fig7-h100/tuned-87ace67.tuning
for r in ${ROUNDS:-1 2}; do
  for side in old new; do
    if [ $side = old ]; then PP=/tmp/pkgb:/tmp/site; else PP=/tmp/pkg:/tmp/site; fi
    PYTHONPATH=$PP python3 -m incflat bench $B/locvolcalib.fut --exclude-case ci --exclude-case train --no-tuning --convergence-max-seconds 3 --json /tmp/so/$side-lvcif-$r.json > /tmp/so/$side-lvcif-$r.log 2>&1
    PYTHONPATH=$PP python3 -m incflat bench $B/locvolcalib.fut --exclude-case ci --exclude-case train --tuning $T --convergence-max-seconds 3 --json /tmp/so/$side-lvcaif-$r.json > /tmp/so/$side-lvcaif-$r.log 2>&1
    echo "$r $side $(date +%s)" >> $P
  done
done
echo "ALLDONE $(date +%s)" >> $P
