"""The benchmark report: every program of the suite on its paper datasets as moderate flattening (MF), untuned
incremental flattening (IF), tuned incremental flattening (AIF), numpy on the CPU and, where a port exists, JAX,
side by side with real Futhark's figures; a Markdown table and a bar chart of speedups over MF (the layout of
the PPoPP'19 paper's Figure 8).

    python futhark_examples/report.py run [PROGRAM ...] [--out DIR] [-d DEVICE] [--parts mf,if,aif,numpy,jax]
                                          [--tune-only]
    python futhark_examples/report.py guards PROGRAM [--out DIR] [-d DEVICE]
    python futhark_examples/report.py render [--out DIR] [--markdown FILE] [--chart FILE] [--force]

`run` measures; each (program, part) is saved as DIR/PROGRAM.PART.json as soon as it is done and skipped when
that file exists, so a run that is cut off resumes where it stopped. MF, IF and AIF are timed by `incflat bench`
(futhark bench's methodology and JSON); AIF is the program tuned by `incflat autotune` on its training
datasets (tag `train`); `--tune-only` writes the tuning files and times nothing, so that several programs can
be tuned at once and timed alone afterwards. numpy and JAX are timed here, after a warm-up, as the mean of RUNS
calls (numpy's first call alone where it takes seconds). `guards` runs the tuned program once per paper dataset
with `-P` and keeps its guard records (which version each dataset took: the paper's Figure 7) in
DIR/PROGRAM.guards.txt. `render` writes the table and the chart from DIR.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import statistics
import subprocess
import sys
import time

import futhark_data
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import reference  # noqa: E402

PARTS = ("mf", "if", "aif", "numpy", "jax")
RUNS = 10
# Real Futhark 0.24.3 (`futhark opencl`) on an NVIDIA H200, median `-t` of 10 runs in µs, on the same shapes:
# (default, best version forced). From the issue that asked for this suite (issue 15).
FUTHARK = {
    ("locvolcalib", "small"): (12253, 12217.5), ("locvolcalib", "medium"): (8316.5, 8396.5),
    ("locvolcalib", "large"): (102418, 102376),
    ("optionpricing", "D1"): (815.5, 924.5), ("optionpricing", "D2"): (2139.5, 2161.5),
    ("heston32", "1062"): (7606.5, 7615), ("heston32", "10000"): (10810, 10594.5),
    ("backprop", "D1"): (97.5, 99), ("backprop", "D2"): (585, 582),
    ("lavamd", "D1"): (174, 173.5), ("lavamd", "D2"): (36.5, 36),
    ("nw", "D1"): (3022.5, 3020), ("nw", "D2"): (1438, 1429),
    ("nn", "D1"): (3776, 3776),
    ("nn_batch", "D1"): (3211080, 3210350), ("nn_batch", "D2"): (685.5, 678),
    ("srad", "D1"): (1772, 1772),
    ("srad_batch", "D1"): (2743, 2635.5), ("srad_batch", "D2"): (2699.5, 341),
    ("pathfinder", "D1"): (429.5, 429.5),
    ("pathfinder_batch", "D1"): (402.5, 425.5), ("pathfinder_batch", "D2"): (44.5, 44),
    ("lud", "64"): (157, 155), ("lud", "256"): (863, 815), ("lud", "1024"): (3599.5, 3551),
    ("lud", "2048"): (11500, 8104.5),
}


def paper_datasets(program: str) -> list:
    """The program's paper datasets ([] for a program of the suite not written yet)."""
    try:
        return [d for d in reference.datasets(program) if "paper" in d.tags]
    except ModuleNotFoundError:
        return []


def incflat(*args: str, failed_ok: bool = False) -> None:
    """Runs an incflat command; `failed_ok`: exit status 1 (some dataset failed, and said so) is a result."""
    command = [sys.executable, "-m", "incflat", *args]
    print("$", " ".join(command[2:]), flush=True)
    status = subprocess.run(command).returncode
    if status != 0 and not (failed_ok and status == 1):
        raise SystemExit(f"incflat {args[0]} ended with exit status {status}")


