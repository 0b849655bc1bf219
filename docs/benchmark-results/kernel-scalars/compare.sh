#!/bin/bash
# LocVolCalib at two incflat commits, in one lease: compare.sh OLD_TREE NEW_TREE TUNING_FILE
# Each tree is a checkout whose parent folder is put on PYTHONPATH as `incflat` (a symlink named incflat to the
# checkout will do); the datasets come from `python futhark_examples/gen_data.py locvolcalib`.
# Writes DATASET-VERSIONS-TREE.t (the -t runs, µs) and .prof.json (-P) to $OUT (default: .).
set -u
OLD=$1 NEW=$2 TUNING=$3 OUT=${OUT:-.}
D=futhark_examples/benchmarks/data
AIF=$(grep = "$TUNING" | grep -v '^--' | sed 's/^/--param /' | tr '\n' ' ')
for ds in small medium large; do
for sw in aif outer intra; do
for tree in old new; do
  if [ $tree = new ]; then PP=$(dirname "$NEW"); else PP=$(dirname "$OLD"); fi
  if [ $sw = aif ]; then P="$AIF"; else
    if [ $sw = outer ]; then o=1; i=2147483647; else o=2147483647; i=1; fi
    P="--param main.suff_outer_par_0=2147483647 --param main.suff_intra_par_1=2147483647 --param main.suff_outer_par_8=$o --param main.suff_outer_par_10=$o --param main.suff_intra_par_9=$i --param main.suff_intra_par_11=$i"
  fi
  tag=$ds-$sw-$tree
  PYTHONPATH=$PP python3 -m incflat run futhark_examples/benchmarks/locvolcalib.fut $P -r 10 -t $OUT/$tag.t \
    < $D/locvolcalib-$ds.in > /dev/null
  PYTHONPATH=$PP python3 -m incflat run futhark_examples/benchmarks/locvolcalib.fut $P -r 1 -P \
    --profile-json $OUT/$tag.prof.json < $D/locvolcalib-$ds.in > /dev/null 2>&1
done
done
done
