"""The compiled program's command line (docs/contracts.md): options, tuning files, errors, formats."""

import io
import os
import pathlib
import signal
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, compile_program, run_program
from incflat.ir.runtime import tuning
from incflat.ir.runtime.values import read_values, write_binary

MATMUL = (ROOT / "futhark_examples" / "matmul.fut").read_text()
SUM = """
entry main [n] (xs: [n]f32): f32 = reduce (+) 0 xs
entry sum_i64 [n] (xs: [n]i64): i64 = reduce (+) 0 (map (*2) xs)
"""
MATMUL_INPUT = b"[[1f32, 2f32], [3f32, 4f32]] [[5f32, 6f32], [7f32, 8f32]]"


@pytest.fixture(scope="module")
def matmul(tmp_path_factory):
    return compile_program(MATMUL, tmp_path_factory.mktemp("cli"), "matmul")


@pytest.fixture(scope="module")
def summer(tmp_path_factory):
    return compile_program(SUM, tmp_path_factory.mktemp("cli"), "sum")


def values(out: bytes) -> list:
    return read_values(io.BytesIO(out))


def test_text_input_and_output(matmul, device):
    out = run_program(matmul, MATMUL_INPUT, "-d", device).stdout
    assert out.decode() == "[[19.0f32, 22.0f32], [43.0f32, 50.0f32]]\n"


def test_binary_output(matmul, device):
    (got,) = values(run_program(matmul, MATMUL_INPUT, "-d", device, "-b").stdout)
    np.testing.assert_array_equal(got, np.array([[19, 22], [43, 50]], np.float32))


def test_each_run_reuses_the_memory_the_first_one_allocated(matmul, device):
    """A run's results go back to the pool before the next run: kept through it, they made the second run (the
    first timed one after the warm-up) allocate afresh, and slower than the runs after it."""
    def pool(runs):
        err = run_program(matmul, MATMUL_INPUT, "-d", device, "-D", "-r", str(runs)).stderr.decode()
        return next(line for line in err.splitlines() if line.startswith("Device memory:"))
    assert pool(1) == pool(2) == pool(4)


@pytest.mark.parametrize("n", [0, 1, 1000, 100_003])
def test_reduction_to_a_scalar(summer, device, n):
    xs = np.arange(n, dtype=np.float32) % 7
    buf = io.BytesIO()
    write_binary(xs, buf)
    (got,) = values(run_program(summer, buf.getvalue(), "-d", device).stdout)
    assert got.dtype == np.float32 and got == np.float32(xs.sum(dtype=np.float64))
    buf = io.BytesIO()
    write_binary(np.arange(n, dtype=np.int64), buf)
    (got,) = values(run_program(summer, buf.getvalue(), "-d", device, "-e", "sum_i64").stdout)
    assert got == np.int64(n * (n - 1))


def test_runtimes_file(matmul, tmp_path):
    times = tmp_path / "times"
    run_program(matmul, MATMUL_INPUT, "-r", "4", "-t", str(times))
    lines = times.read_text().splitlines()
    assert len(lines) == 4 and all(int(t) > 0 for t in lines)


def test_log_compares_each_guard(matmul):
    err = run_program(matmul, MATMUL_INPUT, "-L", "--default-threshold", "1000000").stderr.decode()
    assert err.splitlines() == [
        "Compared main.suff_outer_par_0 <= 2: false.",
        "Compared main.suff_intra_par_1 <= 2: false.",
        "Compared main.suff_outer_par_2 <= 4: false.",
        "Compared main.suff_intra_par_3 <= 2: false.",
    ]


def test_tuning_file_and_param_override(matmul, tmp_path):
    tuning = tmp_path / "t.tuning"
    tuning.write_text("-- a comment\n\nmain.suff_outer_par_0=1000000\nmain.suff_intra_par_1=1\n")
    err = run_program(matmul, MATMUL_INPUT, "-L", "--tuning", str(tuning)).stderr.decode()
    assert "Compared main.suff_intra_par_1 <= 2: true." in err
    err = run_program(matmul, MATMUL_INPUT, "-L", "--tuning", str(tuning),
                      "--param", "main.suff_outer_par_0=1").stderr.decode()
    assert err.splitlines() == ["Compared main.suff_outer_par_0 <= 2: true."]


