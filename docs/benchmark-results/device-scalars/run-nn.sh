# session 28: nn with its updates on the device and reads cached (working tree) against 2dd04cd (.devdata/before), IF and AIF, three
# alternating rounds of incflat bench on the paper and training datasets
mkdir -p /tmp/so futhark_examples/benchmarks/data /tmp/pkgb
ln -sfn "$PWD/.devdata/before/incflat" /tmp/pkgb/incflat
P=/tmp/so/progress
echo "start $(date +%s)" >> $P
B=futhark_examples/benchmarks
python3 futhark_examples/gen_data.py nn --exclude-tag ci >> /tmp/so/gen.log 2>&1
echo "data $(date +%s)" >> $P
for r in ${ROUNDS:-1 2 3}; do
  for side in old new; do
    if [ $side = old ]; then PP=/tmp/pkgb:/tmp/site; else PP=/tmp/pkg:/tmp/site; fi
    PYTHONPATH=$PP python3 -m incflat bench $B/nn.fut --exclude-case ci --no-tuning --convergence-max-seconds 4 --json /tmp/so/$side-if-$r.json > /tmp/so/$side-if-$r.log 2>&1
    PYTHONPATH=$PP python3 -m incflat bench $B/nn.fut --exclude-case ci --tuning docs/benchmark-results/nn.aif.tuning --convergence-max-seconds 4 --json /tmp/so/$side-aif-$r.json > /tmp/so/$side-aif-$r.log 2>&1
    echo "$r $side $(date +%s)" >> $P
  done
done
echo "ALLDONE $(date +%s)" >> $P
