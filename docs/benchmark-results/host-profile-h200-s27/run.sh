# session 27: where a host-bound run's time goes, by function (cProfile, own time): heston32 on 1062, srad on D1
B=futhark_examples/benchmarks
D=$B/data
mkdir -p $OUT/prof
for p in heston32 srad; do
  python3 futhark_examples/gen_data.py $p --exclude-tag ci --exclude-tag train > /dev/null 2>&1
  python3 -m incflat compile $B/$p.fut -o /tmp/$p > /dev/null 2>&1
done
run() {  # program dataset
  python3 /tmp/$1 -r 10 -t $OUT/prof/$1-$2.t < $D/$1-$2.in > /dev/null
  python3 -c "import cProfile,pstats,sys; sys.argv=['/tmp/$1','-r','10']; cProfile.run(open('/tmp/$1').read(), '$OUT/prof/$1-$2.prof')" < $D/$1-$2.in > /dev/null
  python3 -c "import pstats; pstats.Stats('$OUT/prof/$1-$2.prof').sort_stats('tottime').print_stats(30)" > $OUT/prof/$1-$2.txt
}
run heston32 1062
run srad D1
ls -la $OUT/prof
head -45 $OUT/prof/heston32-1062.txt | tail -35
