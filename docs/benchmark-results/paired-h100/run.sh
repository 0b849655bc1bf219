# srad (and heston32) on the GPU: separate invocations against in-process alternation of configurations,
# pinned and not, and the host's cost with launches made no-ops
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
python3 futhark_examples/gen_data.py srad --tag train > /dev/null 2>&1
python3 -m incflat compile futhark_examples/benchmarks/srad.fut -o /tmp/so/srad > /dev/null 2>&1
echo "compiled $(date +%s)" >> $P
python3 - <<'PY'
import json, subprocess
names = [l.split()[0] for l in subprocess.run(["python3", "/tmp/so/srad", "--print-params"], capture_output=True, text=True).stdout.splitlines() if "suff_" in l]
N = 2147483647
tree = {"main.suff_intra_par_1": 400, "main.suff_intra_par_7": 400, "main.suff_outer_par_0": 400, "main.suff_outer_par_2": 400, "main.suff_outer_par_3": 400}
tree.update({n: 32768 for n in names if n not in tree})
rnd = {"main.suff_intra_par_1": 400, "main.suff_intra_par_11": 400, "main.suff_intra_par_7": 400, "main.suff_intra_par_9": 400, "main.suff_outer_par_2": 400}
rnd.update({n: N for n in names if n not in rnd})
allintra = {n: (1 if "intra" in n else N) for n in names}
json.dump({"untuned": {}, "tree": tree, "random": rnd, "allintra": allintra}, open("/tmp/so/srad-configs.json", "w"), indent=1)
PY
D=futhark_examples/benchmarks/data/srad-train-D1.in
cfg() { python3 -c "import json,sys; print(' '.join(f'--param={k}={v}' for k,v in json.load(open('/tmp/so/srad-configs.json'))['$1'].items()))"; }
for round in 1 2 3 4; do
  for c in untuned tree random allintra; do
    python3 /tmp/so/srad -b -r 11 -t /tmp/so/sep-$c-$round.txt $(cfg $c) < $D > /dev/null 2>> /tmp/so/err.txt
  done
done
echo "separate $(date +%s)" >> $P
for proc in 1 2 3 4; do
  python3 .devdata/pair.py /tmp/so/srad $D /tmp/so/srad-configs.json 30 > /tmp/so/pair-$proc.json 2>> /tmp/so/err.txt
done
echo "paired $(date +%s)" >> $P
for proc in 1 2; do
  taskset -c 3 python3 .devdata/pair.py /tmp/so/srad $D /tmp/so/srad-configs.json 30 > /tmp/so/pin1-$proc.json 2>> /tmp/so/err.txt
  taskset -c 0-7 python3 .devdata/pair.py /tmp/so/srad $D /tmp/so/srad-configs.json 30 > /tmp/so/pin8-$proc.json 2>> /tmp/so/err.txt
done
for round in 1 2; do
  for c in untuned random; do
    taskset -c 3 python3 /tmp/so/srad -b -r 11 -t /tmp/so/sep1-$c-$round.txt $(cfg $c) < $D > /dev/null 2>> /tmp/so/err.txt
  done
done
echo "pinned $(date +%s)" >> $P
python3 .devdata/pair.py /tmp/so/srad $D /tmp/so/srad-configs.json 20 noenq > /tmp/so/noenq.json 2>> /tmp/so/err.txt
nproc > /tmp/so/host.txt; lscpu >> /tmp/so/host.txt; uptime >> /tmp/so/host.txt
echo "noenq $(date +%s)" >> $P
# heston32: untuned against random's (suite-h100-s26) on train-1162, separate and paired
python3 futhark_examples/gen_data.py heston32 --tag train > /dev/null 2>&1
python3 -m incflat compile futhark_examples/benchmarks/heston32.fut -o /tmp/so/heston32 > /dev/null 2>&1
python3 -c "
import json; a=json.load(open('.devdata/reuse-heston32.json'))[0]['assignment']
json.dump({'untuned': {}, 'random': a}, open('/tmp/so/h-configs.json','w'))"
H=futhark_examples/benchmarks/data/heston32-train-1162.in
RA=$(python3 -c "import json; print(' '.join(f'--param={k}={v}' for k,v in json.load(open('/tmp/so/h-configs.json'))['random'].items()))")
for round in 1 2 3 4; do
  python3 /tmp/so/heston32 -b -r 11 -t /tmp/so/hsep-untuned-$round.txt < $H > /dev/null 2>> /tmp/so/err.txt
  python3 /tmp/so/heston32 -b -r 11 -t /tmp/so/hsep-random-$round.txt $RA < $H > /dev/null 2>> /tmp/so/err.txt
done
for proc in 1 2 3 4; do
  python3 .devdata/pair.py /tmp/so/heston32 $H /tmp/so/h-configs.json 20 > /tmp/so/hpair-$proc.json 2>> /tmp/so/err.txt
done
echo "S34ADONE $(date +%s)" >> $P
