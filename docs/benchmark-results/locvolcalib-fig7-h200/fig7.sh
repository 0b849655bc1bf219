# LocVolCalib medium and large: both sweeps outer vs intra-group, safe and --unsafe, kernel times from -P
set -x
python3 futhark_examples/gen_data.py locvolcalib --tag paper >/dev/null
F=futhark_examples/benchmarks/locvolcalib.fut
python3 -m incflat compile $F -o /tmp/lvc-safe
python3 -m incflat compile --unsafe $F -o /tmp/lvc-unsafe
N=2147483647
mkdir -p /tmp/fig7
for ds in medium large; do
 for mode in safe unsafe; do
  for cfg in outer intra; do
   if [ $cfg = outer ]; then P="--param main.suff_outer_par_8=1 --param main.suff_outer_par_10=1"
   else P="--param main.suff_outer_par_8=$N --param main.suff_outer_par_10=$N --param main.suff_intra_par_9=1 --param main.suff_intra_par_11=1"; fi
   python3 /tmp/lvc-$mode -r 5 -t /tmp/fig7/$ds-$mode-$cfg.t -P --profile-json /tmp/fig7/$ds-$mode-$cfg.json \
     --param main.suff_outer_par_0=$N --param main.suff_intra_par_1=$N $P < futhark_examples/benchmarks/data/locvolcalib-$ds.in > /dev/null 2>/tmp/fig7/$ds-$mode-$cfg.err
  done
 done
done
python3 docs/benchmark-results/locvolcalib-fig7-h200/fig7sum.py /tmp/fig7 > /tmp/fig7/kernels.txt
