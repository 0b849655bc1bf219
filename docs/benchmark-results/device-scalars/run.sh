# session 28: srad (PROG=nn: nn) with device scalars (the working tree) against 2dd04cd (its package in
# .devdata/before/incflat: git archive 2dd04cd ir flatten codegen tuner __init__.py __main__.py cli.py harness.py
# pipeline.py), IF and AIF, alternating rounds (ROUNDS) of incflat bench on the paper and training datasets
mkdir -p /tmp/so futhark_examples/benchmarks/data /tmp/pkgb
ln -sfn "$PWD/.devdata/before/incflat" /tmp/pkgb/incflat
P=/tmp/so/progress
echo "start $(date +%s)" >> $P
B=futhark_examples/benchmarks
python3 futhark_examples/gen_data.py ${PROG:-srad} --exclude-tag ci >> /tmp/so/gen.log 2>&1
echo "data $(date +%s)" >> $P
for r in ${ROUNDS:-1 2 3}; do
  for side in old new; do
    if [ $side = old ]; then PP=/tmp/pkgb:/tmp/site; else PP=/tmp/pkg:/tmp/site; fi
    PYTHONPATH=$PP python3 -m incflat bench $B/${PROG:-srad}.fut --exclude-case ci --no-tuning --convergence-max-seconds 4 --json /tmp/so/$side-if-$r.json > /tmp/so/$side-if-$r.log 2>&1
    PYTHONPATH=$PP python3 -m incflat bench $B/${PROG:-srad}.fut --exclude-case ci --tuning docs/benchmark-results/${PROG:-srad}.aif.tuning --convergence-max-seconds 4 --json /tmp/so/$side-aif-$r.json > /tmp/so/$side-aif-$r.log 2>&1
    echo "$r $side $(date +%s)" >> $P
  done
done
echo "ALLDONE $(date +%s)" >> $P
