# every program untuned alone (HEAD); then HEAD against fe02f8e (.devrun/old) side by side, in turn, 3 times
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/pkg:/tmp/site PYTHONUNBUFFERED=1
mkdir -p /tmp/pkg && ln -sfn "$PWD" /tmp/pkg/incflat
R=/tmp/up; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat .devrun/commit.txt >> $R/device.txt
timeout 200 python3 futhark_examples/upstream.py run .devrun/fb --anchors .devrun/anchors --out $R/out --parts untuned > $R/untuned.log 2>&1
echo "exit $?" >> $R/untuned.log
python3 futhark_examples/upstream.py render --out $R/out --markdown $R/table.md > /dev/null 2>&1
W=/tmp/work; mkdir -p $W; cp $R/out/inputs/*.in $W/ 2>/dev/null
for prog in pathfinder:rodinia/pathfinder/pathfinder nw:rodinia/nw/nw lud:rodinia/lud/lud; do
  name=${prog%%:*}; file=.devrun/fb/${prog#*:}.fut
  python3 -m incflat compile $file -o $W/$name-new.py > /dev/null 2>&1
  PYTHONPATH=$PWD/.devrun/old:/tmp/site python3 -m incflat compile $file -o $W/$name-old.py > /dev/null 2>&1
done
for ds in pathfinder-D1 nw-D1 nw-D2 lud-64 lud-256; do
  name=${ds%%-*}
  for round in 1 2 3; do for v in old new; do
    timeout 60 python3 $W/$name-$v.py -r 10 -t $W/t.txt -b < $W/$ds.in > /dev/null 2>&1
    med=$(sort -n $W/t.txt | awk '{a[NR]=$1} END {print (a[int((NR+1)/2)]+a[int(NR/2)+1])/2}')
    echo "$ds $v $round $med" >> $R/sidebyside.txt
  done; done
done
cp $R/table.md $R/device.txt $R/untuned.log $R/sidebyside.txt $OUT/; cp $R/results.json $OUT/ 2>/dev/null
cat $R/device.txt $R/table.md $R/sidebyside.txt
