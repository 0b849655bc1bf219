# next lease (H200): LocVolCalib in the study (tree against random at its runs; data carried in .devdata/lvcdata),
# then srad twice more (tree against s34's random) to see how often the H200's invocations split
mkdir -p /tmp/so futhark_examples/benchmarks/data; P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > /tmp/so/device.txt 2>&1
echo "$COMMIT" >> /tmp/so/device.txt
cp .devdata/lvcdata/* futhark_examples/benchmarks/data/ 2>/dev/null
printf '%s\n' locvolcalib srad | xargs -P 2 -I{} sh -c 'python3 futhark_examples/gen_data.py {} --exclude-tag ci > /tmp/so/gen-{}.log 2>&1'
echo "data $(date +%s)" >> $P
python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/locvolcalib.fut --runs 3 --exclude-case ci \
  --strategies tree,random --match-budget --out /tmp/so/study-locvolcalib > /tmp/so/study-locvolcalib.log 2>&1
echo "studied locvolcalib $(date +%s)" >> $P
for k in 1 2; do
  python3 futhark_examples/tuner_study.py futhark_examples/benchmarks/srad.fut --runs 3 --exclude-case ci \
    --strategies tree,random --reuse .devdata/reuse-s38.json --out /tmp/so/study-srad-$k > /tmp/so/study-srad-$k.log 2>&1
  echo "studied srad $k $(date +%s)" >> $P
done
echo "S39DONE $(date +%s)" >> $P
