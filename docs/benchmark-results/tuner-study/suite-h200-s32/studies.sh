# issue 16: tree (configurations counted) against random's reused results, on the training datasets, H200
mkdir -p /tmp/so
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
nvidia-smi --query-gpu=name,driver_version --format=csv > /tmp/so/device.txt 2>&1
for p in heston32 optionpricing backprop srad; do python3 futhark_examples/gen_data.py $p --exclude-tag ci; done > /tmp/so/gen.log 2>&1
echo "data $(date +%s)" >> $P
for p in backprop optionpricing srad heston32; do
  python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/$p.fut --runs 3 --exclude-case ci \
    --strategies tree,random --reuse .devdata/reuse-$p.json --out /tmp/so/study-$p > /tmp/so/study-$p.log 2>&1
  echo "studied $p $(date +%s)" >> $P
done
echo "STUDYDONE $(date +%s)" >> $P
