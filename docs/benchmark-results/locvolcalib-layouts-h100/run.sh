# session 26: outer-first thread numbering (working tree) against 87ace67 (.devdata/before), same lease:
# LocVolCalib's sweep configurations, then the tuner on LocVolCalib and its -P guards, then every guard whose
# version the change touches in optionpricing, srad_batch, heston32 and lud (median of 5 runs, 2 rounds)
mkdir -p /tmp/so futhark_examples/benchmarks/data /tmp/pkgb
P=/tmp/so/progress
echo "start $(date +%s)" >> $P
ln -sfn "$PWD/.devdata/before/incflat" /tmp/pkgb/incflat
B=futhark_examples/benchmarks
D=$B/data
for p in locvolcalib optionpricing srad_batch heston32 lud; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci >> /tmp/so/gen.log 2>&1
  python3 -m incflat compile $B/$p.fut -o /tmp/$p-after >> /tmp/so/compile.log 2>&1
  PYTHONPATH=/tmp/pkgb:/tmp/site python3 -m incflat compile $B/$p.fut -o /tmp/$p-before >> /tmp/so/compile.log 2>&1
done
echo "data+compiled $(date +%s)" >> $P
N=2147483647
T=.devdata/lvc-tuned-87ace67.tuning
run() {  # program dataset label params...
  local p=$1 d=$2 label=$3; shift 3
  for build in before after; do
    python3 /tmp/$p-$build -r 5 -t /tmp/so/t.txt "$@" < $D/$p-$d.in > /dev/null 2>/tmp/so/err.txt \
      && echo "$p $d $label $build $(sort -n /tmp/so/t.txt | sed -n 3p)" >> /tmp/so/times.txt \
      || echo "$p $d $label $build FAILED $(tail -1 /tmp/so/err.txt)" >> /tmp/so/times.txt
  done
}
for round in 1 2; do
  for d in small medium large; do
    run locvolcalib $d A --tuning $T --param main.suff_outer_par_8=$N --param main.suff_intra_par_9=1 --param main.suff_outer_par_10=1
    run locvolcalib $d B --tuning $T --param main.suff_outer_par_8=1 --param main.suff_outer_par_10=1
    run locvolcalib $d C --tuning $T --param main.suff_outer_par_8=1 --param main.suff_outer_par_10=$N --param main.suff_intra_par_11=1
    run locvolcalib $d D --tuning $T --param main.suff_outer_par_8=$N --param main.suff_intra_par_9=1 --param main.suff_outer_par_10=$N --param main.suff_intra_par_11=1
  done
done
echo "lvc configs $(date +%s)" >> $P
python3 futhark_examples/report.py run locvolcalib --parts aif --tune-only --tuning-runs 3 --out /tmp/so/lvc > /tmp/so/lvc-tune.log 2>&1
python3 futhark_examples/report.py guards locvolcalib --out /tmp/so/lvc > /tmp/so/lvc-guards.log 2>&1
echo "lvc tuned $(date +%s)" >> $P
for round in 1 2; do
  while read -r p g params; do
    case $p in optionpricing) ds="D1 D2";; srad_batch) ds="D1 D2";; heston32) ds="1062";; lud) ds="1024";; esac
    for d in $ds; do run $p $d $g $params; done
  done < .devdata/affected.txt
  echo "others round $round $(date +%s)" >> $P
done
echo "ALLDONE $(date +%s)" >> $P