MAX_SECONDS = 60.0  # the convergence phase's limit per dataset (--max-seconds)
TUNING_RUNS = 5  # incflat autotune's runs per measurement (--tuning-runs)


def bench(program: str, out: pathlib.Path, device: str | None, *options: str) -> None:
    """`incflat bench` on the paper datasets (training and CI datasets excluded)."""
    device_options = ["-d", device] if device else []
    incflat("bench", *options, *device_options, "--exclude-case", "ci", "--exclude-case", "train",
            "--convergence-max-seconds", str(MAX_SECONDS), "--json", str(out), str(reference.source(program)),
            failed_ok=True)


def run_incflat_part(program: str, part: str, out: pathlib.Path, device: str | None,
                     tune_only: bool = False) -> None:
    if part == "mf":
        bench(program, out, device, "--flattening=moderate", "--no-tuning")
    elif part == "if":
        bench(program, out, device, "--no-tuning")
    else:  # aif: tuned on the training datasets; the tuning file is kept with the results
        tuning = out.with_suffix(".tuning")
        if not tuning.exists():
            device_options = [f"--pass-option=-d{device}"] if device else []
            incflat("autotune", *device_options, "--exclude-case", "ci", "--exclude-case", "paper",
                    "-r", str(TUNING_RUNS), str(reference.source(program)))
            written = reference.source(program).with_name(reference.source(program).name + ".tuning")
            tmp = tuning.with_suffix(".tmp")
            tmp.write_bytes(written.read_bytes())
            os.replace(tmp, tuning)
        if not tune_only:
            bench(program, out, device, "--tuning", str(tuning))


def time_calls(call, runs: int = RUNS, long_call_s: float = 2.0) -> list[float]:
    """µs of each of `runs` calls, after one warm-up call. numpy compiles nothing: a first call that takes more
    than `long_call_s` is the measurement itself (LocVolCalib's large dataset takes minutes)."""
    start = time.perf_counter()
    call()
    first = (time.perf_counter() - start) * 1e6
    if first > long_call_s * 1e6:
        return [first]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e6)
    return times


def read_inputs(path: pathlib.Path) -> list:
    """A data file's values as the references take them (scalars as numpy scalars, not 0-d arrays)."""
    with open(path, "rb") as f:
        return [v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v for v in futhark_data.load(f)]


def run_python_part(program: str, part: str) -> dict:
    """futhark bench's JSON shape for numpy (the reference itself) or the JAX port."""
    datasets = {}
    if part == "jax":
        import jax
        import jax_ports
        if program not in jax_ports.PORTED:
            return {}
        port = jax_ports.port(program).run
    for d in paper_datasets(program):
        in_path, _ = reference.ensure(program, d.name)
        inputs = read_inputs(in_path)
        if part == "numpy":
            mod = reference.module(program)
            times = time_calls(lambda: mod.reference(*inputs), runs=3)
        else:
            device_inputs = [jax.device_put(v) for v in inputs]
            times = time_calls(lambda: jax.block_until_ready(port(*device_inputs)), long_call_s=math.inf)
        datasets[d.name] = {"runtimes": times}
    return {str(reference.source(program)): {"datasets": datasets}}


def cmd_run(args) -> int:
    global MAX_SECONDS, TUNING_RUNS
    MAX_SECONDS, TUNING_RUNS = args.max_seconds, args.tuning_runs
    args.out.mkdir(parents=True, exist_ok=True)
    parts = args.parts.split(",")
    for part in parts:
        if part not in PARTS:
            raise SystemExit(f"--parts: unknown part {part!r} (known: {', '.join(PARTS)})")
    if args.tune_only:
        parts = [p for p in parts if p == "aif"]
    for program in args.programs or reference.PROGRAMS:
        if not paper_datasets(program):
            print(f"{program}: not in the suite yet", flush=True)
            continue
        for d in reference.datasets(program):
            if "ci" not in d.tags:
                reference.ensure(program, d.name)
        for part in parts:
            out = args.out / f"{program}.{part}.json"
            if out.exists():
                continue
            start = time.perf_counter()
            if part in ("mf", "if", "aif"):
                try:
                    run_incflat_part(program, part, out, args.device, args.tune_only)
                except SystemExit as e:  # reported; the other programs and parts still run
                    print(f"{program} {part}: {e}", flush=True)
                    continue
            else:
                result = run_python_part(program, part)
                if result:
                    tmp = out.with_suffix(".tmp")
                    tmp.write_text(json.dumps(result, indent=1))
                    os.replace(tmp, out)
            print(f"{program} {part}: {time.perf_counter() - start:.0f} s", flush=True)
    return 0


