# LocVolCalib tuned alone with the fallback pass (f0b2f14), its guards, its AIF timing
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
R=/tmp/so/lvc
mkdir -p $R
cp .devdata/lvcdata/* futhark_examples/benchmarks/data/ 2>/dev/null
export PYTHONPATH=/tmp/pkg:/tmp/site
nvidia-smi --query-gpu=name,driver_version --format=csv > /tmp/so/device.txt 2>&1
echo "start $(date +%s)" >> $P
python3 futhark_examples/report.py run locvolcalib --out $R --parts aif --tune-only --tuning-runs 3 > /tmp/so/tune.log 2>&1
echo "tuned $(date +%s)" >> $P
python3 futhark_examples/report.py run locvolcalib --out $R --parts aif --max-seconds 2 > /tmp/so/time.log 2>&1
echo "timed $(date +%s)" >> $P
python3 futhark_examples/report.py guards locvolcalib --out $R > /tmp/so/guards.log 2>&1
echo "LVCDONE $(date +%s)" >> $P
