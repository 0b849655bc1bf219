#!/bin/sh
# Host time a step of pathfinder's loop (16 columns, 20,000 rows: the kernels are tiny, the host's Python is
# what is timed), the package before (OLD: a checkout of 0492a63 on PYTHONPATH) against the working tree,
# four alternated rounds of `-r 7 -t`; prints each round's fastest run in µs. Run from the repository root:
#   OLD=/tmp/headpkg sh docs/benchmark-results/host-arithmetic/run.sh
set -e
W=$(mktemp -d)
python -m incflat dataset -b -g "[20000][16]i32" > $W/in
PYTHONPATH=$OLD python -m incflat compile futhark_examples/benchmarks/pathfinder.fut -o $W/old > /dev/null
python -m incflat compile futhark_examples/benchmarks/pathfinder.fut -o $W/new > /dev/null
for r in 1 2 3 4; do
  for side in old new; do
    python $W/$side -r 7 -t $W/t-$side < $W/in > $W/out-$side
    echo "$r $side $(sort -n $W/t-$side | head -1)"
  done
done
cmp $W/out-old $W/out-new && echo "same results"
rm -r $W
