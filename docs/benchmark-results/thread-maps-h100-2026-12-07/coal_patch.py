"""Experiment: a compiled LocVolCalib (pyopencl, argv[1]) with the array its segmap_44 walks by rows (argv[2])
passed interleaved (the runtime's `coalesced`) -> argv[1] + '-coal.py'."""
import re, sys
src = open(sys.argv[1]).read()
name = sys.argv[2]
launch = re.search(r"\n( +)ctx\.launch\('segmap_44'", src)
assert launch and f"{name}.buf" in src[launch.start():launch.start() + 400], "segmap_44 does not take " + name
indent = launch.group(1)
out = src[:launch.start()] + f"\n{indent}{name} = coalesced(ctx, {name}, 2)" + src[launch.start():]
open(sys.argv[1] + "-coal.py", "w").write(out)
