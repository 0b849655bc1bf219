# next session (one GPU): the nine at the tuner's default precision (--runs 5), `tree` against the reused
# baselines (reuse-s40.json: s26's and s34's `random` (H100), s35's `exhaustive` for nn_batch, s39's `random` for
# LocVolCalib and `exhaustive` for lavamd and pathfinder_batch (H200)); about 2,700 s held at --runs 3's times x 1.4
mkdir -p /tmp/so futhark_examples/benchmarks/data; P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > /tmp/so/device.txt 2>&1
echo "$COMMIT" >> /tmp/so/device.txt
cp .devdata/lvcdata/* futhark_examples/benchmarks/data/ 2>/dev/null
ALL="backprop heston32 optionpricing srad lavamd pathfinder_batch srad_batch nn_batch locvolcalib"
printf '%s\n' ${PROGRAMS:-$ALL} | xargs -P 9 -I{} sh -c 'python3 futhark_examples/gen_data.py {} --exclude-tag ci > /tmp/so/gen-{}.log 2>&1'
echo "data $(date +%s)" >> $P
for p in ${PROGRAMS:-$ALL}; do
  case $p in
    lavamd|pathfinder_batch|nn_batch) S="tree,exhaustive";;
    *) S="tree,random";;
  esac
  python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/$p.fut --runs 5 --exclude-case ci \
    --strategies $S --reuse .devdata/reuse-s40.json --out /tmp/so/study-$p > /tmp/so/study-$p.log 2>&1
  echo "studied $p $(date +%s)" >> $P
done
echo "S40DONE $(date +%s)" >> $P
