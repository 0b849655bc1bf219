# srad on the GPU: -P of train-D1 under the untuned defaults, tree's result, random's, and every intra-group version
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start4 $(date +%s)" >> $P
python3 futhark_examples/gen_data.py srad --exclude-tag ci > /dev/null 2>&1
python3 -m incflat compile futhark_examples/benchmarks/srad.fut -o /tmp/so/srad > /dev/null 2>&1
T="--param=main.suff_intra_par_1=400 --param=main.suff_intra_par_11=32768 --param=main.suff_intra_par_13=32768 --param=main.suff_intra_par_4=32768 --param=main.suff_intra_par_7=400 --param=main.suff_intra_par_9=32768 --param=main.suff_outer_par_0=400 --param=main.suff_outer_par_10=32768 --param=main.suff_outer_par_12=32768 --param=main.suff_outer_par_2=400 --param=main.suff_outer_par_3=400 --param=main.suff_outer_par_5=32768 --param=main.suff_outer_par_6=32768 --param=main.suff_outer_par_8=32768"
R="--param=main.suff_intra_par_1=400 --param=main.suff_intra_par_11=400 --param=main.suff_intra_par_13=2147483647 --param=main.suff_intra_par_4=2147483647 --param=main.suff_intra_par_7=400 --param=main.suff_intra_par_9=400 --param=main.suff_outer_par_0=2147483647 --param=main.suff_outer_par_10=2147483647 --param=main.suff_outer_par_12=2147483647 --param=main.suff_outer_par_2=400 --param=main.suff_outer_par_3=2147483647 --param=main.suff_outer_par_5=2147483647 --param=main.suff_outer_par_6=2147483647 --param=main.suff_outer_par_8=2147483647"
I=$(python3 /tmp/so/srad --print-params | grep -o "^main\.suff_[a-z]*_par_[0-9]*" | sed 's/^\(.*intra.*\)$/--param=\1=1/; s/^\(main.suff_outer.*\)$/--param=\1=2147483647/' | tr '\n' ' ')
D=futhark_examples/benchmarks/data/srad-train-D1.in
for round in 1 2; do
  for c in untuned tree random allintra; do
    case $c in untuned) A="";; tree) A="$T";; random) A="$R";; allintra) A="$I";; esac
    python3 /tmp/so/srad -b -r 11 -t /tmp/so/t-$c-$round.txt $A < $D > /dev/null 2>> /tmp/so/srad-err.txt
    echo "$c round $round: $(tail -n 10 /tmp/so/t-$c-$round.txt | sort -n | sed -n 5,6p | tr '\n' ' ')" >> /tmp/so/srad-times.txt
  done
done
for c in untuned tree random allintra; do
  case $c in untuned) A="";; tree) A="$T";; random) A="$R";; allintra) A="$I";; esac
  echo "== $c" >> /tmp/so/srad-prof.txt
  python3 /tmp/so/srad -b -r 5 -P $A < $D 2>> /tmp/so/srad-prof.txt > /dev/null
done
echo "SRADDONE $(date +%s)" >> $P
