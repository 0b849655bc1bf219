# nw's intra-group block kernels patched by hand (.devrun/nw_patch.py), each variant timed in turn
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/pkg:/tmp/site PYTHONUNBUFFERED=1
mkdir -p /tmp/pkg && ln -sfn "$PWD" /tmp/pkg/incflat
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
W=/tmp/nwexp; mkdir -p $W/in
python3 .devrun/anchors/inputs.py $W/in nw > /dev/null
python3 -m incflat compile .devrun/fb/rodinia/nw/nw.fut -o $W/nw.py > /dev/null 2>&1 || echo "nw did not compile"
python3 .devrun/nw_patch.py $W/nw.py
for round in 1 2; do for ds in D1 D2; do for v in nw.py nw.py-nofence.py nw.py-localref.py nw.py-both.py; do
  timeout 120 python3 $W/$v -r 10 -t $W/t.txt -b < $W/in/nw-$ds.in > $W/out-$v.bin 2>$W/err.txt || { echo "$ds $v failed: $(head -c 300 $W/err.txt)"; continue; }
  timeout 120 python3 $W/$v -r 10 -P --profile-json $W/p.json -b < $W/in/nw-$ds.in > /dev/null 2>&1
  python3 -c "
import json, statistics
t = [float(x) for x in open('$W/t.txt').read().split()]
p = json.load(open('$W/p.json')); k = p['kernels']; runs = p.get('runs') or 10
top = sorted(k.items(), key=lambda kv: -kv[1]['total_us'])[:3]
print('$ds $v $round', 'median', statistics.median(t), 'kernels/run', round(sum(v['total_us'] for v in k.values()) / runs, 1),
      ' '.join(f'{n}={v[\"total_us\"] / runs:.0f}' for n, v in top))"
  cmp -s $W/out-nw.py.bin $W/out-$v.bin || echo "$ds $v OUTPUT DIFFERS"
done; done; done 2>&1 | tee $OUT/nw-experiment.txt
