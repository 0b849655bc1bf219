# After run.sh (which compiles heston32 to /tmp/h32), on the same GPU machine, from the repository root.
# (1) where the time of fast and slow invocations goes: 8 invocations of 3 runs each with -P, the four largest
#     kernels' summed times; (2) whether the hash seed or the core decides an invocation's speed.
D=futhark_examples/benchmarks/data
for i in 1 2 3 4 5 6 7 8; do
  /tmp/h32 -r 3 -P -b -t /tmp/pt$i.txt < $D/heston32-train-9000.in > /dev/null 2> /tmp/P$i.txt
  echo "== $i $(tr '\n' ' ' < /tmp/pt$i.txt)"; grep -E "^seg" /tmp/P$i.txt | sort -k3 -n -r | head -4
done
r() { "$@" -r 3 -b -t /tmp/x.txt < $D/heston32-train-9000.in > /dev/null; tr '\n' ' ' < /tmp/x.txt; }
for s in 0 1 2 3; do echo "seed $s: $(for i in 1 2 3 4; do PYTHONHASHSEED=$s r /tmp/h32; echo -n '| '; done)"; done
for c in 3 11; do echo "pinned core $c: $(for i in 1 2 3 4 5 6; do r taskset -c $c python3 /tmp/h32; echo -n '| '; done)"; done
