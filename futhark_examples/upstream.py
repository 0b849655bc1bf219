"""futhark-benchmarks as written, compiled by incflat and timed beside real Futhark's figures.

    python futhark_examples/upstream.py run FB_DIR --anchors DIR [--out DIR] [PROGRAM ...] [-d DEVICE]
                                        [--parts untuned,tuned] [--tune-seconds N] [--small] [--timeout S]
                                        [--backend pyopencl|opencl]
    python futhark_examples/upstream.py render [--out DIR] [--markdown FILE]

FB_DIR is a checkout of futhark-benchmarks (github.com/diku-dk/futhark-benchmarks); nothing of it is copied into
this project: every file this script writes goes under --out (default: TMPDIR/incflat-upstream). The anchors
folder (--anchors) holds one `futhark-*.json` (real Futhark's figures: for each program its `file` inside FB_DIR
and, for each dataset, `default_us`, the median µs of its default thresholds) and `inputs.py`, which writes the
datasets' inputs (`inputs.py OUTDIR PROGRAM ... [--small]` writes OUTDIR/PROGRAM-DATASET.in).

`run` does, for each program of the anchors (or those named):

1. compile: `incflat compile --backend=B FB_DIR/FILE -o OUT/PROGRAM` (--backend, default incflat's own: opencl,
   the native executable, where a C compiler is found; with pyopencl, the Python program OUT/PROGRAM.py), from
   the file's folder, so that the compiled program's error
   locations name the file alone. A program that does not compile is recorded with the error's first line
   and skipped. The anchors' programs were compiled without some attributes (REMOVED_ATTRIBUTES: LocVolCalib's
   `#[incremental_flattening(only_inner)]`): such a program is compiled from an edited copy without them
   (OUT/edited/), and compiled as written too, to note whether incflat rejects, ignores or honours them.
2. inputs: `inputs.py OUT/inputs PROGRAM ...` (with --small: `inputs.py OUT/inputs-small PROGRAM ... --small`, for
   a smoke run on a CPU).
3. untuned, per dataset: `OUT/PROGRAM.py -e main -r 10 -t TIMES -b < INPUT` as Futhark's executables are run,
   the median of the 10 runs; then one profiled invocation, `-r 10 -t TIMES -P --profile-json FILE`, whose
   `kernels` ({name: {runs, total_us}}, totals over the timed runs, the runtime's copy kernels included), `runs`
   and `transfers` give the kernels' µs per run, launches per run, host µs per launch ((the mean runtime of the
   profiled invocation's runs less the kernels' µs per run) / launches per run: both from one invocation, as a
   host's speed moves between invocations) and host-device array bytes and arrays per run. Where the profile
   does not say `runs`, its totals are taken to cover the 10 runs asked for; without `transfers`, bytes and
   arrays are `–`.
4. tuned, leave-one-out, as the PPoPP'19 paper's autotuner trains on other datasets than the ones reported: a
   program of two or more timed datasets is tuned once per dataset D, on its other timed datasets (the inputs of
   2.), and D's tuned figure is that tuned program's, timed on D (so n datasets cost n tunings). A program of one
   timed dataset is tuned once, on the inputs of `inputs.py --small` (OUT/inputs-small: other shapes than the
   timed one), the records and the table saying so. `incflat autotune` tunes a program on the datasets of its own
   `-- ==` block and writes PROG.fut.tuning and the tuned program beside the .fut file; futhark-benchmarks'
   blocks name data files the checkout does not hold, and nothing may be written into FB_DIR. So the program's
   source is copied to OUT/tuned/PROGRAM-without-D/PROGRAM.fut (one dataset: OUT/tuned/PROGRAM-small-inputs/)
   with its own blocks disabled (their `==` lines become plain comments) and a block appended whose cases are the
   training datasets (named as the anchors name them; small-DATASET for --small's inputs). `incflat autotune
   --no-moderate --stop-after N` (--tune-seconds, default 75, per tuning) tunes it; the program it writes beside
   (OUT/tuned/PROGRAM-without-D/PROGRAM: the same code, the tuned values baked in) is timed and profiled on D as
   in 3. Its store (PROGRAM.fut.tuning.db, beside) makes an interrupted tuning resume. With --small, the same
   leave-one-out on the small inputs, training and timed alike (a program of one dataset is then tuned on the
   input it is timed on): a smoke run of the machinery, not a measurement.

Each result is saved as soon as it is done (OUT/PROGRAM.compile.json, OUT/PROGRAM.without-D.tuning.json or
OUT/PROGRAM.tuning.json, OUT/PROGRAM.DATASET.PART.json, a tuned one naming its training datasets) and skipped when
its file exists, so that a run that is cut off resumes where it stopped; a failure is a result too (delete its
file to try again). An --out folder holds runs of one kind of inputs and of tuning: --small and full-size results
are never mixed, nor this tuning's with those of the earlier one tuning per program on --small's inputs, nor
the results of two backends.

`render` writes a Markdown table (to --markdown, else stdout) of every dataset: Futhark's default µs, incflat's
untuned and tuned median µs and their ratios to Futhark's, the tuned kernels' µs per run and its ratio to
Futhark's, and launches per run, host µs per launch and host-device bytes per run (of the tuned program; of the
untuned one, marked †, where no tuned run exists); then the geometric means of untuned ÷ Futhark and tuned ÷
Futhark over the datasets that ran, what each dataset's tuned program was tuned on ("lud 2048: tuned on 64, 256,
1024"), the programs that did not compile and the runs that failed. results.json, beside the table (or in
--out), holds it all.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

from incflat.files import atomic_write
from incflat.ir.runtime.values import read_values, type_name

PARTS = ("untuned", "tuned")
RUNS = 10  # -r of every timed and profiled invocation, as the anchors' figures were taken
TUNE_SECONDS = 75.0
TIMEOUT = 1200.0  # seconds per program invocation (10 runs of the largest dataset on a slow device)
DEFAULT_OUT = pathlib.Path(tempfile.gettempdir()) / "incflat-upstream"
# The anchors' programs were compiled without these attributes (the anchors JSON's "about" says so).
REMOVED_ATTRIBUTES = {"LocVolCalib": ("#[incremental_flattening(only_inner)]",)}
DISABLED_BLOCK = "-- (a test block of futhark-benchmarks was here: its data files are not in this folder)"


class Failed(Exception):
    """A step that failed: its message is the result."""


# ---- files ----

def save_json(path: pathlib.Path, value) -> None:
    atomic_write(path, (json.dumps(value, indent=1, ensure_ascii=False) + "\n").encode())


def read_json(path: pathlib.Path):
    return json.loads(path.read_text(encoding="utf-8"))


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else "(no message)"


def load_anchors(folder: pathlib.Path) -> tuple[pathlib.Path, dict]:
    """The anchors folder's figures file and its contents; a folder without one is a usage error."""
    if not folder.is_dir():
        raise SystemExit(f"upstream.py: --anchors {folder}: not a folder")
    found = sorted(folder.glob("futhark-*.json"))
    if len(found) != 1:
        what = "no futhark-*.json" if not found else f"{len(found)} futhark-*.json files"
        raise SystemExit(f"upstream.py: --anchors {folder}: holds {what} (one file of real Futhark's figures "
                         f"is expected)")
    if not (folder / "inputs.py").is_file():
        raise SystemExit(f"upstream.py: --anchors {folder}: holds no inputs.py")
    try:
        anchors = read_json(found[0])
        well_formed = all(isinstance(entry["file"], str) and isinstance(entry["datasets"], dict)
                          for entry in anchors["programs"].values())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        well_formed = False
    if not well_formed:
        raise SystemExit(f"upstream.py: --anchors {folder}: {found[0].name} is not a file of Futhark's figures "
                         f"(a 'programs' map of 'file' and 'datasets')")
    return found[0], anchors


