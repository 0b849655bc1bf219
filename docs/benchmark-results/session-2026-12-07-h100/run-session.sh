# this session's GPU run: nw's kernels patched by hand, the C launch micro benchmark, then old against new
set -u
bash .devrun/nw_exp.sh 2>&1 | tail -20
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/pkg:/tmp/site PYTHONUNBUFFERED=1
(which cc gcc; timeout 120 python3 futhark_examples/micro/launch.py -n 20000 --json $OUT/launch.json) 2>&1 | tail -12 | tee $OUT/launch.txt
PROGRAMS="${PROGRAMS:-lud nw pathfinder backprop}" ROUNDS=${ROUNDS:-2} UPSTREAM=${UPSTREAM:-0} bash .devrun/compare.sh 2>&1 | tail -50
