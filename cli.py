"""The `incflat` command: a thin driver over the compiler's pipeline (incflat.pipeline) and the tuner."""

import argparse
import errno
import os
import pathlib
import signal
import sys
import time

from incflat import __version__
from incflat import pipeline
from incflat.flatten import versions
from incflat.ir.errors import CompileError, format_error, not_a_file, read_source, source_of
from incflat.ir.verify import IRError
from incflat.ir.errors import ToolError
from incflat.codegen.program import is_compiled_program, program_text
from incflat.codegen import cprogram
from incflat.codegen.cprogram import is_native_program
from incflat.ir.runtime.tuning import option_int, option_seconds, option_seed
from incflat.tuner.command import add_run_options, clashing_outputs, option_problem, run_options_argv
from incflat.tuner.lock import tuning_lock
from incflat.files import PlannedFile, atomic_write, write_temporary
from incflat.tuner.writeback import tuning_file_problem, tuning_path_of


def read_program(path: pathlib.Path) -> str:
    return read_source(path)


def options_of(args) -> pipeline.Options:
    return pipeline.Options(flattening=getattr(args, "flattening", "incremental"),
                            checks=not getattr(args, "unsafe", False))


class UsageError(Exception):
    """A command line incflat refuses (exit status 2, as argparse's own errors)."""


class NotNative(ToolError):
    """--backend=opencl cannot print this program's host code in C yet (--backend=pyopencl can)."""


def check_output_path(out_path: pathlib.Path, fut_path: pathlib.Path, force: bool = False) -> None:
    """A compiled program may replace only a file incflat wrote (or, with force, any file but a .fut source)."""
    def refuse(why):
        raise UsageError(f"refusing to write the compiled program to {out_path}: {why}")
    if out_path.suffix == ".fut" or (out_path.exists() and fut_path.exists() and out_path.samefile(fut_path)):
        refuse("it is a Futhark source file")
    if out_path.is_dir():
        refuse("it is a directory")
    if out_path.exists() and not out_path.is_file():  # (a FIFO, a device: reading it to check it could block)
        refuse("it is not a regular file")
    if out_path.exists() and not force and not (is_compiled_program(out_path) or is_native_program(out_path)):
        refuse("the file exists and was not written by incflat (--force overwrites it)")


def compile_file(fut_path: pathlib.Path, out_path: pathlib.Path, options: pipeline.Options = pipeline.Options(),
                 verify: bool = None, force: bool = False, backend: str = "pyopencl") -> pathlib.Path:
    """Writes the executable compiled program (atomically, so a reader never sees half a program); the
    output path is checked first (check_output_path). backend "opencl": C over OpenCL, built with the system C
    compiler (codegen/cprogram.py)."""
    check_output_path(out_path, fut_path, force)
    if backend == "opencl":
        data = native_program(fut_path, out_path, options, verify)
    else:
        data = compiled_text(fut_path, options, verify)
    atomic_write(out_path, data, mode=0o755)
    return out_path


def native_program(fut_path: pathlib.Path, out_path: pathlib.Path, options: pipeline.Options = pipeline.Options(),
                   verify: bool = None) -> bytes:
    """The executable of --backend=opencl; what it cannot compile yet is a one-line error."""
    generated = pipeline.compile(read_program(fut_path), str(fut_path), verify_stages=verify, options=options)
    try:
        text = cprogram.program_text(generated)
    except cprogram.Unsupported as e:
        raise NotNative(f"{fut_path}: --backend=opencl cannot compile this program yet ({e}); "
                        "--backend=pyopencl can") from None
    try:
        from incflat.compiled import cache_dir
        return cprogram.build(text, out_path, cache_dir() / "native")
    except cprogram.BuildError as e:
        raise ToolError(f"{fut_path}: {e}") from None


def compiled_text(fut_path: pathlib.Path, options: pipeline.Options = pipeline.Options(),
                  verify: bool = None) -> bytes:
    generated = pipeline.compile(read_program(fut_path), str(fut_path), verify_stages=verify, options=options)
    return program_text(generated).encode()


def default_output(fut_path: pathlib.Path) -> pathlib.Path:
    return fut_path.with_suffix("")


def cmd_check(args) -> int:
    pipeline.compile(read_program(args.program), str(args.program), until="check", verify_stages=args.verify)
    return 0


