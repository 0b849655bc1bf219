# LocVolCalib tuned alone on the GPU (the report tuned three programs at a time), its guards, its AIF timing
P=/tmp/so/progress
R=/tmp/so/alone
mkdir -p $R
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "alone-start $(date +%s)" >> $P
python3 futhark_examples/report.py run locvolcalib --out $R --parts aif --tune-only --tuning-runs 3 > /tmp/so/alone-tune.log 2>&1
echo "alone-tuned $(date +%s)" >> $P
python3 futhark_examples/report.py guards locvolcalib --out $R > /tmp/so/alone-guards.log 2>&1
python3 futhark_examples/report.py run locvolcalib --out $R --parts aif --max-seconds 4 > /tmp/so/alone-time.log 2>&1
echo "ALONEDONE $(date +%s)" >> $P
