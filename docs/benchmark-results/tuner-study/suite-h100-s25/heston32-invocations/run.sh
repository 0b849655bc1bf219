# is heston32 deterministic on the GPU? the same program, the same data, 8 invocations: outputs and times
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
cp .devdata/data/heston32* futhark_examples/benchmarks/data/
python3 -m incflat compile futhark_examples/benchmarks/heston32.fut -o /tmp/h32 > /tmp/so/compile.log 2>&1
D=futhark_examples/benchmarks/data
TREE="--param main.suff_intra_par_6=20 --param main.suff_outer_par_5=46481 --param main.suff_outer_par_4=46481 --param main.suff_intra_par_15=20"
for i in 1 2 3 4 5 6; do
  for ds in train-1162 train-9000; do
    /tmp/h32 -r 3 -t /tmp/so/t-$ds-$i.txt < $D/heston32-$ds.in > /tmp/so/o-$ds-$i.txt 2>>/tmp/so/err.log
    /tmp/h32 $TREE -r 3 -t /tmp/so/tt-$ds-$i.txt < $D/heston32-$ds.in > /tmp/so/to-$ds-$i.txt 2>>/tmp/so/err.log
  done
  echo "round $i $(date +%s)" >> $P
done
/tmp/h32 -r 1 -L < $D/heston32-train-1162.in 2>&1 | grep -c Compared > /tmp/so/L-count.txt
/tmp/h32 -r 1 -L < $D/heston32-train-1162.in 2>&1 | grep Compared | sort | uniq -c > /tmp/so/L-untuned.txt
/tmp/h32 $TREE -r 1 -L < $D/heston32-train-1162.in 2>&1 | grep Compared | sort | uniq -c > /tmp/so/L-tree.txt
echo "ALLDONE $(date +%s)" >> $P
