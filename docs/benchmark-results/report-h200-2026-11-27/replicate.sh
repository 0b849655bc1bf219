# run 2 in the same lease: MF, IF, AIF timed again with run 1's tuning files, then JAX
P=/tmp/so/progress
R=/tmp/so/report2
mkdir -p $R
cp /tmp/so/report/*.aif.tuning $R/
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "rep-start $(date +%s)" >> $P
python3 futhark_examples/report.py run --out $R --parts mf,if,aif --max-seconds 4 > /tmp/so/time2.log 2>&1
echo "rep-timed $(date +%s)" >> $P
python3 futhark_examples/report.py run --out $R --parts jax > /tmp/so/jax2.log 2>&1
echo "REPDONE $(date +%s)" >> $P
