# The full report (issue 15) with the working tree: data, every program tuned three at a time, LocVolCalib's
# guard records, then MF, IF and AIF timed alone, then JAX. numpy's column is kept from the 2026-11-24 run.
mkdir -p /tmp/so futhark_examples/benchmarks/data
cp .devdata/lvcdata/* futhark_examples/benchmarks/data/ 2>/dev/null
P=/tmp/so/progress
R=/tmp/so/report
mkdir -p $R
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > /tmp/so/device.txt 2>&1
nproc >> /tmp/so/device.txt; lscpu | grep 'Model name' >> /tmp/so/device.txt
git log -1 --format=%H >> /tmp/so/device.txt 2>/dev/null
printf '%s\n' locvolcalib optionpricing heston32 backprop lavamd nw nn nn_batch srad srad_batch pathfinder pathfinder_batch lud \
  | xargs -P 8 -I{} sh -c 'python3 futhark_examples/gen_data.py {} --exclude-tag ci > /tmp/so/gen-{}.log 2>&1'
echo "data $(date +%s)" >> $P
printf '%s\n' locvolcalib lud heston32 nw optionpricing srad_batch srad nn_batch backprop lavamd nn pathfinder_batch pathfinder \
  | xargs -P 3 -I{} sh -c "python3 futhark_examples/report.py run {} --out $R --parts aif --tune-only --tuning-runs 3 > /tmp/so/tune-{}.log 2>&1; echo \"tuned {} \$(date +%s)\" >> $P"
python3 futhark_examples/report.py guards locvolcalib --out $R > /tmp/so/guards.log 2>&1
echo "guards $(date +%s)" >> $P
python3 futhark_examples/report.py run --out $R --parts mf,if,aif --max-seconds 4 > /tmp/so/time.log 2>&1
echo "timed $(date +%s)" >> $P
python3 futhark_examples/report.py run --out $R --parts jax > /tmp/so/jax.log 2>&1
echo "ALLDONE $(date +%s)" >> $P
