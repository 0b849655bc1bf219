# -P kernel totals, old (.devdata/before) and new in alternated rounds; then LocVolCalib (new) with the old
# tuning file (H200, 435680a) and the new one (H100, tuned with the unrolled loops) on the paper datasets
mkdir -p /tmp/so/p futhark_examples/benchmarks/data /tmp/pkgb
ln -sfn "$PWD/.devdata/before/incflat" /tmp/pkgb/incflat
cp .devdata/lvcdata/* futhark_examples/benchmarks/data/ 2>/dev/null
P=/tmp/so/progress
B=futhark_examples/benchmarks
echo "start $(date +%s)" >> $P
python3 futhark_examples/gen_data.py nw backprop lud heston32 optionpricing srad --exclude-tag ci >> /tmp/so/gen.log 2>&1
echo "data $(date +%s)" >> $P
N=2147483647
for r in 1 2; do
for pd in heston32:10000 heston32:1062 lud:1024 nw:D1 optionpricing:D1 backprop:D1 srad:D1 locvolcalib:large locvolcalib:medium; do
  p=${pd%%:*}; d=${pd#*:}
  for side in old new; do
    if [ $side = old ]; then PP=/tmp/pkgb:/tmp/site; else PP=/tmp/pkg:/tmp/site; fi
    X=""
    if [ $p = locvolcalib ]; then X="--param main.suff_outer_par_0=$N --param main.suff_intra_par_1=$N --param main.suff_outer_par_2=1 --param main.suff_outer_par_4=1 --param main.suff_outer_par_6=1 --param main.suff_outer_par_8=1 --param main.suff_outer_par_10=1"; fi
    PYTHONPATH=$PP python3 -m incflat run $B/$p.fut -r 10 -t /tmp/so/p/$p-$d-$side-$r.t -P --profile-json /tmp/so/p/$p-$d-$side-$r.json --tuning .devdata/tun/$p.aif.tuning $X < $B/data/$p-$d.in > /dev/null 2> /tmp/so/p/$p-$d-$side-$r.err
  done
  echo "P $r $p $d $(date +%s)" >> $P
done
done
for r in 1 2; do
  for t in locvolcalib locvolcalib-h100; do
    PYTHONPATH=/tmp/pkg:/tmp/site python3 -m incflat bench $B/locvolcalib.fut --exclude-case ci --tuning .devdata/tun/$t.aif.tuning --convergence-max-seconds 3 --json /tmp/so/lvc-$t-$r.json > /tmp/so/lvc-$t-$r.log 2>&1
    echo "B $r $t $(date +%s)" >> $P
  done
done
echo "ALLDONE $(date +%s)" >> $P
