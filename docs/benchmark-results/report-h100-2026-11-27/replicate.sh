# the report's timings again (MF, IF, AIF with the tuning files of the first run, JAX), in a second lease,
# and LocVolCalib with the tuning made alone
mkdir -p /tmp/so futhark_examples/benchmarks/data
cp .devdata/lvcdata/* futhark_examples/benchmarks/data/ 2>/dev/null
P=/tmp/so/progress
R=/tmp/so/report
mkdir -p $R /tmp/so/alone
cp .devdata/tun2/*.aif.tuning $R/ && mv $R/locvolcalib-alone.aif.tuning /tmp/so/alone/locvolcalib.aif.tuning
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
nvidia-smi --query-gpu=name,driver_version --format=csv > /tmp/so/device.txt 2>&1
printf '%s\n' locvolcalib optionpricing heston32 backprop lavamd nw nn nn_batch srad srad_batch pathfinder pathfinder_batch lud \
  | xargs -P 8 -I{} sh -c 'python3 futhark_examples/gen_data.py {} --exclude-tag ci > /tmp/so/gen-{}.log 2>&1'
echo "data $(date +%s)" >> $P
python3 futhark_examples/report.py run --out $R --parts mf,if,aif --max-seconds 4 > /tmp/so/time.log 2>&1
echo "timed $(date +%s)" >> $P
python3 futhark_examples/report.py run locvolcalib --out /tmp/so/alone --parts aif --max-seconds 4 > /tmp/so/alone-time.log 2>&1
python3 futhark_examples/report.py run --out $R --parts jax > /tmp/so/jax.log 2>&1
echo "ALLDONE $(date +%s)" >> $P