def cmd_versions(args) -> int:
    text, name = read_program(args.program), str(args.program)
    if args.until:  # the IR after any stage, as `futhark dev` shows it
        print(pipeline.show(pipeline.compile(text, name, until=args.until, verify_stages=args.verify,
                                             options=options_of(args))), end="")
        return 0
    target = pipeline.compile(text, name, until="prune_unsupported", verify_stages=args.verify,
                              options=options_of(args))
    if args.dot:
        print(versions.to_dot(target), end="")
    elif args.json:
        print(versions.to_json(target))
    elif not target.funs:
        print(f"{name} has no entry points: nothing is compiled, so there are no versions")
    else:
        print(versions.render_text(target), end="")
    if args.stats:
        print(versions_stats(text, name, args.verify))
    return 0


def versions_stats(text: str, name: str, verify: bool = None) -> str:
    """Versions, kernels, thresholds, code size and compile time: incremental against moderate."""
    rows = {}
    for flattening in pipeline.FLATTENINGS:
        options = pipeline.Options(flattening=flattening)
        start = time.perf_counter()
        target = pipeline.compile(text, name, until="prune_unsupported", verify_stages=verify, options=options)
        generated = pipeline.run(target, "prune_unsupported", verify_stages=verify, options=options)
        seconds = time.perf_counter() - start
        counts = versions.stats(target)
        rows[flattening] = (counts["versions"], len(generated.kernels), counts["thresholds"], generated.code_size,
                            seconds)
    inc, mod = rows["incremental"], rows["moderate"]
    lines = [f"{'':<12} {'versions':>8} {'kernels':>8} {'thresholds':>10} {'code bytes':>11} {'compile s':>9}"]
    for flattening, (v, k, t, size, secs) in rows.items():
        lines.append(f"{flattening:<12} {v:>8} {k:>8} {t:>10} {size:>11} {secs:>9.3f}")
    if not target.funs:  # (the entry points are the same either way) no code either way, so no ratio to take
        lines.append("incremental / moderate: nothing to compare (the program has no entry points)")
    else:
        lines.append(f"incremental / moderate: {inc[1] / max(mod[1], 1):.1f}x kernels, {inc[3] / mod[3]:.2f}x "
                     f"code, {inc[4] / mod[4]:.1f}x compile time")
    return "\n".join(lines)


def cmd_compile(args) -> int:
    out = args.output or (default_output(args.program).with_suffix(".py") if args.library
                          else default_output(args.program))

    def write(backend: str) -> None:
        if args.library and backend == "opencl":
            native_library(args.program, out, options_of(args), verify=args.verify, force=args.force)
        else:
            compile_file(args.program, out, options_of(args), verify=args.verify, force=args.force, backend=backend)

    with_backend(args, write)
    return 0


def with_backend(args, write):
    """write(backend) with --backend's choice; without one, opencl where a C compiler is found, and pyopencl
    where none is or where the C backend cannot compile the program yet, with a one-line note saying so."""
    if args.backend is not None:
        return write(args.backend)
    if cprogram.c_compiler() is None:
        print("incflat: note: no C compiler found ($CC, or cc): writing a Python program (--backend=pyopencl)",
              file=sys.stderr)
        return write("pyopencl")
    try:
        return write("opencl")
    except NotNative as e:
        print(f"incflat: note: {e}: writing a Python program", file=sys.stderr)
        return write("pyopencl")


def native_library(fut_path: pathlib.Path, module: pathlib.Path, options: pipeline.Options = pipeline.Options(),
                   verify: bool = None, force: bool = False) -> None:
    """--backend=opencl --library: the shared library (libprog.so) with Futhark's C API, its header (prog.h) and the
    Python module over it (prog.py), written together."""
    from incflat.compiled import cache_dir
    from incflat.files import replace_together
    # (libprog.so: Python would import prog.so, beside prog.py, as an extension module)
    library, header = module.with_name(f"lib{module.stem}.so"), module.with_suffix(".h")
    check_output_path(module, fut_path, force)
    check_output_path(library, fut_path, force)
    if header.exists() and not force and not header.read_bytes().startswith(b"/* Futhark's C API of "):
        raise UsageError(f"refusing to write the header to {header}: the file exists and was not written by incflat "
                         "(--force overwrites it)")
    generated = pipeline.compile(read_program(fut_path), str(fut_path), verify_stages=verify, options=options)
    try:
        text = cprogram.program_text(generated)
        data = cprogram.build(text, library, cache_dir() / "native", library=True)
    except cprogram.Unsupported as e:
        raise NotNative(f"{fut_path}: --backend=opencl cannot compile this program yet ({e}); "
                        "--backend=pyopencl can") from None
    except cprogram.BuildError as e:
        raise ToolError(f"{fut_path}: {e}") from None
    try:
        replace_together([PlannedFile(library, data, 0o755),
                          PlannedFile(header, cprogram.header_text(generated, module.stem).encode(), 0o644),
                          PlannedFile(module, cprogram.module_text(generated, library.name).encode(), 0o644)])
    except OSError as e:
        raise ToolError(f"cannot write {e.filename}: {e.strerror}") from None


