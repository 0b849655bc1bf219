# usage: bash .devrun/profile.sh TAG PYTHON_PKG_DIR  (run from the repo root on the device)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/pkg:/tmp/site PYTHONUNBUFFERED=1
mkdir -p /tmp/pkg && ln -sfn "$PWD" /tmp/pkg/incflat
W=/tmp/work; mkdir -p $W/in $W/prof
python3 .devrun/anchors/inputs.py $W/in $NAMES > /dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
git log --oneline -1 >> $OUT/device.txt 2>/dev/null
for prog in $PROGRAMS; do
  name=${prog%%:*}; file=.devrun/fb/${prog#*:}.fut
  python3 -m incflat compile $file -o $W/$name.py > $W/$name.compile.log 2>&1 || { echo "$name compile failed: $(tail -1 $W/$name.compile.log)"; continue; }
  for input in $W/in/$name-*.in; do
    ds=$(basename $input .in); ds=${ds#$name-}
    timeout 120 python3 $W/$name.py -r 10 -t $W/t.txt -b < $input > /dev/null 2> $W/err.txt || { echo "$name $ds failed: $(tail -1 $W/err.txt)"; continue; }
    med=$(sort -n $W/t.txt | awk '{a[NR]=$1} END {print (a[int((NR+1)/2)]+a[int(NR/2)+1])/2}')
    timeout 120 python3 $W/$name.py -r 10 -P --profile-json $W/prof/$name-$ds.json -b < $input > /dev/null 2> $W/prof.txt
    echo "== $name $ds median_us=$med"
    cat $W/prof.txt
  done
done
tar -C $W -cf $OUT/profiles.tar prof
