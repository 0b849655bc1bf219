# NW again on an H200 with tree's loop checks: tuned on train-D1, MF/IF/AIF timed on D1 and D2, then the
# profiles of suff_outer_par_0 both ways and never/60/1 in turn (nw_profiles.sh)
mkdir -p /tmp/so futhark_examples/benchmarks/data; P=/tmp/so/progress; R=/tmp/so/report
export PYTHONPATH=/tmp/pkg:/tmp/site
nvidia-smi -L > /tmp/so/device.txt
python3 futhark_examples/gen_data.py nw --exclude-tag ci > /tmp/so/gen-nw.log 2>&1
echo "data $(date +%s)" >> $P
python3 futhark_examples/report.py run nw --out $R --parts aif --tune-only --tuning-runs 3 > /tmp/so/tune-nw.log 2>&1
echo "tuned $(date +%s)" >> $P
python3 futhark_examples/report.py run nw --out $R --parts mf,if,aif --max-seconds 4 > /tmp/so/time.log 2>&1
echo "timed $(date +%s)" >> $P
OUT=/tmp/so/prof bash docs/benchmark-results/tuner-study/loop-ends-s37/nw-cpu-profiles/nw_profiles.sh
echo "NWDONE $(date +%s)" >> $P
