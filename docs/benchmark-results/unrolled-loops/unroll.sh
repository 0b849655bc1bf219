# LocVolCalib sweeps: #pragma unroll U before every sequential loop of the kernels, both sweeps outer or intra
set -x
mkdir -p /tmp/so/u
F=futhark_examples/benchmarks/locvolcalib.fut
PYTHONPATH=/tmp/pkg:/tmp/site python3 -m incflat compile $F -o /tmp/lvc-base
for U in 2 4 8; do
  sed 's/^\( *\)for (long i_c/\1#pragma unroll '$U'\n\1for (long i_c/' /tmp/lvc-base > /tmp/lvc-u$U
done
grep -c "pragma unroll" /tmp/lvc-u4 > /tmp/so/u/count.txt
N=2147483647
for ds in large medium small; do
 for v in base u4 u8 u2; do
  for cfg in outer intra; do
   if [ $cfg = outer ]; then P="--param main.suff_outer_par_8=1 --param main.suff_outer_par_10=1"
   else P="--param main.suff_outer_par_8=$N --param main.suff_outer_par_10=$N --param main.suff_intra_par_9=1 --param main.suff_intra_par_11=1"; fi
   python3 /tmp/lvc-$v -r 5 -t /tmp/so/u/$ds-$v-$cfg.t -P --profile-json /tmp/so/u/$ds-$v-$cfg.json \
     --param main.suff_outer_par_0=$N --param main.suff_intra_par_1=$N $P < .devdata/lvc/$ds.in > /tmp/so/u/$ds-$v-$cfg.out 2>/tmp/so/u/$ds-$v-$cfg.err
  done
 done
 python3 docs/benchmark-results/locvolcalib-fig7-h200/fig7sum.py /tmp/so/u > /tmp/so/u/kernels.txt
 echo "done $ds" >> /tmp/so/progress
done
echo ALLDONE >> /tmp/so/progress