def backend(p) -> None:
    p.add_argument("--backend", choices=("pyopencl", "opencl"),
                   help="opencl (the default where a C compiler is found): a native executable, C over OpenCL "
                   "built with the system C compiler ($CC or cc); pyopencl: a Python program (numpy and pyopencl)")


def cmd_autotune(args) -> int:
    """Compiles into a temporary file beside the program, tunes that, and installs it with the tuned values
    when the tuning file is written (both together): a kill at any moment leaves both files as they were, or
    both new. The lock is taken first, so that a second tuner of the program refuses before compiling."""
    from incflat import tuner
    program = default_output(args.program)
    problem = option_problem(args) or clashing_outputs(args.program, program, args)
    if problem:
        raise UsageError(problem)
    check_output_path(program, args.program, args.force)
    with tuning_lock(args.program):
        problem = None if args.force else tuning_file_problem(tuning_path_of(args.program))
        if problem:  # (the tuner checks again; here before compiling) an output incflat refuses to write
            raise UsageError(problem)
        data = with_backend(args, lambda backend: native_program(args.program, program, verify=args.verify)
                            if backend == "opencl" else compiled_text(args.program, verify=args.verify))
        temporary = write_temporary(PlannedFile(program, data, 0o755))
        try:
            print(f"compiled {args.program}; {program} is replaced when tuning ends", flush=True)
            # (the tuner compiles the program with moderate flattening too, for its report, unless --no-moderate)
            return tuner.main([str(args.program), str(temporary), *run_options_argv(args)],
                              install_as=program, verify=args.verify)
        finally:
            temporary.unlink(missing_ok=True)


def cmd_test(args) -> int:
    from incflat.harness import run_tests
    summary = run_tests(args.files, device=args.device, interpreted=args.interpreter, verbose=args.verbose,
                        timeout=args.timeout, verify=args.verify, exclude=args.exclude_case)
    return 1 if summary.failed else 0


def cmd_bench(args) -> int:
    from incflat import bench
    if args.tuning is not None and not args.tuning.is_file():
        raise UsageError(f"--tuning {args.tuning}: no such file")
    if args.runs < 1:
        raise UsageError(f"--runs {args.runs}: must be at least 1")
    problem = bench.json_path_problem(args.json) if args.json is not None else None
    if problem:
        raise UsageError(f"--json {args.json}: {problem}")
    options = bench.Options(runs=args.runs, flattening=args.flattening, tuning=args.tuning,
                            use_tuning=not args.no_tuning, device=args.device, platform=args.platform,
                            entry=args.entry_point, exclude=tuple(args.exclude_case),
                            convergence=not args.no_convergence_phase,
                            convergence_max_seconds=args.convergence_max_seconds, json=args.json)
    results = bench.bench(args.files, options)
    return 1 if any(isinstance(r, str) for p in results.values() for r in p["datasets"].values()) else 0


PRIMITIVE_TYPES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64")


def cmd_dataset(args) -> int:
    from incflat.datasets import dataset_values, parse_bounds
    from incflat.ir.runtime.values import write_values
    bounds = {}
    for prim in PRIMITIVE_TYPES:
        text = getattr(args, f"{prim}_bounds")
        if text is not None:
            try:
                bounds[prim] = parse_bounds(text, prim)
            except ValueError as e:
                raise UsageError(str(e)) from None
    if not args.generate:
        raise UsageError("nothing to generate: give -g TYPE (e.g. -g [100][200]f32), once per value")
    try:
        values = dataset_values(args.generate, args.seed, bounds)
    except ToolError as e:  # not a type, or a value too large to make
        raise UsageError(f"-g: {e}") from None
    write_values(values, sys.stdout, binary=args.binary)
    sys.stdout.flush()
    return 0