@pytest.mark.parametrize("content, message", [
    ("main.suff_outer_par_0=1\nmain.suff_outer_par_0 = x\n", ":2: invalid line"),
    ("main.suff_outer_par_0=1\n\n-- c\nnot a line\n", ":4: invalid line"),
    ("main.suff_outer_par_0=1\nmain.nonsense_7=3\n", ":2: unknown tuning parameter 'main.nonsense_7'"),
])
def test_bad_tuning_file_names_the_line(matmul, tmp_path, content, message):
    tuning = tmp_path / "bad.tuning"
    tuning.write_text(content)
    proc = run_program(matmul, MATMUL_INPUT, "--tuning", str(tuning), check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and message in err and "Traceback" not in err


@pytest.mark.parametrize("args, stdin, message", [
    (["--param", "main.bogus=1"], MATMUL_INPUT, "unknown tuning parameter 'main.bogus'"),
    (["--param", "main.suff_outer_par_0"], MATMUL_INPUT, "must be of form NAME=INT"),
    (["-e", "nope"], MATMUL_INPUT, "unknown entry point 'nope'"),
    ([], b"[1i32, 2i32] [[1f32]]", "expected a value of type [][]f32, got [2]i32"),
    ([], b"[[1f32, 2f32]]", "takes 2 arguments, but 1 were given"),
    ([], b"[[1f32, 2f32]] [[1f32]]", "size mismatch"),
    ([], b"[[1f32, 2f32] [[1f32]]", "reading input"),
    (["-d", "no-such-device"], MATMUL_INPUT, "no OpenCL device matches"),
    (["--default-tile-size", "0"], MATMUL_INPUT, "--default-tile-size 0: must be at least 1"),
    (["--default-group-size", "-3"], MATMUL_INPUT, "--default-group-size -3: must be at least 1"),
])
def test_errors_are_one_clear_line(matmul, args, stdin, message):
    proc = run_program(matmul, stdin, *args, check=False)
    err = proc.stderr.decode()
    assert proc.returncode != 0 and message in err and "Traceback" not in err, err


def test_library_mode(tmp_path, device):
    from incflat.cli import main
    fut = tmp_path / "mm.fut"
    fut.write_text(MATMUL)
    assert main(["compile", "--library", str(fut)]) == 0
    proc = subprocess.run([sys.executable, "-c", f"""
import sys, numpy as np
sys.path.insert(0, {str(tmp_path)!r})
import mm
prog = mm.load(device={device!r})
print(prog.main(np.eye(3, dtype=np.float32), np.full((3, 2), 2, np.float32)).tolist())
"""], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "[[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]", proc.stderr


@pytest.mark.parametrize("sizes", [("main.segmap_2_tile_size=1",), ("main.segmap_2_tile_size=7",),
                                   ("--default-tile-size=3",),
                                   ("main.segred_4_tblock_size=3", "main.segred_4_num_tblocks=5")])
def test_workgroup_grid_and_tile_sizes_are_tuning_parameters(matmul, device, sizes):
    never = str(tuning.NEVER)
    forced = ["--param", f"main.suff_outer_par_0={never}", "--param", f"main.suff_intra_par_1={never}"]
    forced += ["--param", f"main.suff_outer_par_2={never}" if "segred_4" in sizes[0] else "main.suff_outer_par_2=1"]
    forced += ["--param", f"main.suff_intra_par_3={never}"]
    args = forced + [a for s in sizes for a in ((s,) if s.startswith("--") else ("--param", s))]
    out = run_program(matmul, MATMUL_INPUT, "-d", device, *args).stdout
    assert out.decode() == "[[19.0f32, 22.0f32], [43.0f32, 50.0f32]]\n"


def test_profile_reports_kernels_and_versions(matmul, device, tmp_path):
    never = str(tuning.NEVER)
    args = [a for t in ("main.suff_outer_par_0", "main.suff_intra_par_1", "main.suff_outer_par_2",
                        "main.suff_intra_par_3") for a in ("--param", f"{t}={never}")]
    profile = tmp_path / "profile.json"
    proc = run_program(matmul, MATMUL_INPUT, "-d", device, "-P", "--profile-json", str(profile), *args)
    assert "segred_4" in proc.stderr.decode() and "main.suff_intra_par_3: false" in proc.stderr.decode()
    import json
    record = json.loads(profile.read_text())
    assert record["kernels"]["segred_4"]["runs"] == 1
    decisions = [(v["threshold"], v["outcome"], v["epar"]) for v in record["versions"]]
    assert sorted(decisions) == [("main.suff_intra_par_1", False, 2), ("main.suff_intra_par_3", False, 2),
                                 ("main.suff_outer_par_0", False, 2), ("main.suff_outer_par_2", False, 4)]
    assert all(v["time_us"] > 0 and v["host_us"] > 0 for v in record["versions"])


def test_a_decisions_span_holds_its_kernels_and_the_decisions_nested_in_it_and_fits_in_its_run(matmul, device,
                                                                                              tmp_path):
    """The span is the time a decision added to its run's timeline: at least its kernels' time, at least the
    span of a guard's decision inside its version, and within the run's own time (-t)."""
    nested = ("main.suff_outer_par_0", "main.suff_intra_par_1", "main.suff_outer_par_2", "main.suff_intra_par_3")
    args = [a for t in nested for a in ("--param", f"{t}={tuning.NEVER}")]
    profile, times = tmp_path / "profile.json", tmp_path / "times"
    run_program(matmul, MATMUL_INPUT, "-d", device, "-r", "3", "-t", str(times), "--profile-json", str(profile),
                *args)
    import json
    spans = {t: [] for t in nested}
    for v in json.loads(profile.read_text())["versions"]:
        assert 0 < v["time_us"] <= v["span_us"], v
        spans[v["threshold"]].append(v["span_us"])
    runs = [int(t) for t in times.read_text().split()]
    assert all(len(s) == len(runs) == 3 for s in spans.values())
    for k, run_us in enumerate(runs):
        chain = [spans[t][k] for t in nested]
        assert chain == sorted(chain, reverse=True) and chain[0] <= run_us + 1, (chain, run_us)


PARAM_ATTRIBUTE = """
entry main [n] (xs: [n]i32): []i32 =
  let k = #[param(chunk)] (n / 2)
  in xs[k:]
"""


def test_param_attribute_is_a_tuning_parameter(tmp_path):
    """#[param(chunk)] e: listed by --print-params, e's value when unset, else --param's or a tuning file's."""
    program = compile_program(PARAM_ATTRIBUTE, tmp_path, "param")
    listing = run_program(program, b"", "--print-params").stdout.decode()
    assert "chunk (user_param)" in listing.splitlines()
    from incflat.ir.runtime.tuning import USER_PARAM, parse_listing
    assert [p.cls for p in parse_listing(listing) if p.name == "chunk"] == [USER_PARAM]
    xs = b"[1i32, 2i32, 3i32, 4i32, 5i32]"
    assert run_program(program, xs).stdout.split() == [b"[3i32,", b"4i32,", b"5i32]"]
    assert run_program(program, xs, "--param", "chunk=1").stdout.split() == [b"[2i32,", b"3i32,", b"4i32,", b"5i32]"]
    tuning = tmp_path / "param.tuning"
    tuning.write_text("chunk=4\n")
    assert run_program(program, xs, "--tuning", str(tuning)).stdout.split() == [b"[5i32]"]
    proc = run_program(program, xs, "--param", "chunk=9", check=False)
    err = proc.stderr.decode()
    assert proc.returncode != 0 and "out of bounds" in err and "Traceback" not in err


def test_a_second_configuration_runs_in_turn_with_the_first(tmp_path):
    """--alternate-tuning: each run is made under both configurations, in turn; the first's results are
    printed, each one's runtimes go to its own file, and the second's values are its own (over the defaults)."""
    program = compile_program(PARAM_ATTRIBUTE, tmp_path, "param")
    xs = b"[1i32, 2i32, 3i32, 4i32, 5i32]"
    second = tmp_path / "second.tuning"
    second.write_text("chunk=1\n")
    first_times, second_times = tmp_path / "a", tmp_path / "b"
    out = run_program(program, xs, "--param", "chunk=4", "-r", "3", "-t", str(first_times), "--alternate-tuning",
                      str(second), "--alternate-times", str(second_times)).stdout
    assert out.split() == [b"[5i32]"]  # the first's
    assert all(len(f.read_text().splitlines()) == 3 and all(int(t) > 0 for t in f.read_text().split())
               for f in (first_times, second_times))
    third, third_times = tmp_path / "third.tuning", tmp_path / "c"
    third.write_text("chunk=2\n")
    run_program(program, xs, "-r", "2", "--alternate-tuning", str(second), "--alternate-tuning", str(third),
                "--alternate-times", str(second_times), "--alternate-times", str(third_times))
    assert len(third_times.read_text().splitlines()) == len(second_times.read_text().splitlines()) == 2
    second.write_text("chunk=9\n")  # only the second's values fail
    proc = run_program(program, xs, "--param", "chunk=4", "--alternate-tuning", str(second), check=False)
    assert proc.returncode == 1 and "out of bounds" in proc.stderr.decode()
    alone = "each --alternate-times needs an --alternate-tuning"
    for args, message in ((["--alternate-times", str(second_times)], alone),
                          (["--alternate-tuning", str(second), "-L"], "cannot be combined with -L"),
                          (["--alternate-tuning", str(tmp_path / "none")], "cannot read tuning file")):
        proc = run_program(program, xs, *args, check=False)
        err = proc.stderr.decode()
        assert proc.returncode == 1 and len(err.splitlines()) == 1 and message in err, err


@pytest.mark.parametrize("option", ["-t", "--profile-json"])
@pytest.mark.parametrize("where, message", [("missing/out", "No such file or directory"), (".", "is a directory")])
def test_output_files_are_checked_before_computing(matmul, tmp_path, option, where, message):
    path = tmp_path / where
    proc = run_program(matmul, MATMUL_INPUT, "-L", option, str(path), check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "Traceback" not in err, err
    assert err.splitlines() == [f"Error: {option} {path}: " + ("" if message == "is a directory" else "cannot write: ")
                                + message]  # and nothing was computed: no guard compared


def test_a_reader_that_stops_ends_the_program_quietly(tmp_path):
    """`prog < in | head`: the status of a process that SIGPIPE ended, and no message, as Futhark's executables."""
    program = compile_program("entry main (n: i64) : []i64 = iota n\n", tmp_path, "iota")
    interpreted = [sys.executable, "-m", "incflat", "run", "--interpreter", str(tmp_path / "iota.fut")]
    for command in ([sys.executable, str(program)], [sys.executable, str(program), "-b"], interpreted):
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=ROOT)
        proc.stdin.write(b"3000000i64")
        proc.stdin.close()
        proc.stdout.read(10)
        proc.stdout.close()
        assert proc.wait(timeout=300) == 128 + signal.SIGPIPE
        assert proc.stderr.read() == b""


def test_a_full_or_closed_stdout_is_an_error(matmul):
    for binary in ([], ["-b"]):
        with open("/dev/full", "wb") as full:
            proc = subprocess.run([sys.executable, str(matmul), *binary], input=MATMUL_INPUT, stdout=full,
                                  stderr=subprocess.PIPE, timeout=300)
        err = proc.stderr.decode()
        assert proc.returncode == 1 and err == "Error: writing the results to stdout: No space left on device\n", err
    proc = subprocess.run(f"{sys.executable} {matmul} >&-", shell=True, input=MATMUL_INPUT, stderr=subprocess.PIPE,
                          timeout=300)
    assert proc.returncode == 1 and proc.stderr.decode() == "Error: stdout is closed\n"


@pytest.mark.parametrize("args, message", [
    (["--param", "main.suff_outer_par_0=--5"], "--param main.suff_outer_par_0=--5: must be of form NAME=INT"),
    (["--param", "main.suff_outer_par_0=\u00b2"], "must be of form NAME=INT"),
    (["--param", "main.suff_outer_par_0=\u0663"], "must be of form NAME=INT"),
    (["--default-threshold", "\u0663"], "argument --default-threshold: invalid integer: '\u0663'"),
    (["-r", "\u0663"], "argument -r/--runs: invalid integer: '\u0663'"),
    (["--default-tile-size", "\u00b2"], "argument --default-tile-size: invalid integer: '\u00b2'"),
])
def test_options_take_ascii_integers_only(matmul, args, message):
    proc = run_program(matmul, MATMUL_INPUT, *args, check=False)
    err = proc.stderr.decode()
    assert proc.returncode in (1, 2) and len(err.splitlines()) == 1 and message in err, err


def test_a_tuning_file_that_is_not_utf8_names_the_line(matmul, tmp_path):
    tuning = tmp_path / "bad.tuning"
    tuning.write_bytes(b"-- fine\nmain.suff_outer_par_0=1\nmain.suff_intra_par_1=\xff\n")
    proc = run_program(matmul, MATMUL_INPUT, "--tuning", str(tuning), check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err.startswith(f"Error: {tuning}:3: not UTF-8 text"), err


def test_a_python_without_pyopencl_gets_one_line_naming_it_and_the_fix(matmul, tmp_path):
    import numpy
    site = pathlib.Path(numpy.__file__).parent.parent
    only_numpy = tmp_path / "only_numpy"
    only_numpy.mkdir()
    for name in ("numpy", "numpy.libs"):
        if (site / name).exists():
            (only_numpy / name).symlink_to(site / name)
    # -S: no site-packages, so numpy comes from only_numpy and pyopencl from nowhere
    proc = subprocess.run([sys.executable, "-S", str(matmul)], input=MATMUL_INPUT, capture_output=True,
                          env=dict(os.environ, PYTHONPATH=str(only_numpy)), timeout=300)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "pyopencl" in err and sys.executable in err and "pip install pyopencl" in err, err
    # as a library: an ImportError that says the same
    proc = subprocess.run([sys.executable, "-S", "-c", f"import runpy; runpy.run_path({str(matmul)!r})"],
                          capture_output=True, env=dict(os.environ, PYTHONPATH=str(only_numpy)), timeout=300)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "ImportError: this program needs the Python package pyopencl" in err, err
