"""Experiment: variants of a compiled nw (argv[1]) with its intra-group block kernels patched by hand:
nofence (barriers fence local memory only), localref (the reference block staged in local memory first), both."""
import re, sys
src = open(sys.argv[1]).read()
read = re.compile(r"reference_(\d+)_mem\[\(\(reference_\1_off \+ \((tmp_\d+_c\d+)\) \* \(reference_\1_s0\)\) \+ \((tmp_\d+_c\d+)\) \* \(reference_\1_s1\)\) \+ \((idx_c\d+)\) \* \(\(reference_\1_s0\) \* \(\(\(long\)1L\)\)\) \+ \((idx_c\d+)\) \* \(\(reference_\1_s1\) \* \(\(\(long\)1L\)\)\)\]")
state = re.compile(r"(  __local int \* state_c\d+ = scratch_c\d+;)")

def localref(text):
    out, n = [], 0
    for part in re.split(r"(\('segmap_\d+', r\"\"\".*?\"\"\")", text, flags=re.S):
        m = read.search(part)
        if part.startswith("('segmap_") and m and state.search(part):
            num, row, col = m.group(1), m.group(2), m.group(3)
            pre = (f"  __local int ref_l[64 * 64];\n"
                   f"  for (long f = get_local_id(0); f < B_1694 * B_1694; f += get_local_size(0)) ref_l[f] = "
                   f"reference_{num}_mem[reference_{num}_off + ({row} + f / B_1694) * reference_{num}_s0 + "
                   f"({col} + f % B_1694) * reference_{num}_s1];\n  barrier(CLK_LOCAL_MEM_FENCE);\n")
            part = state.sub(lambda s: pre + s.group(1), part, count=1)
            part = read.sub(lambda r: f"ref_l[({r.group(4)}) * 64 + ({r.group(5)})]", part)
            n += 1
        out.append(part)
    assert n == 2, n
    return "".join(out)

def nofence(text):
    return text.replace("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)", "barrier(CLK_LOCAL_MEM_FENCE)")

base = sys.argv[1]
open(base + "-nofence.py", "w").write(nofence(src))
open(base + "-localref.py", "w").write(localref(src))
open(base + "-both.py", "w").write(nofence(localref(src)))
