# LocVolCalib tuned alone with experiments under --no-fallback (12be66e), its guards, MF, IF and AIF timed; before
# that, V2 (suff_intra_par_1) run at each training dataset with -L and with --no-fallback
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
R=/tmp/so/lvc
mkdir -p $R
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
nvidia-smi --query-gpu=name,driver_version --format=csv > /tmp/so/device.txt 2>&1
python3 -c "import pyopencl as cl; d=cl.get_platforms()[0].get_devices()[0]; print(d.name, 'local_mem_size', d.local_mem_size, 'max_work_group_size', d.max_work_group_size)" >> /tmp/so/device.txt 2>&1
cp .devdata/lvcdata/* futhark_examples/benchmarks/data/ 2>/dev/null
python3 -m incflat compile futhark_examples/benchmarks/locvolcalib.fut -o /tmp/so/lvcprog > /tmp/so/v2check.txt 2>&1
for f in train-small train-medium train-large; do
  echo "== $f -L, suff_intra_par_1=1" >> /tmp/so/v2check.txt
  python3 /tmp/so/lvcprog -b -L --param main.suff_intra_par_1=1 < futhark_examples/benchmarks/data/locvolcalib-$f.in 2>&1 >/dev/null | grep -v "^Compared" | head -5 >> /tmp/so/v2check.txt
  echo "== $f --no-fallback" >> /tmp/so/v2check.txt
  python3 /tmp/so/lvcprog -b --no-fallback --param main.suff_intra_par_1=1 < futhark_examples/benchmarks/data/locvolcalib-$f.in 2>&1 >/dev/null | tail -2 >> /tmp/so/v2check.txt
  echo "exit ${PIPESTATUS[0]}" >> /tmp/so/v2check.txt
done
echo "checked $(date +%s)" >> $P
python3 futhark_examples/report.py run locvolcalib --out $R --parts aif --tune-only --tuning-runs 3 > /tmp/so/lvc-tune.log 2>&1
echo "tuned $(date +%s)" >> $P
python3 futhark_examples/report.py guards locvolcalib --out $R > /tmp/so/lvc-guards.log 2>&1
echo "guards $(date +%s)" >> $P
python3 futhark_examples/report.py run locvolcalib --out $R --parts mf,if,aif --max-seconds 2 > /tmp/so/lvc-time.log 2>&1
echo "LVCDONE $(date +%s)" >> $P
