# session 36: `tree` at 94510a4+ (earlier rounds judged) on the H100: backprop and optionpricing against s26's
# `random` (reused), then lavamd and pathfinder_batch against `exhaustive`
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > /tmp/so/device.txt 2>&1
git rev-parse HEAD >> /tmp/so/device.txt 2>/dev/null
printf '%s\n' backprop optionpricing lavamd pathfinder_batch \
  | xargs -P 4 -I{} sh -c 'python3 futhark_examples/gen_data.py {} --exclude-tag ci > /tmp/so/gen-{}.log 2>&1'
echo "data $(date +%s)" >> $P
for p in backprop optionpricing lavamd pathfinder_batch; do
  case $p in lavamd|pathfinder_batch) S="--strategies tree,exhaustive";;
    *) S="--strategies tree,random --reuse .devdata/reuse-$p.json";; esac
  python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/$p.fut --runs 3 --exclude-case ci \
    $S --out /tmp/so/study-$p > /tmp/so/study-$p.log 2>&1
  echo "studied $p $(date +%s)" >> $P
done
echo "S36DONE $(date +%s)" >> $P