def input_folder(out: pathlib.Path, small: bool) -> pathlib.Path:
    return out / ("inputs-small" if small else "inputs")


def result_path(out: pathlib.Path, program: str, dataset: str, part: str) -> pathlib.Path:
    return out / f"{program}.{dataset}.{part}.json"


def describe_values(path: pathlib.Path) -> str:
    """A data file's values as the anchors JSON spells inputs: `i64[]=1000`, `f32[64, 64]`."""
    with open(path, "rb") as f:
        values = read_values(f)
    described = []
    for v in values:
        prim = type_name(v).lstrip("[]")
        shape = getattr(v, "shape", ())
        described.append(f"{prim}[]={v.item()}" if not shape else f"{prim}[{', '.join(map(str, shape))}]")
    return ", ".join(described)


# ---- compiling ----

def incflat_compile(source: pathlib.Path, output: pathlib.Path, backend: str) -> str | None:
    """`incflat compile`, run from the source's folder; the error's first line, or None."""
    done = subprocess.run([sys.executable, "-m", "incflat", "compile", f"--backend={backend}", source.name, "-o",
                           str(output.resolve())], cwd=source.parent, capture_output=True, text=True)
    return None if done.returncode == 0 else first_line(done.stderr or done.stdout)


def compile_program(program: str, entry: dict, index: int, fb_dir: pathlib.Path, out: pathlib.Path,
                    backend: str) -> dict:
    source = fb_dir / entry["file"]
    record = {"program": program, "file": entry["file"], "index": index, "datasets": entry["datasets"],
              "source": str(source), "compiled": None, "error": None, "notes": []}
    if not source.is_file():
        record["error"] = f"{source}: no such file in FB_DIR"
        return record
    suffix = ".py" if backend == "pyopencl" else ""
    compiled = out / f"{program}{suffix}"
    text = source.read_text(encoding="utf-8")
    removed = [a for a in REMOVED_ATTRIBUTES.get(program, ()) if a in text]
    if not removed:
        record["error"] = incflat_compile(source, compiled, backend)
    else:  # the anchors' program: compiled from an edited copy; as written only to say what incflat does with it
        edited = out / "edited" / source.name
        edited.parent.mkdir(parents=True, exist_ok=True)
        for attribute in removed:
            text = text.replace(attribute, "")  # the line stays, so that locations do not move
        edited.write_text(text, encoding="utf-8")
        record["source"] = str(edited)
        record["error"] = incflat_compile(edited, compiled, backend)
        as_written = out / "edited" / f"{program}.as-written{suffix}"
        rejected = incflat_compile(source, as_written, backend)
        names = " ".join(removed)
        if rejected:
            note = f"incflat rejects {names} ({rejected}): compiled from OUT/edited/{source.name}, without it"
        elif record["error"]:
            note = f"incflat compiles the program with {names}, as written, but not without it"
        elif as_written.read_bytes() == compiled.read_bytes():
            note = f"incflat ignores {names}: the program compiled as written is the same as without it"
        else:
            note = f"incflat honours {names}: compiled from OUT/edited/{source.name}, without it"
        record["notes"].append(note)
    if record["error"] is None:
        record["compiled"] = str(compiled)
    return record


