"""For each program of the suite named: the guards whose version launches a kernel that lays its results out
outer first (outer-first.patch applied), and the --param set that reaches that version (ancestors pinned).

    python affected.py optionpricing heston32 srad_batch lud > affected.txt   (from the repository root)
"""
import pathlib
import re
import subprocess
import sys
import tempfile

from incflat.codegen.runtime import tuning
from incflat.harness import program_params
from incflat.tuner.tree import pins

NEVER = 2147483647
for name in sys.argv[1:]:
    compiled = pathlib.Path(tempfile.mkdtemp()) / f"{name}.py"
    subprocess.run([sys.executable, "-m", "incflat", "compile", f"futhark_examples/benchmarks/{name}.fut", "-o",
                    str(compiled)], check=True, stdout=subprocess.DEVNULL)
    src = compiled.read_text().splitlines()
    nodes = {n.name: n for n in tuning.all_nodes(tuning.build_forest(program_params(compiled)))}
    guards = []
    for k, line in enumerate(src):
        if "outer_first=True" in line:  # the innermost guard around the allocation
            indent = len(line) - len(line.lstrip())
            for above in reversed(src[:k]):
                m = re.search(r"if ctx\.cmp\('([^']+)'", above)
                if m and len(above) - len(above.lstrip()) < indent:
                    guards.append(m.group(1))
                    break
    for g in dict.fromkeys(guards):
        print(name, g, " ".join(f"--param {k}={v}" for k, v in (pins(nodes[g], NEVER) | {g: 1}).items()))
