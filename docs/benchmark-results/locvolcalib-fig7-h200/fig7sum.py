import json, pathlib, sys
d = pathlib.Path(sys.argv[1])
for j in sorted(d.glob("*.json")):
    k = json.loads(j.read_text())["kernels"]
    tot = sum(v["total_us"] for v in k.values())
    ts = [float(x) for x in (j.with_suffix(".t")).read_text().split()] if j.with_suffix(".t").exists() else []
    top = ", ".join(f"{n}={v['total_us']/1000:.2f}/{v['runs']}" for n, v in sorted(k.items(), key=lambda kv: -kv[1]["total_us"])[:6])
    print(f"{j.stem}: kernels {tot/1000:.2f} ms; -t {[round(t/1000,1) for t in ts]}; {top}")
