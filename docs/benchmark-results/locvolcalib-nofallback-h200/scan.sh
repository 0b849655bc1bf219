# every intra-group threshold at 1, the rest at the defaults, -L: the versions that fall back, per dataset (the
# suite's data generated first; run from the repository root with the wheels of the device README installed)
export PYTHONPATH=/tmp/pkg:/tmp/site
mkdir -p /tmp/so
( for p in backprop heston32 lavamd nn_batch nw optionpricing pathfinder_batch srad srad_batch lud; do
    timeout 120 python3 futhark_examples/gen_data.py $p --exclude-tag ci > /dev/null 2>&1
    python3 -m incflat compile futhark_examples/benchmarks/$p.fut -o /tmp/so/prog-$p > /dev/null 2>&1
    params=$(python3 /tmp/so/prog-$p --print-params | grep -o "^[a-z_]*\.suff_intra_par_[0-9]*" | sed 's/^/--param=/; s/$/=1/' | tr '\n' ' ')
    for f in futhark_examples/benchmarks/data/$p-*.in; do
      fell=$(timeout 60 python3 /tmp/so/prog-$p -b -L $params < $f 2>&1 >/dev/null | grep "does not fit" | sed 's/ (.*//' | sort | uniq -c | tr '\n' ';')
      echo "$p $(basename $f): ${fell:-none}"
    done
  done ) > /tmp/so/scan.txt 2>&1
