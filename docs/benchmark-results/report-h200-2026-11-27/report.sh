# The full report on an H200 with the working tree: data, LocVolCalib tuned alone, the other 12 programs tuned
# three at a time, LocVolCalib's guards, MF/IF/AIF timed alone, JAX.
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
R=/tmp/so/report
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  nvidia-smi -L > /tmp/so/device.txt; echo "NOTH200 ALLDONE tuned3 timed" >> $P; exit
fi
cp .devdata/lvcdata/* futhark_examples/benchmarks/data/ 2>/dev/null
mkdir -p $R
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > /tmp/so/device.txt 2>&1
nproc >> /tmp/so/device.txt; lscpu | grep 'Model name' >> /tmp/so/device.txt
echo "$COMMIT" >> /tmp/so/device.txt
printf '%s\n' locvolcalib optionpricing heston32 backprop lavamd nw nn nn_batch srad srad_batch pathfinder pathfinder_batch lud \
  | xargs -P 8 -I{} sh -c 'python3 futhark_examples/gen_data.py {} --exclude-tag ci > /tmp/so/gen-{}.log 2>&1'
echo "data $(date +%s)" >> $P
python3 futhark_examples/report.py run locvolcalib --out $R --parts aif --tune-only --tuning-runs 3 > /tmp/so/tune-locvolcalib.log 2>&1
echo "tuned locvolcalib $(date +%s)" >> $P
printf '%s\n' heston32 nn_batch optionpricing srad_batch backprop lud srad pathfinder_batch lavamd nw nn pathfinder \
  | xargs -P 3 -I{} sh -c "python3 futhark_examples/report.py run {} --out $R --parts aif --tune-only --tuning-runs 3 > /tmp/so/tune-{}.log 2>&1; echo \"tuned {} \$(date +%s)\" >> $P"
echo "tuned3 $(date +%s)" >> $P
python3 futhark_examples/report.py guards locvolcalib --out $R > /tmp/so/guards.log 2>&1
echo "guards $(date +%s)" >> $P
python3 futhark_examples/report.py run --out $R --parts mf,if,aif --max-seconds 4 > /tmp/so/time.log 2>&1
echo "timed $(date +%s)" >> $P
python3 futhark_examples/report.py run --out $R --parts jax > /tmp/so/jax.log 2>&1
echo "ALLDONE $(date +%s)" >> $P