# ---- inputs ----

def write_inputs(anchors_dir: pathlib.Path, folder: pathlib.Path, anchors: dict, programs: list[str],
                 small: bool) -> None:
    """inputs.py's files for the programs that lack some, in one call (it draws every program's values anyway)."""
    missing = [p for p in programs
               if any(not (folder / f"{p}-{d}.in").is_file() for d in anchors["programs"][p]["datasets"])]
    if not missing:
        return
    command = [sys.executable, str(anchors_dir / "inputs.py"), str(folder), *missing] + (["--small"] if small else [])
    print("$ inputs.py", " ".join(command[2:]), flush=True)
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:  # each dataset then records its missing input
        print(f"inputs.py ended with exit status {done.returncode}: {last_line(done.stderr)}", flush=True)


# ---- timing ----

def run_program(executable: pathlib.Path, input_path: pathlib.Path, options: list[str], device: str | None,
                timeout: float) -> None:
    """One invocation of a compiled program, its results discarded; Failed with the error's last line."""
    if not input_path.is_file():
        raise Failed(f"no input file {input_path.name} (inputs.py wrote none)")
    with open(executable, "rb") as f:
        native = f.read(4) == b"\x7fELF"  # --backend=opencl's executable, else a Python program
    command = ([str(executable)] if native else [sys.executable, str(executable)]) + ["-e", "main", "-b", *options]
    command += ["-d", device] if device else []
    try:
        with open(input_path, "rb") as stdin:
            done = subprocess.run(command, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failed(f"timed out after {timeout:g} s (--timeout)") from None
    if done.returncode != 0:
        raise Failed(f"exit status {done.returncode}: {last_line(done.stderr)}")


def per_run(profile: dict, profiled_us: list) -> dict:
    """What a profile (--profile-json) says per timed run; `profiled_us`: the runtimes of its runs (-t), whose
    mean less the kernels' time per run is the host's, per launch: both from the one invocation."""
    kernels = profile.get("kernels", {})
    runs = profile.get("runs") or RUNS  # (a profile without `runs` covers the -r runs asked for)
    kernels_us = sum(k.get("total_us", 0) for k in kernels.values()) / runs
    launches = sum(k.get("runs", 0) for k in kernels.values()) / runs
    host_us = statistics.fmean(profiled_us) - kernels_us if profiled_us else None
    figures = {"profile_runs": profile.get("runs"), "kernels_us_per_run": kernels_us,
               "launches_per_run": launches,
               "host_us_per_launch": host_us / launches if launches and host_us is not None else None,
               "transfers": profile.get("transfers"), "bytes_per_run": None, "arrays_per_run": None,
               "kernels": kernels}
    transfers = profile.get("transfers")
    if isinstance(transfers, dict):
        ways = [transfers.get("to_device") or {}, transfers.get("from_device") or {}]
        figures["bytes_per_run"] = sum(w.get("bytes", 0) for w in ways) / runs
        figures["arrays_per_run"] = sum(w.get("arrays", 0) for w in ways) / runs
    return figures


def measure(executable: pathlib.Path, input_path: pathlib.Path, device: str | None, timeout: float) -> dict:
    """The median µs of RUNS timed runs, and the profile of RUNS more, per run."""
    with tempfile.TemporaryDirectory(prefix="upstream-") as tmp:
        times_file, profile_file = pathlib.Path(tmp, "times"), pathlib.Path(tmp, "profile.json")
        run_program(executable, input_path, ["-r", str(RUNS), "-t", str(times_file)], device, timeout)
        times = [float(t) for t in times_file.read_text().split()]
        if not times:
            raise Failed("the program wrote no runtimes (-t)")
        run_program(executable, input_path, ["-r", str(RUNS), "-t", str(times_file), "-P", "--profile-json",
                                             str(profile_file)], device, timeout)
        profile = read_json(profile_file)
        profiled = [float(t) for t in times_file.read_text().split()]
    return {"times_us": times, "median_us": statistics.median(times), **per_run(profile, profiled)}


def time_dataset(program: str, dataset: str, part: str, executable: pathlib.Path, compile_record: dict, args,
                 extra: dict | None = None, error: str | None = None) -> None:
    """A dataset's result for one part, saved when done; skipped where saved; `error` fails it (a failed tuning)."""
    path = result_path(args.out, program, dataset, part)
    if path.exists():
        return
    figures = compile_record["datasets"][dataset]
    record = {"program": program, "dataset": dataset, "part": part, "small": args.small,
              "futhark_default_us": figures.get("default_us"),
              "futhark_best_version_us": figures.get("best_version_us"), "error": error, **(extra or {})}
    if error is None:
        try:
            record.update(measure(executable, input_folder(args.out, args.small) / f"{program}-{dataset}.in",
                                  args.device, args.timeout))
        except Failed as e:
            record["error"] = str(e)
    save_json(path, record)
    shown = f"failed: {record['error']}" if record["error"] else f"{record['median_us']:,.0f} µs"
    print(f"{program} {dataset} {part}: {shown}", flush=True)


# ---- tuning ----

def held_out_of(dataset: str, datasets) -> str | None:
    """The dataset left out of the tuning that `dataset` is timed with: itself where the program has two or more
    timed datasets (leave-one-out), else None (the one tuning on inputs.py --small's inputs)."""
    return dataset if len(datasets) > 1 else None


def tuning_name(program: str, held_out: str | None) -> str:
    """The tuning's folder under OUT/tuned/."""
    return f"{program}-without-{held_out}" if held_out is not None else f"{program}-small-inputs"


def tuning_path(out: pathlib.Path, program: str, held_out: str | None) -> pathlib.Path:
    return out / (f"{program}.without-{held_out}.tuning.json" if held_out is not None else f"{program}.tuning.json")


IMPORT_LINE = re.compile(r'^(\s*import\s+")([^"]*)(".*)$')


def training_source(source_text: str, cases: dict[str, str], title: str, moved: str = ".") -> str:
    """The program with its own test blocks disabled and one of the training cases ({name: input path}) appended;
    its imports made relative to the copy's folder (`moved`: the original's folder, relative to the copy's)."""
    lines = [DISABLED_BLOCK if line.startswith("--") and line[2:].strip() == "==" else
             IMPORT_LINE.sub(lambda m: m.group(1) + os.path.normpath(os.path.join(moved, m.group(2))) + m.group(3),
                             line)
             for line in source_text.splitlines()]
    block = ["", f"-- Training datasets: {title}.", "-- =="]
    block += [f'-- "{name}" input @ {path}' for name, path in cases.items()]
    return "\n".join(lines + block) + "\n"


def tune(program: str, compile_record: dict, held_out: str | None, args) -> dict:
    """autotune on the training datasets: the program's timed datasets but `held_out` (leave-one-out), or, where
    held_out is None, inputs.py --small's; the record names them and the tuned program (or the failure)."""
    folder = args.out / "tuned" / tuning_name(program, held_out)
    folder.mkdir(parents=True, exist_ok=True)
    small = held_out is None or args.small
    inputs = input_folder(args.out, small)
    datasets = [d for d in compile_record["datasets"] if d != held_out]
    cases = {(d if held_out is not None else f"small-{d}"): d for d in datasets}
    source = "inputs.py --small" if small else "inputs.py"
    title = f"{source}'s {'datasets but ' + held_out if held_out is not None else 'inputs'}"
    record = {"program": program, "held_out": held_out, "training_inputs": source, "training": {},
              "tune_seconds": args.tune_seconds, "error": None, "tuned_program": str(folder / program),
              "tuning_file": str(folder / f"{program}.fut.tuning"), "log": str(folder / f"{program}.autotune.txt")}
    for case, d in cases.items():
        path = inputs / f"{program}-{d}.in"
        record["training"][case] = describe_values(path) if path.is_file() else None
    missing = [case for case, shape in record["training"].items() if shape is None]
    if missing:
        record["error"] = f"{source} wrote no training input for {', '.join(missing)}"
        return record
    fut = folder / f"{program}.fut"
    original = pathlib.Path(compile_record["source"])
    fut.write_text(training_source(original.read_text(encoding="utf-8"),
                                   {case: f"../../{inputs.name}/{program}-{d}.in" for case, d in cases.items()},
                                   title, os.path.relpath(original.resolve().parent, folder.resolve())),
                   encoding="utf-8")
    command = [sys.executable, "-m", "incflat", "autotune", f"--backend={args.backend}", "--no-moderate",
               "--stop-after", f"{args.tune_seconds:g}",
               *([f"--pass-option=-d{args.device}"] if args.device else []), fut.name]
    print(f"$ cd {folder} && incflat", " ".join(command[3:]), flush=True)
    with open(record["log"], "w", encoding="utf-8") as log:
        done = subprocess.run(command, cwd=folder, stdout=log, stderr=subprocess.STDOUT, text=True)
    log = pathlib.Path(record["log"]).read_text(encoding="utf-8")
    if done.returncode != 0:
        record["error"] = f"incflat autotune: exit status {done.returncode}: {last_line(log)}"
    stopped = [line for line in log.splitlines() if line.startswith("stopped early:")]
    record["stopped_early"] = stopped[-1].removeprefix("stopped early: ") if stopped else None
    return record


# ---- run ----

TUNING = "leave-one-out"  # settings.json's "tuning": how an --out folder's tuned results were trained


def check_settings(out: pathlib.Path, small: bool, backend: str) -> None:
    """An --out folder holds results of one kind of inputs, of one kind of tuning and of one backend, so that a
    resumed run never mixes them."""
    path = out / "settings.json"
    settings = read_json(path) if path.exists() else {"small": small, "backend": backend}
    if settings.get("small") != small:
        held = "--small" if settings.get("small") else "full-size"
        raise SystemExit(f"upstream.py run: --out {out}: holds results of {held} inputs; use another --out")
    if settings.get("backend", "pyopencl") != backend:
        raise SystemExit(f"upstream.py run: --out {out}: holds results of --backend "
                         f"{settings.get('backend', 'pyopencl')}; use another --out")
    if settings.get("tuning") != TUNING:
        if any(out.glob("*.tuning.json")):
            raise SystemExit(f"upstream.py run: --out {out}: holds tuned results of the earlier tuning (once per "
                             f"program, on inputs.py --small's inputs); use another --out, or delete its "
                             f"*.tuning.json, *.tuned.json and tuned/")
        settings["tuning"] = TUNING
        save_json(path, settings)


def cmd_run(args) -> int:
    if not args.fb_dir.is_dir():
        raise SystemExit(f"upstream.py run: FB_DIR {args.fb_dir}: not a folder")
    anchors_file, anchors = load_anchors(args.anchors)
    known = list(anchors["programs"])
    for program in args.programs:
        if program not in known:
            raise SystemExit(f"upstream.py run: no program {program!r} in {anchors_file.name} "
                             f"(known: {', '.join(known)})")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.backend is None:
        from incflat.codegen.cprogram import c_compiler
        args.backend = "opencl" if c_compiler() else "pyopencl"
    check_settings(args.out, args.small, args.backend)
    programs = args.programs or known
    compiled = []
    for program in programs:
        path = args.out / f"{program}.compile.json"
        if not path.exists():
            save_json(path, compile_program(program, anchors["programs"][program], known.index(program),
                                            args.fb_dir, args.out, args.backend))
        record = read_json(path)
        if record["error"]:
            print(f"{program}: did not compile: {record['error']}", flush=True)
        else:
            compiled.append((program, record))
            for note in record["notes"]:
                print(f"{program}: {note}", flush=True)
    names = [p for p, _ in compiled]
    write_inputs(args.anchors, input_folder(args.out, args.small), anchors, names, args.small)
    single = [p for p, record in compiled if len(record["datasets"]) < 2]  # tuned on inputs.py --small's inputs
    if "tuned" in args.parts and not args.small and single:
        write_inputs(args.anchors, input_folder(args.out, True), anchors, single, True)
    for program, record in compiled:
        if "untuned" in args.parts:
            for dataset in record["datasets"]:
                time_dataset(program, dataset, "untuned", pathlib.Path(record["compiled"]), record, args)
        if "tuned" not in args.parts:
            continue
        for dataset in record["datasets"]:
            if result_path(args.out, program, dataset, "tuned").exists():
                continue
            held_out = held_out_of(dataset, record["datasets"])
            path = tuning_path(args.out, program, held_out)
            if not path.exists():
                save_json(path, tune(program, record, held_out, args))
            tuning = read_json(path)
            extra = {"held_out": held_out, "training": list(tuning["training"]),
                     "training_inputs": tuning["training_inputs"], "tuned_program": tuning["tuned_program"]}
            time_dataset(program, dataset, "tuned", pathlib.Path(tuning["tuned_program"]), record, args, extra,
                         error=tuning["error"] and f"tuning failed: {tuning['error']}")
    return 0


# ---- render ----

def load_results(out: pathlib.Path) -> dict:
    """Everything under --out, by program in the anchors' order."""
    settings_path = out / "settings.json"
    compiles = sorted((read_json(p) for p in out.glob("*.compile.json")), key=lambda r: r["index"])
    if not compiles:
        raise SystemExit(f"upstream.py render: --out {out}: no results (PROGRAM.compile.json files of "
                         f"`upstream.py run`)")
    programs = {}
    for record in compiles:
        program = record["program"]
        tunings = [tuning_path(out, program, held_out) for held_out in (None, *record["datasets"])]
        programs[program] = {
            "compile": record, "tunings": [read_json(path) for path in tunings if path.exists()],
            "datasets": {d: {part: read_json(result_path(out, program, d, part))
                             for part in PARTS if result_path(out, program, d, part).exists()}
                         for d in record["datasets"]}}
    settings = read_json(settings_path) if settings_path.exists() else {}
    return {"small": settings.get("small", False), "programs": programs}


def ran(record: dict | None) -> bool:
    return bool(record) and not record.get("error") and record.get("median_us") is not None


def number(value, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def quotient(a, b) -> float | None:
    return a / b if a is not None and b else None


HEADER = ("| program | dataset | Futhark µs | untuned µs | untuned ÷ Futhark | tuned µs | tuned ÷ Futhark "
          "| tuned kernels µs | kernels ÷ Futhark | launches/run | host µs/launch | host-device bytes/run |")


def table_row(program: str, dataset: str, parts: dict) -> tuple[str, float | None, float | None]:
    """A dataset's row, and its untuned and tuned ratios to Futhark's default (None where it did not run)."""
    untuned, tuned = parts.get("untuned"), parts.get("tuned")
    futhark = next((r["futhark_default_us"] for r in (untuned, tuned) if r), None)

    def median(record):
        return "failed" if record and record.get("error") else number(record and record.get("median_us"))

    untuned_ratio = quotient(untuned["median_us"], futhark) if ran(untuned) else None
    tuned_ratio = quotient(tuned["median_us"], futhark) if ran(tuned) else None
    kernels = tuned["kernels_us_per_run"] if ran(tuned) else None
    launch_source, mark = (tuned, "") if ran(tuned) else ((untuned, " †") if ran(untuned) else (None, ""))

    def launch_figure(key: str, digits: int) -> str:
        value = launch_source.get(key) if launch_source else None
        return "–" if value is None else number(value, digits) + mark

    cells = [program, dataset, number(futhark), median(untuned), number(untuned_ratio, 2), median(tuned),
             number(tuned_ratio, 2), number(kernels), number(quotient(kernels, futhark), 2),
             launch_figure("launches_per_run", 1), launch_figure("host_us_per_launch", 1),
             launch_figure("bytes_per_run", 0)]
    return "| " + " | ".join(cells) + " |", untuned_ratio, tuned_ratio


TUNED_ON = ("tuned on (a program of two or more datasets is tuned once per dataset, on its other datasets, and "
            "timed on the one left out; a program of one, on inputs.py --small's inputs)")


def tuned_on(program: str, datasets: list[str], tuning: dict) -> str:
    """A tuning's line: the dataset it is timed on and the datasets it was tuned on."""
    held_out = tuning.get("held_out")
    stopped = f"; autotune stopped early: {tuning['stopped_early']}" if tuning.get("stopped_early") else ""
    failed = f"; failed: {tuning['error']}" if tuning.get("error") else ""
    if held_out is not None:
        small = " (inputs.py --small's)" if tuning["training_inputs"].endswith("--small") else ""
        return f"{program} {held_out}: tuned on {', '.join(tuning['training'])}{small}{stopped}{failed}"
    shapes = ", ".join(f"{name} ({shape})" for name, shape in tuning["training"].items()) or "none"
    why = ", its only timed dataset" if len(datasets) == 1 else ""
    return f"{program} {', '.join(datasets)}: tuned on inputs.py --small's {shapes}{why}{stopped}{failed}"


def render(results: dict) -> tuple[str, dict]:
    """The Markdown table and its lines, and the summary for results.json."""
    rows, untuned_ratios, tuned_ratios, failures, not_compiled, notes, training = [], [], [], [], [], [], []
    for program, entry in results["programs"].items():
        record = entry["compile"]
        if record["error"]:
            not_compiled.append(f"{program} ({record['file']}): {record['error']}")
            continue
        notes += [f"{program}: {note}" for note in record["notes"]]
        training += [tuned_on(program, list(record["datasets"]), tuning) for tuning in entry["tunings"]]
        for dataset, parts in entry["datasets"].items():
            row, untuned_ratio, tuned_ratio = table_row(program, dataset, parts)
            rows.append(row)
            untuned_ratios += [untuned_ratio] if untuned_ratio else []
            tuned_ratios += [tuned_ratio] if tuned_ratio else []
            failures += [f"{program} {dataset} {part}: {r['error']}" for part, r in parts.items() if r.get("error")]
    untuned_mean, tuned_mean = (statistics.geometric_mean(r) if r else None for r in (untuned_ratios, tuned_ratios))
    lines = [HEADER, "|" + "---|" * (HEADER.count("|") - 1), *rows, ""]
    if results["small"]:
        lines.append("Inputs of `inputs.py --small` (a smoke run): Futhark's figures are of the full-size inputs, "
                     "so the ratios say nothing of speed.")
    lines += [f"- geometric mean of untuned ÷ Futhark over the {len(untuned_ratios)} datasets that ran: "
              f"{number(untuned_mean, 2)}",
              f"- geometric mean of tuned ÷ Futhark over the {len(tuned_ratios)} datasets that ran: "
              f"{number(tuned_mean, 2)}",
              "- launches/run, host µs/launch and bytes/run are the tuned program's; † marks the untuned "
              "program's, where no tuned run exists"]
    for title, items in ((TUNED_ON, training),
                         ("did not compile", not_compiled), ("failed", failures), ("notes", notes)):
        if items:
            lines += ["", f"{title}:", *[f"- {item}" for item in items]]
    summary = {"geometric_mean_untuned_over_futhark": untuned_mean, "untuned_datasets": len(untuned_ratios),
               "geometric_mean_tuned_over_futhark": tuned_mean, "tuned_datasets": len(tuned_ratios),
               "not_compiled": not_compiled, "failed": failures}
    return "\n".join(lines) + "\n", summary


def cmd_render(args) -> int:
    results = load_results(args.out)
    table, summary = render(results)
    if args.markdown:
        atomic_write(args.markdown, table.encode())
    else:
        print(table, end="")
    combined = (args.markdown.parent if args.markdown else args.out) / "results.json"
    save_json(combined, {**summary, **results})
    return 0


# ---- the command line ----

def parts_option(text: str) -> tuple[str, ...]:
    parts = tuple(p for p in text.split(",") if p)
    unknown = [p for p in parts if p not in PARTS]
    if unknown or not parts:
        raise argparse.ArgumentTypeError(f"{text!r}: the parts are {','.join(PARTS)} (comma-separated)")
    return parts


def seconds_option(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"{text!r}: a number of seconds above 0 is expected")
    return value


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="upstream.py", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="compile, tune and time (resumable)")
    p.add_argument("fb_dir", metavar="FB_DIR", type=pathlib.Path, help="a futhark-benchmarks checkout")
    p.add_argument("programs", nargs="*", default=[], metavar="PROGRAM", help="programs of the anchors (default: all)")
    p.add_argument("--anchors", metavar="DIR", type=pathlib.Path, required=True,
                   help="the folder of Futhark's figures (futhark-*.json) and inputs.py")
    p.add_argument("--out", metavar="DIR", type=pathlib.Path, default=DEFAULT_OUT, help=f"default {DEFAULT_OUT}")
    p.add_argument("-d", "--device", help="OpenCL device name substring, passed to the compiled programs")
    p.add_argument("--parts", type=parts_option, default=PARTS, help=f"default {','.join(PARTS)}")
    p.add_argument("--tune-seconds", type=seconds_option, default=TUNE_SECONDS,
                   help=f"autotune's --stop-after per tuning (default {TUNE_SECONDS:g})")
    p.add_argument("--small", action="store_true", help="inputs.py --small's inputs: a smoke run on a CPU")
    p.add_argument("--backend", choices=("pyopencl", "opencl"),
                   help="incflat compile's and autotune's --backend (default: opencl where a C compiler is "
                   "found, as incflat compile chooses, else pyopencl)")
    p.add_argument("--timeout", type=seconds_option, default=TIMEOUT,
                   help=f"seconds per program invocation (default {TIMEOUT:g})")
    p.set_defaults(fn=cmd_run)
    p = sub.add_parser("render", help="write the table and results.json")
    p.add_argument("--out", metavar="DIR", type=pathlib.Path, default=DEFAULT_OUT, help=f"default {DEFAULT_OUT}")
    p.add_argument("--markdown", metavar="FILE", type=pathlib.Path, help="write the table here (default: print it)")
    p.set_defaults(fn=cmd_render)
    return ap


def main(argv=None) -> int:
    ap = parser()
    # (argparse gives `run FB_DIR --anchors DIR PROGRAM ...`'s programs after an option back as unknown)
    args, rest = ap.parse_known_args(argv)
    if rest and (args.command != "run" or any(r.startswith("-") for r in rest)):
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "run":
        args.programs = [*args.programs, *rest]
    try:
        return args.fn(args)
    except OSError as e:
        raise SystemExit(f"upstream.py {args.command}: {e}") from None


if __name__ == "__main__":
    sys.exit(main())
