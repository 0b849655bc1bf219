# session 36: the collector's pauses on the H100 before 632ba6d: order.py's identical configurations in turn
# with f561ea1's program runtime (the collector on while runs are timed), then at 632ba6d again
mkdir -p /tmp/so futhark_examples/benchmarks/data
P=/tmp/so/progress
export PYTHONPATH=/tmp/pkg:/tmp/site
echo "start $(date +%s)" >> $P
python3 futhark_examples/gen_data.py backprop --exclude-tag ci > /tmp/so/gen-backprop.log 2>&1
cp codegen/runtime/program.py /tmp/so/program_new.py
cp .devdata/program_old.py codegen/runtime/program.py
MODES="A,A;A,B;B,A" REPS=4 ORDER_OUT=/tmp/so/order-old.json python3 .devdata/order.py > /tmp/so/order-old.log 2>&1
echo "old $(date +%s)" >> $P
cp /tmp/so/program_new.py codegen/runtime/program.py
MODES="A,A;A,B;B,A" REPS=4 ORDER_OUT=/tmp/so/order-new.json python3 .devdata/order.py > /tmp/so/order-new.log 2>&1
echo "S36EDONE $(date +%s)" >> $P
