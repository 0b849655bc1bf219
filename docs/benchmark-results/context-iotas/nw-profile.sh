mkdir -p /tmp/so /tmp/pkgb futhark_examples/benchmarks/data
ln -sfn "$PWD/.devdata/before/incflat" /tmp/pkgb/incflat
B=futhark_examples/benchmarks
python3 futhark_examples/gen_data.py nw --exclude-tag ci --exclude-tag train > /dev/null 2>&1
for r in 1 2; do for side in old new; do
  if [ $side = old ]; then PP=/tmp/pkgb:/tmp/site; else PP=/tmp/pkg:/tmp/site; fi
  PYTHONPATH=$PP python3 -m incflat run $B/nw.fut -r 3 -P < $B/data/nw-D1.in > /dev/null 2> /tmp/so/nw-D1-$side-if-$r.P.txt
done; done
echo "ALLDONE $(date +%s)" >> /tmp/so/progress
