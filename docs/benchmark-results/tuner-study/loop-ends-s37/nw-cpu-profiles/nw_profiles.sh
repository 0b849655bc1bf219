# NW on train-D1 (the script the GPU lease had no time left for, run on this CPU): profiles of suff_outer_par_0
# true and false (the other guards as the H200 tuned them), then never, 60 and 1 in turn, 30 runs each
N=2147483647; D=futhark_examples/benchmarks/data/nw-train-D1.in; O=${OUT:-/tmp/nwout}; mkdir -p $O
python3 futhark_examples/gen_data.py nw --tag train > $O/gen.log 2>&1
python3 -m incflat compile futhark_examples/benchmarks/nw.fut -o /tmp/nwbin > $O/compile.log 2>&1
for v in 1 60 $N; do printf 'main.suff_outer_par_0=%s\nmain.suff_intra_par_1=256\nmain.suff_outer_par_2=%s\nmain.suff_intra_par_3=%s\n' $v $N $N > /tmp/nw-$v.tuning; done
for v in 1 $N; do python3 /tmp/nwbin -r 5 -P --profile-json $O/prof-$v.json --tuning /tmp/nw-$v.tuning < $D > /dev/null 2> $O/P-$v.txt; echo "P $v $?" >> $O/steps; done
python3 /tmp/nwbin -r 30 --tuning /tmp/nw-$N.tuning --alternate-tuning /tmp/nw-60.tuning --alternate-tuning /tmp/nw-1.tuning -t $O/t-never.txt --alternate-times $O/t-60.txt --alternate-times $O/t-1.txt < $D > /dev/null 2> $O/turn.err; echo "turn $?" >> $O/steps
nvidia-smi -L > $O/device.txt 2>&1
