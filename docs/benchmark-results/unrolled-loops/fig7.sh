# LocVolCalib tuned (report.py, tree, 3 runs a measurement) with the working tree, its guard records on the
# paper datasets, then the tuned program against the earlier H200 tuning (435680a) in two alternated rounds
mkdir -p /tmp/so futhark_examples/benchmarks/data
cp .devdata/lvcdata/* futhark_examples/benchmarks/data/ 2>/dev/null
P=/tmp/so/progress
B=futhark_examples/benchmarks
echo "start $(date +%s)" >> $P
export PYTHONPATH=/tmp/pkg:/tmp/site
python3 futhark_examples/report.py run locvolcalib --parts aif --tune-only --tuning-runs 3 > /tmp/so/tune.log 2>&1
echo "tuned $(date +%s)" >> $P
python3 futhark_examples/report.py guards locvolcalib > /tmp/so/guards.log 2>&1
cp -r futhark_examples/report /tmp/so/report
echo "guards $(date +%s)" >> $P
for r in 1 2; do
  for t in .devdata/tun/locvolcalib.aif.tuning futhark_examples/report/locvolcalib.aif.tuning; do
    n=$(basename $(dirname $t))
    python3 -m incflat bench $B/locvolcalib.fut --exclude-case ci --exclude-case train --tuning $t --convergence-max-seconds 3 --json /tmp/so/lvc-$n-$r.json > /tmp/so/lvc-$n-$r.log 2>&1
    echo "B $r $n $(date +%s)" >> $P
  done
done
echo "ALLDONE $(date +%s)" >> $P
