# session 39, second lease (H200): `tree` at c8787bd on the programs whose GPU figures came from an H100 at older
# commits: optionpricing and backprop against s26's `random` (reused), lavamd and pathfinder_batch against
# `exhaustive`, then srad_batch and nn_batch and heston32 against s34's `random` / s35's `exhaustive` (reused)
mkdir -p /tmp/so futhark_examples/benchmarks/data; P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > /tmp/so/device.txt 2>&1
echo "$COMMIT" >> /tmp/so/device.txt
printf '%s\n' optionpricing backprop lavamd pathfinder_batch srad_batch nn_batch heston32 \
  | xargs -P 7 -I{} sh -c 'python3 futhark_examples/gen_data.py {} --exclude-tag ci > /tmp/so/gen-{}.log 2>&1'
echo "data $(date +%s)" >> $P
for p in optionpricing backprop lavamd pathfinder_batch srad_batch nn_batch heston32; do
  case $p in
    lavamd|pathfinder_batch) S="tree,exhaustive";;
    optionpricing) S="tree,random --reuse .devdata/reuse-optionpricing.json";;
    backprop) S="tree,random --reuse .devdata/reuse-s36-backprop-random.json";;
    nn_batch) S="tree,exhaustive --reuse .devdata/reuse-s38.json";;
    *) S="tree,random --reuse .devdata/reuse-s38.json";;
  esac
  python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/$p.fut --runs 3 --exclude-case ci \
    --strategies $S --out /tmp/so/study-$p > /tmp/so/study-$p.log 2>&1
  echo "studied $p $(date +%s)" >> $P
done
echo "S39BDONE $(date +%s)" >> $P