def cmd_benchcmp(args) -> int:
    from incflat import bench
    rows, missing = bench.compare(bench.load_results(args.a), bench.load_results(args.b))
    sys.stdout.write(bench.benchcmp_text(rows, missing))
    return 0


def cmd_run(args) -> int:
    from incflat.harness import run_compiled, run_interpreted
    if args.interpreter:
        return run_interpreted(args.program, args.options)
    return run_compiled(args.program, args.options, verify=args.verify)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="incflat", description="Incremental flattening compiler and autotuner.")
    ap.add_argument("--version", action="version", version=f"incflat {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    def command(name: str, fn, help: str, **kwargs):
        p = sub.add_parser(name, help=help, **kwargs)
        p.add_argument("--verify", action="store_true", default=None,
                       help="check the IR after every compiler stage (an internal error names the stage)")
        p.set_defaults(fn=fn)
        return p

    def flattening(p):
        p.add_argument("--flattening", choices=pipeline.FLATTENINGS, default="incremental",
                       help="incremental (several guarded versions, the default) or moderate (one version)")

    p = command("check", cmd_check, "parse and type-check a program")
    p.add_argument("program", type=pathlib.Path)

    p = command("versions", cmd_versions, "print the version tree that incremental flattening generates")
    p.add_argument("program", type=pathlib.Path)
    p.add_argument("--dot", action="store_true", help="write Graphviz instead of text")
    p.add_argument("--json", action="store_true", help="write JSON instead of text")
    p.add_argument("--stats", action="store_true", help="count versions, kernels and thresholds; compare with "
                   "moderate flattening")
    p.add_argument("--until", choices=pipeline.STAGE_NAMES, metavar="STAGE",
                   help="print the IR after this stage instead: " + ", ".join(pipeline.STAGE_NAMES))
    flattening(p)

    p = command("compile", cmd_compile, "compile a program to an executable (or a library with --library)")
    p.add_argument("program", type=pathlib.Path)
    flattening(p)
    p.add_argument("--unsafe", action="store_true",
                   help="no bounds, division or size checks inside kernels (faster; wrong input is undefined)")
    p.add_argument("-o", "--output", type=pathlib.Path)
    p.add_argument("--library", action="store_true", help="write an importable module prog.py")
    backend(p)
    p.add_argument("--force", action="store_true", help="overwrite an output file that incflat did not write")

    p = command("autotune", cmd_autotune, "compile, tune the thresholds on the -- == datasets, bake them in")
    p.add_argument("program", type=pathlib.Path)
    backend(p)
    add_run_options(p)  # (its --force covers the compiled program too)

    p = command("test", cmd_test, "run the cases of the programs' -- == blocks and check the results")
    p.add_argument("files", type=pathlib.Path, nargs="+", metavar="FILE", help="a .fut file, or a folder of them")
    p.add_argument("-d", "--device", help="OpenCL device name substring (default: the program's own choice)")
    p.add_argument("--interpreter", action="store_true", help="run the reference interpreter, not compiled code")
    p.add_argument("-v", "--verbose", action="store_true", help="name every program tested")
    p.add_argument("--timeout", type=option_seconds, default=300.0, help="seconds for one run (default 300)")

    p.add_argument("--exclude-case", action="append", default=[], metavar="TAG",
                   help="skip the cases with this tag (repeatable)")

    p = command("bench", cmd_bench, "time the cases of the programs' -- == blocks (futhark bench's method)")
    p.add_argument("files", type=pathlib.Path, nargs="+", metavar="FILE", help="a .fut file, or a folder of them")
    p.add_argument("-r", "--runs", type=option_int, default=10, help="runs at least (default 10)")
    flattening(p)
    p.add_argument("--tuning", type=pathlib.Path, metavar="FILE",
                   help="a tuning file (default: PROGRAM.fut.tuning when it exists)")
    p.add_argument("--no-tuning", action="store_true", help="use no tuning file")
    p.add_argument("-d", "--device", help="OpenCL device name substring")
    p.add_argument("-p", "--platform", help="OpenCL platform name substring")
    p.add_argument("-e", "--entry-point", help="only this entry point")
    p.add_argument("--exclude-case", action="append", default=[], metavar="TAG",
                   help="skip the cases with this tag (repeatable; nobench and disable always are)")
    p.add_argument("--no-convergence-phase", action="store_true", help="stop after the minimum runs")
    p.add_argument("--convergence-max-seconds", type=option_seconds, default=300.0,
                   help="time limit of the convergence phase per dataset (default 300)")
    p.add_argument("--json", type=pathlib.Path, metavar="FILE", help="write the results in futhark bench's JSON")

    p = command("dataset", cmd_dataset, "write random values, as futhark dataset does")
    p.add_argument("-g", "--generate", action="append", default=[], metavar="TYPE",
                   help="a value of this type, e.g. [100][200]f32 or i64 (repeatable: one value each)")
    p.add_argument("-b", "--binary", action="store_true", help="Futhark's binary format (default: text)")
    p.add_argument("--text", dest="binary", action="store_false", help="the text format (the default)")
    p.add_argument("-s", "--seed", type=option_seed, default=1, help="the first value's seed (default 1)")
    for prim in PRIMITIVE_TYPES:
        p.add_argument(f"--{prim}-bounds", metavar="LOW:HIGH",
                       help=f"the range of {prim} values, both ends included" if prim == "i8" else argparse.SUPPRESS)

    p = command("benchcmp", cmd_benchcmp, "speedups of B over A (two JSON files of incflat or futhark bench), "
                "significant by Welch's t-test at 5%%")
    p.add_argument("a", type=pathlib.Path, metavar="A.json")
    p.add_argument("b", type=pathlib.Path, metavar="B.json")

    p = command("run", cmd_run, "compile (cached) and run a program; options after FILE go to the program",
                usage="incflat run [--interpreter] [--verify] FILE [PROGRAM OPTIONS...]")
    p.add_argument("--interpreter", action="store_true",
                   help="run the reference interpreter (it understands -e, -b, -r, -t)")
    p.add_argument("program", type=pathlib.Path, metavar="FILE")
    p.add_argument("options", nargs=argparse.REMAINDER, help="-e ENTRY, -d DEVICE, --param NAME=VALUE, -t, -r, ...")
    return ap


class _Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, handled as Ctrl-C is (temporary files are cleaned up) but reported with its own exit
    status."""

    def __init__(self, signum: int):
        super().__init__()
        self.signum = signum


def _terminate(signum, frame):
    raise _Terminated(signum)


def main(argv=None) -> int:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for terminating in (signal.SIGTERM, signal.SIGHUP):  # clean up temporary files as on Ctrl-C
        signal.signal(terminating, _terminate)
    program = None
    try:
        args = build_parser().parse_args(argv)
        program = getattr(args, "program", None)
        if program is not None and not program.is_file():
            print(f"incflat: error: {program}: {not_a_file(program)}", file=sys.stderr)
            return 1
        status = args.fn(args)
        sys.stdout.flush()  # (a full disk under stdout is an error of the command, not a silent loss at exit)
        return status
    except CompileError as e:
        print(format_error(e, source_of(e, program)), file=sys.stderr)
        return 1
    except ToolError as e:
        print(f"incflat: error: {e}", file=sys.stderr)
        return 1
    except UsageError as e:
        print(f"incflat: error: {e}", file=sys.stderr)
        return 2
    except IRError as e:  # a stage broke the IR (found with --verify): a bug in incflat
        print(f"incflat: internal compiler error: {e}", file=sys.stderr)
        return 70
    except BrokenPipeError:  # the reader of stdout stopped (`| head`): end quietly, as Futhark's tools do
        _discard_stdout()
        return 128 + signal.SIGPIPE
    except OSError as e:  # e.g. an unwritable cache or output folder; without a file name, stdout (a full disk)
        if e.filename:
            print(f"incflat: error: {e.filename}: {e.strerror or e}", file=sys.stderr)
        elif e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO):
            _discard_stdout()
            print(f"incflat: error: cannot write the output: {e.strerror}", file=sys.stderr)
        else:
            print(f"incflat: error: {e.strerror or e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print("incflat: interrupted", file=sys.stderr)
        return 128 + (e.signum if isinstance(e, _Terminated) else signal.SIGINT)


def _discard_stdout() -> None:
    """What is left in stdout's buffer goes nowhere (exiting would flush it into the same error)."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)


def run():
    """The console script's entry point. Once the command has ended, terminating signals are ignored: Python puts
    the default handlers back while it shuts down, where SIGHUP or SIGTERM would kill the process and lose the
    status of a command that did its work (blocking them would not do: another thread may take them)."""
    status = main()
    for terminating in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(terminating, signal.SIG_IGN)
    sys.exit(status)


if __name__ == "__main__":
    run()