def cmd_guards(args) -> int:
    """The tuned program's -P guard records on each paper dataset, in DIR/PROGRAM.guards.txt."""
    from incflat.compiled import compile_cached
    tuning = args.out / f"{args.program}.aif.tuning"
    if not tuning.exists():
        raise SystemExit(f"{tuning}: no tuning file (run `report.py run {args.program} --parts aif` first)")
    compiled = compile_cached(reference.source(args.program))
    device_options = ["-d", args.device] if args.device else []
    sections = []
    for d in paper_datasets(args.program):
        in_path, _ = reference.ensure(args.program, d.name)
        with open(in_path, "rb") as stdin:
            done = subprocess.run([sys.executable, str(compiled), "--tuning", str(tuning), "-P", *device_options],
                                  stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{args.program} {d.name}: exit status {done.returncode}\n{done.stderr}")
        sections.append(f"== {args.program} {d.name} ({tuning.name})\n{done.stderr}")
    text = "\n".join(sections)
    (args.out / f"{args.program}.guards.txt").write_text(text)
    print(text)
    return 0


# ---- rendering ----

def mean_ci(runtimes: list[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% confidence interval (Student's t)."""
    from scipy import stats
    mean = statistics.fmean(runtimes)
    if len(runtimes) < 2:
        return mean, math.nan
    sem = statistics.stdev(runtimes) / math.sqrt(len(runtimes))
    return mean, sem * stats.t.ppf(0.975, len(runtimes) - 1)


def load_results(out: pathlib.Path) -> dict:
    """(program, dataset, part) -> (mean µs, CI half-width), or an error string."""
    results = {}
    for program in reference.PROGRAMS:
        for part in PARTS:
            path = out / f"{program}.{part}.json"
            if not path.exists():
                continue
            for entries in json.loads(path.read_text()).values():
                for name, value in entries["datasets"].items():
                    dataset = name.strip('"')
                    results[program, dataset, part] = (mean_ci(value["runtimes"]) if isinstance(value, dict)
                                                       else str(value))
    return results


def cell(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, str):
        return "failed"
    mean, half = value
    return f"{mean:,.0f} ± {half:,.0f}" if not math.isnan(half) else f"{mean:,.0f}"


def ratio(a, b) -> str:
    if not isinstance(a, tuple) or not isinstance(b, tuple):
        return "–"
    return f"{a[0] / b[0]:.2f}"


def render_table(results: dict) -> str:
    head = ("| program | dataset | Futhark default (H200) | MF | IF | AIF | numpy (CPU) | JAX | AIF ÷ Futhark | MF ÷ AIF "
            "| IF ÷ AIF |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for program in reference.PROGRAMS:
        for d in paper_datasets(program):
            got = {part: results.get((program, d.name, part)) for part in PARTS}
            futhark = FUTHARK.get((program, d.name))
            fut = (futhark[0], math.nan) if futhark else None
            lines.append(f"| {program} | {d.name} | {cell(fut)} | " + " | ".join(cell(got[p]) for p in PARTS)
                         + f" | {ratio(got['aif'], fut)} | {ratio(got['mf'], got['aif'])} | "
                         f"{ratio(got['if'], got['aif'])} |")
    return "\n".join(lines) + "\n"


def render_chart(results: dict, path: pathlib.Path) -> None:
    """Speedups over MF per program and dataset (IF, AIF, JAX, Futhark's default), as the paper's Figure 8."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels, series = [], {"IF": [], "AIF": [], "JAX": [], "Futhark default (H200)": []}
    for program in reference.PROGRAMS:
        for d in paper_datasets(program):
            mf = results.get((program, d.name, "mf"))
            if not isinstance(mf, tuple):
                continue
            labels.append(f"{program} {d.name}")
            futhark = FUTHARK.get((program, d.name))
            for name, value in (("IF", results.get((program, d.name, "if"))),
                                ("AIF", results.get((program, d.name, "aif"))),
                                ("JAX", results.get((program, d.name, "jax"))),
                                ("Futhark default (H200)", (futhark[0], 0) if futhark else None)):
                series[name].append(mf[0] / value[0] if isinstance(value, tuple) else 0)
    fig, ax = plt.subplots(figsize=(max(8, 0.7 * len(labels)), 4.5))
    width = 0.8 / len(series)
    for k, (name, values) in enumerate(series.items()):
        ax.bar([i + k * width for i in range(len(labels))], values, width, label=name)
    ax.axhline(1, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("speedup over moderate flattening (MF)")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))], labels, fontsize=7, rotation=40,
                  ha="right", rotation_mode="anchor")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)


def cmd_render(args) -> int:
    results = load_results(args.out)
    if not results:
        raise SystemExit(f"report.py render: no results in {args.out} (PROGRAM.PART.json files of `report.py run`)")
    for path in (args.markdown, args.chart):
        if path is not None and path.exists() and not args.force:
            raise SystemExit(f"report.py render: {path} exists (pass --force to replace it)")
    table = render_table(results)
    if args.markdown:
        tmp = args.markdown.with_name(args.markdown.name + ".tmp")
        tmp.write_text(table)
        os.replace(tmp, args.markdown)
    else:
        print(table)
    if args.chart:
        tmp = args.chart.with_name(args.chart.stem + ".tmp" + args.chart.suffix)  # matplotlib reads the suffix
        render_chart(results, tmp)
        os.replace(tmp, args.chart)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="measure (resumable)")
    p.add_argument("programs", nargs="*", metavar="PROGRAM")
    p.add_argument("--out", type=pathlib.Path, default=HERE / "report")
    p.add_argument("-d", "--device", help="OpenCL device name substring")
    p.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated (default: {','.join(PARTS)})")
    p.add_argument("--max-seconds", type=float, default=MAX_SECONDS,
                   help=f"limit of incflat bench's convergence phase per dataset (default {MAX_SECONDS:.0f})")
    p.add_argument("--tuning-runs", type=int, default=TUNING_RUNS,
                   help=f"incflat autotune's timed runs per measurement (default {TUNING_RUNS})")
    p.add_argument("--tune-only", action="store_true",
                   help="only write the AIF tuning files (tuned on the training datasets), time nothing")
    p.set_defaults(fn=cmd_run)
    p = sub.add_parser("guards", help="the tuned program's -P guard records on each paper dataset")
    p.add_argument("program", metavar="PROGRAM")
    p.add_argument("--out", type=pathlib.Path, default=HERE / "report")
    p.add_argument("-d", "--device", help="OpenCL device name substring")
    p.set_defaults(fn=cmd_guards)
    p = sub.add_parser("render", help="write the table and the chart")
    p.add_argument("--out", type=pathlib.Path, default=HERE / "report")
    p.add_argument("--markdown", type=pathlib.Path, help="write the table here (default: print it)")
    p.add_argument("--chart", type=pathlib.Path, help="write the bar chart here (PNG)")
    p.add_argument("--force", action="store_true", help="replace the table and chart files if they exist")
    p.set_defaults(fn=cmd_render)
    args = ap.parse_args(argv)
    named = list(getattr(args, "programs", [])) + ([args.program] if hasattr(args, "program") else [])
    for program in named:
        if program not in reference.PROGRAMS:
            ap.error(f"no benchmark program {program!r}")
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
