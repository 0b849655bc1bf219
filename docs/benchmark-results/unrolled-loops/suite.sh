# the working tree (new) against .devdata/before/incflat (old): alternating rounds of incflat bench
# (PARTS: if = untuned, aif = tuned with .devdata/tun/P.aif.tuning) on the paper and training datasets of PROGS
mkdir -p /tmp/so $(for p in $PROGS; do echo /tmp/so/$p; done) futhark_examples/benchmarks/data /tmp/pkgb
ln -sfn "$PWD/.devdata/before/incflat" /tmp/pkgb/incflat
cp .devdata/lvcdata/* futhark_examples/benchmarks/data/ 2>/dev/null
P=/tmp/so/progress
B=futhark_examples/benchmarks
echo "start $(date +%s)" >> $P
python3 futhark_examples/gen_data.py $PROGS --exclude-tag ci >> /tmp/so/gen.log 2>&1
echo "data $(date +%s)" >> $P
for r in ${ROUNDS:-1 2}; do
  for side in old new; do
    if [ $side = old ]; then PP=/tmp/pkgb:/tmp/site; else PP=/tmp/pkg:/tmp/site; fi
    for p in $PROGS; do
      for part in ${PARTS:-aif}; do
        if [ $part = if ]; then T=--no-tuning; else T="--tuning .devdata/tun/$p.aif.tuning"; fi
        PYTHONPATH=$PP python3 -m incflat bench $B/$p.fut --exclude-case ci $T --convergence-max-seconds ${MAXS:-2} --json /tmp/so/$p/$side-$part-$r.json > /tmp/so/$p/$side-$part-$r.log 2>&1
      done
      echo "$r $side $p $(date +%s)" >> $P
    done
  done
done
echo "ALLDONE $(date +%s)" >> $P
