# old (.devrun/old: an archive of the base commit) against new (the working tree), compiled alike, in turn,
# ROUNDS rounds: per dataset the median of -r 10 -t and the kernels' us per run, launches per run of -r 10 -P.
# Then (UPSTREAM=1) the untuned upstream table of the working tree.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/pkg:/tmp/site PYTHONUNBUFFERED=1
mkdir -p /tmp/pkg && ln -sfn "$PWD" /tmp/pkg/incflat
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
W=/tmp/work; mkdir -p $W/in
python3 .devrun/anchors/inputs.py $W/in ${PROGRAMS:-lud nw backprop pathfinder OptionPricing LocVolCalib} > /dev/null
declare -A FILE=([nw]=rodinia/nw/nw [lud]=rodinia/lud/lud [backprop]=rodinia/backprop/backprop
  [pathfinder]=rodinia/pathfinder/pathfinder [OptionPricing]=finpar/OptionPricing [LocVolCalib]=finpar/LocVolCalib)
for name in ${PROGRAMS:-lud nw backprop pathfinder OptionPricing LocVolCalib}; do
  file=.devrun/fb/${FILE[$name]}.fut
  python3 -m incflat compile $file -o $W/$name-new.py > /dev/null 2>&1 || echo "new $name did not compile"
  PYTHONPATH=$PWD/.devrun/old:/tmp/site python3 -m incflat compile $file -o $W/$name-old.py > /dev/null 2>&1 || echo "old $name did not compile"
done
for input in $W/in/*.in; do
  ds=$(basename $input .in); name=${ds%%-*}
  for round in $(seq ${ROUNDS:-2}); do for v in old new; do
    timeout 120 python3 $W/$name-$v.py -r 10 -t $W/t.txt -b < $input > $W/out-$v.bin 2>$W/err.txt || { echo "$ds $v failed: $(head -c 300 $W/err.txt)"; continue; }
    timeout 120 python3 $W/$name-$v.py -r 10 -P --profile-json $W/p.json -b < $input > /dev/null 2>&1
    python3 -c "
import json, statistics
t = [float(x) for x in open('$W/t.txt').read().split()]
p = json.load(open('$W/p.json')); k = p['kernels']; runs = p.get('runs') or 10
top = sorted(k.items(), key=lambda kv: -kv[1]['total_us'])[:3]
print('$ds $v $round', 'median', statistics.median(t), 'kernels/run', round(sum(v['total_us'] for v in k.values()) / runs, 1),
      'launches/run', round(sum(v['runs'] for v in k.values()) / runs, 1),
      ' '.join(f'{n}={v[\"total_us\"] / runs:.0f}' for n, v in top))"
  done
  cmp -s $W/out-old.bin $W/out-new.bin && echo "$ds outputs identical" || echo "$ds OUTPUTS DIFFER"
  done
done 2>&1 | tee $OUT/side-by-side.txt
if [ "${UPSTREAM:-0}" = 1 ]; then
  timeout 300 python3 futhark_examples/upstream.py run .devrun/fb --anchors .devrun/anchors --out /tmp/up --parts untuned > $OUT/untuned.log 2>&1
  python3 futhark_examples/upstream.py render --out /tmp/up --markdown $OUT/table.md > /dev/null 2>&1
  cp /tmp/up/results.json $OUT/ 2>/dev/null; cat $OUT/table.md
fi
