# session 38 on one GPU: NW tuned by `tree` with its loop checks (nwnext.sh), then `tree` at the current commit
# against the earlier strategies' results (s34's `random`, s35's `exhaustive` for nn_batch) on srad, srad_batch,
# heston32 and nn_batch, and LocVolCalib against `random` at tree's runs; each judged in turn
mkdir -p /tmp/so futhark_examples/benchmarks/data; P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > /tmp/so/device.txt 2>&1
nproc >> /tmp/so/device.txt; lscpu | grep 'Model name' >> /tmp/so/device.txt; echo "$COMMIT" >> /tmp/so/device.txt
printf '%s\n' srad srad_batch heston32 nn_batch locvolcalib \
  | xargs -P 5 -I{} sh -c 'python3 futhark_examples/gen_data.py {} --exclude-tag ci > /tmp/so/gen-{}.log 2>&1'
bash .devdata/nwnext.sh
for p in srad srad_batch heston32 nn_batch locvolcalib; do
  case $p in locvolcalib) S="tree,random --match-budget";; nn_batch) S="tree,exhaustive --reuse .devdata/reuse-s38.json";;
    *) S="tree,random --reuse .devdata/reuse-s38.json";; esac
  python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/$p.fut --runs 3 --exclude-case ci \
    --strategies $S --out /tmp/so/study-$p > /tmp/so/study-$p.log 2>&1
  echo "studied $p $(date +%s)" >> $P
done
echo "S38DONE $(date +%s)" >> $P
