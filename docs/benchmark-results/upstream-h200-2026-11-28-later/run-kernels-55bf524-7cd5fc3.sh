# lud and nw compiled by 55bf524 (.devrun/old) and by the working tree, in turn, twice: median of -r 10 -t and
# the kernels' µs per run of -r 10 -P, one H200
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/pkg:/tmp/site PYTHONUNBUFFERED=1
mkdir -p /tmp/pkg && ln -sfn "$PWD" /tmp/pkg/incflat
W=/tmp/work; mkdir -p $W/in
python3 .devrun/anchors/inputs.py $W/in lud nw > /dev/null
for prog in nw:rodinia/nw/nw lud:rodinia/lud/lud; do
  name=${prog%%:*}; file=.devrun/fb/${prog#*:}.fut
  python3 -m incflat compile $file -o $W/$name-new.py > /dev/null 2>&1
  PYTHONPATH=$PWD/.devrun/old:/tmp/site python3 -m incflat compile $file -o $W/$name-old.py > /dev/null 2>&1
done
for ds in nw-D1 nw-D2 lud-64 lud-256 lud-2048; do
  name=${ds%%-*}
  for round in 1 2; do for v in old new; do
    timeout 60 python3 $W/$name-$v.py -r 10 -t $W/t.txt -b < $W/in/$ds.in > /dev/null 2>&1
    timeout 60 python3 $W/$name-$v.py -r 10 -P --profile-json $W/p.json -b < $W/in/$ds.in > /dev/null 2>&1
    python3 -c "
import json, statistics
t = [float(x) for x in open('$W/t.txt').read().split()]
p = json.load(open('$W/p.json')); k = p['kernels']; runs = p.get('runs') or 10
top = sorted(k.items(), key=lambda kv: -kv[1]['total_us'])[:3]
print('$ds $v $round', 'median', statistics.median(t), 'kernels/run', round(sum(v['total_us'] for v in k.values()) / runs, 1),
      ' '.join(f'{n}={v[\"total_us\"] / runs:.0f}' for n, v in top))"
  done; done
done
