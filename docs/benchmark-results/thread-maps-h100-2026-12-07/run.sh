# One lease: (1) pathfinder's kernels alone (pf_exp.py); (2) LocVolCalib old (.devrun/old) against new (the
# working tree), futhark-benchmarks' as written (attribute removed) and the suite's port, native, untuned:
# per dataset the median of -r 10 -t, kernels' us per run (-P), outputs compared; two rounds.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/pkg:/tmp/site PYTHONUNBUFFERED=1
mkdir -p /tmp/pkg && ln -sfn "$PWD" /tmp/pkg/incflat
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat .devrun/old/COMMIT; } | tee $OUT/device.txt
W=/tmp/work; mkdir -p $W/in
python3 .devrun/anchors/inputs.py $W/in LocVolCalib > /dev/null
sed 's/#\[incremental_flattening(only_inner)\]//' .devrun/fb/finpar/LocVolCalib.fut > $W/fb_lvc.fut
cp futhark_examples/benchmarks/locvolcalib.fut $W/suite_lvc.fut
for p in fb_lvc; do
  { python3 -m incflat compile $W/$p.fut -o $W/$p-new > /dev/null 2>&1 || echo "new $p did not compile"; } &
  { PYTHONPATH=$PWD/.devrun/old:/tmp/site python3 -m incflat compile $W/$p.fut -o $W/$p-old > /dev/null 2>&1 || echo "old $p did not compile"; } &
done
wait
for round in 1; do for p in fb_lvc; do for ds in medium large; do
  input=$W/in/LocVolCalib-$ds.in
  for v in old new; do
    timeout 60 $W/$p-$v -r 10 -t $W/t.txt -b < $input > $W/out-$v.bin 2>$W/err.txt || { echo "$p $ds $v failed: $(head -c 300 $W/err.txt)"; continue; }
    timeout 60 $W/$p-$v -r 10 -P --profile-json $W/p.json -b < $input > /dev/null 2>&1
    python3 -c "
import json, statistics
t = [float(x) for x in open('$W/t.txt').read().split()]
p = json.load(open('$W/p.json')); k = p['kernels']; runs = p.get('runs') or 10
top = sorted(k.items(), key=lambda kv: -kv[1]['total_us'])[:5]
print('$round $p $ds $v', 'median', statistics.median(t), 'kernels/run', round(sum(v['total_us'] for v in k.values()) / runs, 1),
      'launches/run', round(sum(v['runs'] for v in k.values()) / runs, 1),
      ' '.join(f'{n}={v[\"total_us\"] / runs:.0f}' for n, v in top))"
  done
  cmp -s $W/out-old.bin $W/out-new.bin && echo "$p $ds outputs identical" || python3 .devrun/cmpout.py $W/out-old.bin $W/out-new.bin "$p $ds"
done; done; done 2>&1 | tee $OUT/lvc.txt
# (3) the new LocVolCalib (pyopencl) with segmap_44's row-walked input passed interleaved, against as compiled
python3 -m incflat compile --backend=pyopencl $W/fb_lvc.fut -o $W/lvcpy.py > /dev/null 2>&1 && python3 .devrun/coal_patch.py $W/lvcpy.py tmp_5980
for round in 1; do for ds in large; do for v in lvcpy.py lvcpy.py-coal.py; do
  input=$W/in/LocVolCalib-$ds.in
  timeout 60 python3 $W/$v -r 10 -t $W/t.txt -b < $input > $W/out-$v.bin 2>$W/err.txt || { echo "$v $ds failed: $(head -c 300 $W/err.txt)"; continue; }
  timeout 60 python3 $W/$v -r 10 -P --profile-json $W/p.json -b < $input > /dev/null 2>&1
  python3 -c "
import json, statistics
t = [float(x) for x in open('$W/t.txt').read().split()]
p = json.load(open('$W/p.json')); k = p['kernels']; runs = p.get('runs') or 10
top = sorted(k.items(), key=lambda kv: -kv[1]['total_us'])[:6]
print('$round $v $ds', 'median', statistics.median(t), 'kernels/run', round(sum(v['total_us'] for v in k.values()) / runs, 1),
      ' '.join(f'{n}={v[\"total_us\"] / runs:.0f}' for n, v in top))"
done; python3 .devrun/cmpout.py $W/out-lvcpy.py.bin $W/out-lvcpy.py-coal.py.bin "coal $ds"; done; done 2>&1 | tee $OUT/coal.txt
