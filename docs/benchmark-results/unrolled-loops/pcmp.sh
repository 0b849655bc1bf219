# kernel totals (-P) of old and new on chosen datasets with the tuning files in .devdata/tun; then LocVolCalib
# tuned again with the new code (report.py, tree) and its guard records on the paper datasets
mkdir -p /tmp/so/p futhark_examples/benchmarks/data /tmp/pkgb
ln -sfn "$PWD/.devdata/before/incflat" /tmp/pkgb/incflat
cp .devdata/lvcdata/* futhark_examples/benchmarks/data/ 2>/dev/null
P=/tmp/so/progress
B=futhark_examples/benchmarks
echo "start $(date +%s)" >> $P
python3 futhark_examples/gen_data.py nw srad_batch backprop lud heston32 optionpricing --exclude-tag ci >> /tmp/so/gen.log 2>&1
echo "data $(date +%s)" >> $P
for pd in nw:D2 nw:D1 srad_batch:D1 srad_batch:D2 backprop:train-D1 backprop:D1 lud:1024 heston32:1062 heston32:10000 optionpricing:D1 locvolcalib:large locvolcalib:medium; do
  p=${pd%%:*}; d=${pd#*:}
  for side in old new; do
    if [ $side = old ]; then PP=/tmp/pkgb:/tmp/site; else PP=/tmp/pkg:/tmp/site; fi
    PYTHONPATH=$PP python3 -m incflat run $B/$p.fut -r 10 -t /tmp/so/p/$p-$d-$side.t -P --profile-json /tmp/so/p/$p-$d-$side.json --tuning .devdata/tun/$p.aif.tuning < $B/data/$p-$d.in > /dev/null 2> /tmp/so/p/$p-$d-$side.err
  done
  echo "P $p $d $(date +%s)" >> $P
done
PYTHONPATH=/tmp/pkg:/tmp/site python3 futhark_examples/report.py run locvolcalib --parts aif --tune-only --tuning-runs 3 > /tmp/so/tune.log 2>&1
echo "tuned $(date +%s)" >> $P
PYTHONPATH=/tmp/pkg:/tmp/site python3 futhark_examples/report.py guards locvolcalib > /tmp/so/guards.log 2>&1
cp -r futhark_examples/report /tmp/so/report 2>/dev/null
echo "ALLDONE $(date +%s)" >> $P
