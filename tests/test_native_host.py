"""The native host (`--backend=opencl`): the C printing of the host IR (codegen/chost.py) linked with the C runtime
(codegen/native). Every version of every program of test_versions_agree agrees with the reference interpreter,
and the executable's command line gives what the Python program gives, byte for byte: results, -L lines,
--print-params, run-time errors and bad input (messages and exit statuses)."""

import io
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, run_program
from incflat import pipeline
from incflat.cli import main as incflat_main
from incflat.codegen import cprogram
from incflat.codegen.program import program_text as python_program_text
from incflat.compiled import cache_dir
from incflat.ir.interp.interpreter import run_entry
from incflat.ir.runtime import tuning
from incflat.ir.runtime.values import read_values, write_values
from incflat.pipeline import source_program
from test_versions_agree import PROGRAMS

pytestmark = pytest.mark.skipif(cprogram.c_compiler() is None, reason="no C compiler (cc, or $CC)")


# A native program finds the devices pyopencl finds by itself (pyopencl's bundled loader, recorded when it was
# built: opencl.h's incflat_cl_load): the tests run it with none of the loader's variables set.
ENV = {k: v for k, v in os.environ.items() if k not in ("INCFLAT_OPENCL_LIBRARY", "PYOPENCL_HOME", "LD_LIBRARY_PATH")}


def build(source: str, folder: pathlib.Path, name: str = "prog") -> pathlib.Path:
    generated = pipeline.compile(source, f"{name}.fut", until="generate")
    program = folder / name
    program.write_bytes(cprogram.build(cprogram.program_text(generated), program, cache_dir() / "native"))
    program.chmod(0o755)
    return program


def binary_values(values) -> bytes:
    class Stream:
        buffer = io.BytesIO()

        def flush(self):
            pass
    stream = Stream()
    write_values(values, stream, binary=True)
    return stream.buffer.getvalue()


def run_native(program, stdin: bytes, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(program), *args], input=stdin, capture_output=True, timeout=300, env=ENV)


def params_argv(params: dict) -> list:
    return [x for name, value in params.items() for x in ("--param", f"{name}={value}")]


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_every_version_agrees_with_the_interpreter(device, tmp_path, name):
    source, datasets = PROGRAMS[name]
    program = build(source, tmp_path, name)
    generated = pipeline.compile(source, f"{name}.fut", until="generate")
    assignments = tuning.version_assignments(tuning.build_forest(generated.params)) or [{}]
    prog = source_program(source, f"{name}.fut")
    for args in datasets:
        expected = run_entry(prog, "main", args)
        for params in assignments:
            proc = run_native(program, binary_values(args), "-d", device, "-b", *params_argv(params))
            assert proc.returncode == 0, (params, proc.stderr.decode())
            got = read_values(io.BytesIO(proc.stdout))
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                assert np.asarray(g).dtype == np.asarray(e).dtype, (params, args)
                np.testing.assert_allclose(np.asarray(g, dtype=np.float64), np.asarray(e, dtype=np.float64),
                                           rtol=1e-4, atol=1e-5, err_msg=f"{name} {params}")


# programs whose runs fail, and the inputs that make them fail (text values)
FAILING = {
    "coercion": ("def main (xs: []f32) (ys: []f32) : []f32 = map2 (\\x y -> x * y + 1) xs ys",
                 "[1f32, 2f32] [3f32]"),
    "index": ("def main (xs: []i32) (i: i64) : i32 = xs[i] + 1", "[1, 2, 3] 7i64"),
    "kernel_index": ("def main (xs: []i32) (is: []i64) : []i32 = map (\\i -> xs[i]) is", "[1, 2, 3] [0i64, 5i64]"),
    "kernel_division": ("def main (xs: []i32) (d: i32) : []i32 = map (\\x -> x / d) xs", "[1, 2, 3] 0"),
    "host_division": ("def main (x: i32) (d: i32) : i32 = x / d", "7 0"),
    "assertion": ("def main (x: i32) : i32 = assert (x > 0) (x * 2)", "-3"),
    "wrong_type": ("def main (xs: []f32) : f32 = reduce (+) 0 xs", "[1, 2]"),
    "too_few": ("def main (xs: []f32) (y: f32) : f32 = reduce (+) y xs", "[1f32]"),
    "bad_input": ("def main (xs: []f32) : f32 = reduce (+) 0 xs", "[1f32, oops]"),
}


@pytest.fixture(scope="module")
def failing(tmp_path_factory):
    folder = tmp_path_factory.mktemp("failing")
    out = {}
    for name, (source, _) in FAILING.items():
        fut = folder / f"{name}.fut"
        fut.write_text(source)
        generated = pipeline.compile(source, str(fut), until="generate")
        native = folder / f"{name}-c"
        native.write_bytes(cprogram.build(cprogram.program_text(generated), native, cache_dir() / "native"))
        native.chmod(0o755)
        python = folder / f"{name}-py"
        python.write_text(python_program_text(generated))
        out[name] = (native, python)
    return out


@pytest.mark.parametrize("name", list(FAILING))
def test_failures_read_as_the_python_program_reads(failing, device, name):
    native, python = failing[name]
    stdin = FAILING[name][1].encode()
    c = run_native(native, stdin, "-d", device)
    py = run_program(python, stdin, "-d", device, check=False)
    assert c.returncode == py.returncode != 0
    assert c.stdout == py.stdout == b""
    assert c.stderr.decode() == py.stderr.decode()


OPTIONS = [
    ["-e", "nope"], ["-r", "0"], ["--param", "x"], ["--param", "nope=3"], ["--param", "main.suff_outer_par_0=z"],
    ["--tuning", "/nonexistent/t"], ["--default-group-size", "0"], ["--alternate-times", "t"],
    ["-r", "x"], ["--bogus"], ["-r"],
]


@pytest.mark.parametrize("argv", OPTIONS, ids=lambda a: " ".join(a))
def test_bad_options_read_as_the_python_program_reads(failing, device, argv):
    native, python = failing["index"]
    stdin = b"[1, 2, 3] 1i64"
    c = run_native(native, stdin, "-d", device, *argv)
    py = run_program(python, stdin, "-d", device, *argv, check=False)
    assert (c.returncode, c.stdout) == (py.returncode, py.stdout)
    c_err, py_err = c.stderr.decode(), py.stderr.decode()
    # (argparse names the program by its file; the two files' names differ)
    assert c_err.replace(native.name, "PROG") == py_err.replace(python.name, "PROG")


def test_tuning_files_read_as_the_python_program_reads(failing, device, tmp_path):
    native, python = failing["index"]
    for text in ("-- a comment\n\nmain.segmap_0_tblock_size = 64\n", "main.segmap_0_tblock_size=x\n",
                 "nope=3\n", "ok\n", b"\xff=1\n"):
        path = tmp_path / "t.tuning"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        c = run_native(native, b"[1, 2, 3] 1i64", "-d", device, "--tuning", str(path))
        py = run_program(python, b"[1, 2, 3] 1i64", "-d", device, "--tuning", str(path), check=False)
        assert (c.returncode, c.stdout, c.stderr) == (py.returncode, py.stdout, py.stderr), text


def test_print_params_and_log_lines_match(device, tmp_path):
    source, datasets = PROGRAMS["row_sums"]
    native = build(source, tmp_path, "row_sums")
    generated = pipeline.compile(source, "row_sums.fut", until="generate")
    python = tmp_path / "row_sums-py"
    python.write_text(python_program_text(generated))
    c = run_native(native, b"", "--print-params")
    py = run_program(python, b"", "--print-params")
    assert c.returncode == 0 and c.stdout == py.stdout and c.stdout.count(b"\n") == len(generated.params)
    stdin = binary_values(datasets[0])
    for params in tuning.version_assignments(tuning.build_forest(generated.params)):
        c = run_native(native, stdin, "-d", device, "-L", *params_argv(params))
        py = run_program(python, stdin, "-d", device, "-L", *params_argv(params))
        assert c.stdout == py.stdout
        assert tuning.comparisons(c.stderr.decode()) == tuning.comparisons(py.stderr.decode()) != []


def test_runtimes_and_profile(device, tmp_path):
    source, datasets = PROGRAMS["row_sums"]
    native = build(source, tmp_path, "row_sums")
    times, profile = tmp_path / "times", tmp_path / "profile.json"
    proc = run_native(native, binary_values(datasets[0]), "-d", device, "-r", "4", "-t", str(times), "-P",
                      "--profile-json", str(profile))
    assert proc.returncode == 0, proc.stderr.decode()
    assert len([int(t) for t in times.read_text().split()]) == 4
    import json
    report = json.loads(profile.read_text())
    assert report["runs"] == 4 and report["kernels"] and all(k["runs"] % 4 == 0 for k in report["kernels"].values())
    assert "main.suff_outer_par_0" in {v["threshold"] for v in report["versions"]}  # (recorded as they end)
    assert "host-device transfers per run: 0 arrays to the device" in proc.stderr.decode()


def test_compile_command(tmp_path, device):
    fut = tmp_path / "prog.fut"
    fut.write_text("def main (xs: []i64) : i64 = reduce (+) 0 (map (\\x -> x * x) xs)")
    assert incflat_main(["compile", "--backend=opencl", str(fut)]) == 0
    proc = run_native(tmp_path / "prog", b"[1i64, 2i64, 3i64]", "-d", device)
    assert proc.returncode == 0 and proc.stdout == b"14i64\n"
    # compiled again over its own output; a file incflat did not write is refused
    assert incflat_main(["compile", "--backend=opencl", str(fut)]) == 0
    other = tmp_path / "other"
    other.write_text("mine")
    assert incflat_main(["compile", "--backend=opencl", str(fut), "-o", str(other)]) == 2
    assert other.read_text() == "mine"


def test_the_backend_without_backend_option(tmp_path, capsys, monkeypatch):
    """C where a C compiler is found; else, or where the C printer cannot print the program yet, the Python
    program with a one-line note; --backend=opencl then is a one-line error and writes nothing."""
    fut = tmp_path / "prog.fut"
    fut.write_text("def main (x: u64) (y: u64) : u64 = u64.mul_hi x y")
    program = tmp_path / "prog"
    assert incflat_main(["compile", str(fut)]) == 0
    assert cprogram.is_native_program(program) and capsys.readouterr().err == ""
    program.unlink()
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    assert incflat_main(["compile", str(fut)]) == 0
    assert not cprogram.is_native_program(program) and program.read_text().startswith("#!")
    assert capsys.readouterr().err == ("incflat: note: no C compiler found ($CC, or cc): writing a Python program "
                                       "(--backend=pyopencl)\n")
    monkeypatch.delenv("CC")
    program.unlink()

    def unsupported(generated):
        raise cprogram.Unsupported("the statement Nothing")
    monkeypatch.setattr(cprogram, "program_text", unsupported)
    assert incflat_main(["compile", "--backend=opencl", str(fut)]) == 1
    err = capsys.readouterr().err
    assert "--backend=opencl cannot compile this program yet (the statement Nothing)" in err
    assert len(err.strip().splitlines()) == 1 and not program.exists()
    assert incflat_main(["compile", str(fut)]) == 0
    assert not cprogram.is_native_program(program)
    err = capsys.readouterr().err
    assert err.startswith("incflat: note: ") and err.endswith(": writing a Python program\n")
    assert len(err.splitlines()) == 1


# ---- the corpus (tests/programs), every version, natively ----

from test_corpus import EXAMPLES, PROGRAMS as CORPUS, SHOWN_FAILURES, front_end_ok, run_cases  # noqa: E402
from conftest import UNSUPPORTED  # noqa: E402
from incflat.harness import Outcome  # noqa: E402



class NativeRunner:
    """A native program run once per case, as the harness's Compiled runs a Python one."""

    def __init__(self, program, device, params):
        self.argv = [str(program), "-d", device, "-b", *params_argv(params)]

    def run(self, entry: str, inputs: list) -> Outcome:
        proc = subprocess.run([*self.argv, "-e", entry], input=binary_values(inputs), capture_output=True,
                              timeout=300, env=ENV)
        if proc.returncode < 0:  # (INTERNAL's words for a crash)
            return Outcome(error=f"Error: the compiled program crashed (signal {-proc.returncode})")
        if proc.returncode != 0:
            return Outcome(error=proc.stderr.decode().strip())
        return Outcome(values=tuple(read_values(io.BytesIO(proc.stdout))))


class ServerRunner:
    """A native program as one --server process per configuration, which runs every case (a process per case
    costs its start, a context and the kernels' build each time)."""

    def __init__(self, program, device, params, folder):
        self.proc = subprocess.Popen([str(program), "--server", "-d", device, *params_argv(params)], env=ENV,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.file = folder / "values.bin"
        self.response()

    def command(self, *words) -> list:
        self.proc.stdin.write((" ".join(words) + "\n").encode())
        self.proc.stdin.flush()
        return self.response()

    def response(self) -> list:
        lines, failed = [], False
        while True:
            line = self.proc.stdout.readline().decode()
            if line == "":
                raise AssertionError(f"the server ended: {self.proc.stderr.read().decode()}")
            if line == "%%% OK\n":
                if failed:
                    raise ServerFailure("\n".join(lines))
                return lines
            if line == "%%% FAILURE\n":
                failed, lines = True, []
                continue
            lines.append(line.rstrip("\n"))

    def run(self, entry: str, inputs: list) -> Outcome:
        try:
            types, outputs = self.command("inputs", entry), self.command("outputs", entry)
            self.file.write_bytes(binary_values(inputs))
            names = [f"in{k}" for k in range(len(types))]
            try:
                self.command("restore", str(self.file), *(x for pair in zip(names, types) for x in pair))
            except ServerFailure as e:  # (the executable names a wrong argument in its own words)
                return Outcome(error=f"Error: {e}")
            outs = [f"out{k}" for k in range(len(outputs))]
            try:
                self.command("call", entry, *outs, *names)
            except ServerFailure as e:
                self.command("free", *names)
                return Outcome(error=f"Error: {e}")
            self.command("store", str(self.file), *outs)
            self.command("free", *names, *outs)
            return Outcome(values=tuple(read_values(io.BytesIO(self.file.read_bytes()))))
        except ServerFailure as e:
            return Outcome(error=f"Error: {e}")

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0


class ServerFailure(Exception):
    pass


@pytest.mark.parametrize("path", CORPUS + EXAMPLES, ids=lambda p: p.stem)
def test_corpus_every_version_natively(path, device, tmp_path):
    if path.stem in UNSUPPORTED:
        return  # (test_corpus checks that they fail to compile, as they should)
    program, cases = front_end_ok(path)
    generated = pipeline.compile(program.text, str(path), until="generate")
    text = cprogram.program_text(generated)
    native = tmp_path / path.stem
    native.write_bytes(cprogram.build(text, native, cache_dir() / "native"))
    native.chmod(0o755)
    failures = []
    for params in tuning.version_assignments(tuning.build_forest(generated.params)) or [{}]:
        shown = " ".join(f"{k}={v}" for k, v in params.items()) or "(no thresholds)"
        server = ServerRunner(native, device, params, tmp_path)
        failures += [f"[{shown}] {f}" for f in run_cases(cases, server, False)]
        server.close()
    assert not failures, f"{len(failures)} runs fail:\n" + "\n".join(failures[:SHOWN_FAILURES])


# ---- tuned defaults in the binary, and the tuner on a native program ----

def test_tuned_defaults_are_patched_into_the_binary(device, tmp_path):
    source, datasets = PROGRAMS["row_sums"]
    native = build(source, tmp_path, "row_sums")
    binary = native.read_bytes()
    assert cprogram.with_defaults(binary, {}, None) == binary  # (a fresh program: nothing set)
    values = {"main.suff_outer_par_0": 7, "main.segred_2_tblock_size": 64}
    provenance = {"device": "a device", "strategy": "tree"}
    native.write_bytes(cprogram.with_defaults(binary, values, provenance))
    listing = tuning.parse_listing(run_native(native, b"", "--print-params").stdout.decode())
    assert {p.name: p.default for p in listing if p.is_threshold}["main.suff_outer_par_0"] == 7
    proc = run_native(native, binary_values(datasets[0]), "-d", device, "-L", "-D")
    assert proc.returncode == 0, proc.stderr.decode()
    assert f"Tuned defaults: {provenance}" in proc.stderr.decode()
    assert tuning.comparisons(proc.stderr.decode())[0] == ("main.suff_outer_par_0", 5, False)  # 7 <= 5: false
    proc = run_native(native, binary_values(datasets[0]), "-d", device, "-L", "--param", "main.suff_outer_par_0=1")
    assert tuning.comparisons(proc.stderr.decode())[0] == ("main.suff_outer_par_0", 5, True)  # options win
    # back to no tuned defaults: the program as built
    assert cprogram.with_defaults(native.read_bytes(), {}, None) == binary
    with pytest.raises(tuning.ContractError):
        cprogram.with_defaults(binary, {"nope": 1}, None)
    with pytest.raises(tuning.ContractError):
        cprogram.with_defaults(b"\x7fELF not a program of ours", {}, None)


def test_autotune_a_native_program(tmp_path):
    from test_autotune_e2e import SOURCE
    fut = tmp_path / "mm.fut"
    fut.write_text(SOURCE)
    proc = subprocess.run([sys.executable, "-m", "incflat", "autotune", "--backend=opencl", str(fut), "-r", "2",
                           "--no-moderate"], capture_output=True, text=True, timeout=600, cwd=ROOT, env=ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    program = tmp_path / "mm"
    assert cprogram.is_native_program(program)
    lines = [l for l in (tmp_path / "mm.fut.tuning").read_text().splitlines() if not l.startswith("--")]
    from_file = {k: int(v) for k, v in (l.split("=") for l in lines)}
    listing = tuning.parse_listing(run_native(program, b"", "--print-params").stdout.decode())
    assert from_file == {p.name: p.default for p in listing if p.is_threshold} and len(from_file) == 4
    out = run_native(program, b"[[1f32, 2f32, 3f32, 4f32]] [[1f32], [2f32], [3f32], [4f32]]")
    assert out.returncode == 0 and out.stdout == b"[[30.0f32]]\n"


def test_memory_is_reused_across_steps_and_runs(device, tmp_path):
    """A host loop allocates at every step, and each run anew: the free list gives the same blocks back."""
    source = ("def main (xs: []f32) (k: i64) : []f32 =\n"
              "  loop ys = xs for i < k do map (\\y -> y * 0.5 + f32.i64 i) ys")
    native = build(source, tmp_path)

    def held(steps, runs):
        proc = run_native(native, binary_values([np.arange(1000, dtype=np.float32), np.int64(steps)]), "-d", device,
                          "-D", "-r", str(runs))
        assert proc.returncode == 0, proc.stderr.decode()
        line = [l for l in proc.stderr.decode().splitlines() if l.startswith("Device memory: ")][0]
        return int(line.split()[2])
    assert held(200, 1) == held(200, 5) == held(2, 1) <= 4


@pytest.mark.parametrize("name", ["row_sums", "column_sums", "prefix_sum", "transposing_loop", "block_loop",
                                  "ranges_in_a_map"])
def test_the_same_commands_and_transfers_as_the_python_program(device, tmp_path, name):
    """The host does what the Python program's does: the same kernels and copies, as often, and the same
    host-device traffic (-P's JSON)."""
    import json
    source, datasets = PROGRAMS[name]
    native = build(source, tmp_path, name)
    python = tmp_path / f"{name}-py"
    python.write_text(python_program_text(pipeline.compile(source, f"{name}.fut", until="generate")))
    profiles = []
    for run in (lambda *a: run_native(native, *a), lambda *a: run_program(python, *a)):
        out = tmp_path / "profile.json"
        proc = run(binary_values(datasets[0]), "-d", device, "-r", "2", "--profile-json", str(out))
        assert proc.returncode == 0, proc.stderr.decode()
        profile = json.loads(out.read_text())
        profiles.append(({k: v["runs"] for k, v in profile["kernels"].items()}, profile["transfers"],
                         [(v["threshold"], v["outcome"], v["epar"]) for v in profile["versions"]]))
    assert profiles[0] == profiles[1]


# ---- --server: Futhark's server protocol, through Futhark's own client (futhark-server) ----

def test_a_whole_server_conversation(device, tmp_path):
    futhark_server = pytest.importorskip("futhark_server")
    source = ("entry main [n] (xs: [n]f32) (ys: [n]f32) : ([n]f32, f32) =\n"
              "  let zs = map2 (\\x y -> x * y + 1) xs ys in (zs, reduce (+) 0 zs)\n"
              "entry scale (k: f32) (xs: []f32) : []f32 = map (* k) xs")
    native = build(source, tmp_path)
    xs, ys = np.arange(5, dtype=np.float32), np.full(5, 2, np.float32)
    with futhark_server.Server(str(native), "--server", "-d", device) as s:
        assert s.cmd_entry_points() == ["main", "scale"]
        assert s.cmd_types() == ["[]f32", "f32"]
        assert s.cmd_inputs("main") == ["[]f32", "[]f32"] and s.cmd("outputs", "main") == ["[]f32", "f32"]
        assert s.cmd_output("scale") == ["[]f32"]
        s.put_value("xs", xs)
        s.put_value("ys", ys)
        out = s.cmd_call("main", "zs", "total", "xs", "ys")
        assert len(out) == 1 and out[0].startswith("runtime: ") and int(out[0].split()[1]) >= 0
        np.testing.assert_array_equal(s.get_value("zs"), xs * ys + 1)
        assert s.get_value("total") == np.float32((xs * ys + 1).sum())
        assert s.cmd("shape", "zs") == ["5"] and s.cmd("type", "total") == ["f32"]
        assert s.cmd("kind", "[]f32") == ["array"] and s.cmd("kind", "f32") == ["primitive"]
        s.put_value("k", np.float32(3))
        s.cmd_call("scale", "scaled", "k", "zs")  # a result of one call as another's input
        np.testing.assert_array_equal(s.get_value("scaled"), (xs * ys + 1) * 3)
        both = tmp_path / "both.bin"
        s.cmd_store(str(both), "scaled", "total")  # and restored, two values from one file
        s.cmd_restore(str(both), ("again", "[]f32"), ("sum", "f32"))
        np.testing.assert_array_equal(s.get_value("again"), s.get_value("scaled"))
        s.cmd_rename("again", "renamed")
        s.cmd_free("renamed", "sum")
        with pytest.raises(futhark_server.Failure, match="Unknown variable: renamed"):
            s.cmd_free("renamed")
        with pytest.raises(futhark_server.Failure, match="Variable already exists: zs"):
            s.cmd_call("main", "zs", "t2", "xs", "ys")
        with pytest.raises(futhark_server.Failure, match="Wrong input type"):
            s.cmd_call("main", "a", "b", "k", "ys")
        s.put_value("short", np.arange(3, dtype=np.float32))  # a run-time error: the session goes on
        with pytest.raises(futhark_server.Failure, match="size mismatch: ys has size 3 where n = 5"):
            s.cmd_call("main", "a", "b", "xs", "short")
        params = s.cmd_tuning_params("main")
        assert params and all(p.startswith("main.") and len(p.split()) == 2 for p in params)
        name, cls = params[0].split()
        assert s.cmd_tuning_param_class(name) == cls
        s.cmd_set_tuning_param(name, "1")
        s.cmd_call("main", "zs2", "total2", "xs", "ys")
        np.testing.assert_array_equal(s.get_value("zs2"), xs * ys + 1)
        s.cmd_pause_profiling()
        s.cmd_unpause_profiling()
        assert s.cmd_report()[0].split() == ["kernel", "runs", "total", "us"]
        s.cmd_clear()
        with pytest.raises(futhark_server.Failure, match="Unknown variable: xs"):
            s.cmd_free("xs")
        with pytest.raises(futhark_server.Failure, match="Unknown command"):
            s.cmd("nonsense")


# ---- --library: Futhark's C API and a Python module over it ----

API_SOURCE = ("entry main [n] (xs: [n]f32) (ys: [n]f32) : ([n]f32, f32) =\n"
              "  let zs = map2 (\\x y -> x * y + 1) xs ys in (zs, reduce (+) 0 zs)\n"
              "entry scale (k: f32) (xss: [][]f32) : [][]f32 = map (map (* k)) xss")


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    folder = tmp_path_factory.mktemp("library")
    (folder / "prog.fut").write_text(API_SOURCE)
    assert incflat_main(["compile", "--backend=opencl", "--library", str(folder / "prog.fut")]) == 0
    return folder


def test_the_c_api_from_a_c_program(library, device):
    driver = library / "driver"
    compiler = cprogram.c_compiler()
    subprocess.run([*compiler, "-std=c99", "-Wall", "-Werror", f"-I{library}", str(ROOT / "tests/native/api_driver.c"),
                    f"-L{library}", "-lprog", f"-Wl,-rpath,{library}", "-o", str(driver)], check=True)
    proc = subprocess.run([str(driver), device], capture_output=True, text=True, timeout=120, env=ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "params 7, first scale.suff_outer_par_0 (threshold)"
    assert lines[1] == "main: [4] 1 3 5 7, total 16"
    assert lines[2] == "error: size mismatch: ys has size 3 where n = 4"


def test_the_python_module(library, device):
    code = ("import sys, numpy as np; sys.path.insert(0, sys.argv[1]); import prog\n"
            "p = prog.load(device=sys.argv[2])\n"
            "zs, total = p.main(np.arange(4, dtype=np.float32), np.full(4, 2, np.float32))\n"
            "print(zs.tolist(), float(total), zs.dtype)\n"
            "print(p.scale(np.float32(2), np.arange(6, dtype=np.float32).reshape(2, 3)).tolist())\n"
            "try:\n    p.main(np.arange(4, dtype=np.float32), np.ones(3, np.float32))\n"
            "except prog.ProgramError as e:\n    print('error:', e)\n"
            "try:\n    p.main(np.arange(4), np.ones(4, np.float32))\n"
            "except TypeError as e:\n    print('type:', e)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(library), device], capture_output=True, text=True,
                          timeout=120, env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "[1.0, 3.0, 5.0, 7.0] 16.0 float32", "[[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]",
        "error: size mismatch: ys has size 3 where n = 4",
        "type: argument 1 of entry point 'main': expected a value of type []f32, got int64 of rank 1"]


# ---- generated programs that may fail at run time (test_differential's), natively ----

from hypothesis import given, note  # noqa: E402

import known_issues  # noqa: E402
from incflat.datasets import compare_values  # noqa: E402
from incflat.harness import Interpreter, load_program  # noqa: E402
from strategies import failing_inputs, failing_programs, fuzz_settings, inputs, programs  # noqa: E402
from test_differential import internal  # noqa: E402


def loaded_and_built(source: str, folder: pathlib.Path):
    """A generated program as the harness loads it (for the interpreter), its generated code, and its native
    executable."""
    (folder / "generated.fut").write_text(source)
    loaded = load_program(folder / "generated.fut")
    assert loaded.error is None
    generated = pipeline.compile(source, str(folder / "generated.fut"), until="generate")
    native = folder / "generated"
    native.write_bytes(cprogram.build(cprogram.program_text(generated), native, cache_dir() / "native"))
    native.chmod(0o755)
    return loaded, generated, native


@fuzz_settings(8)
@given(program=failing_programs(), args=failing_inputs())
def test_generated_programs_agree_with_the_interpreter_natively(device, tmp_path_factory, program, args):
    source, entries = program
    note(source)
    loaded, generated, native = loaded_and_built(source, tmp_path_factory.mktemp("native-differential"))
    reproducer = {"source": source, "args": [a.tolist() for a in args], "backend": "opencl"}
    expected = {entry: Interpreter(loaded).run(entry, args) for entry in entries}
    for params in [{}] + tuning.version_assignments(tuning.build_forest(generated.params)):
        runner = NativeRunner(native, device, params)
        for entry in entries:
            got, want = runner.run(entry, args), expected[entry]
            where = f"entry {entry}, parameters {params}"
            if internal(got.error) or (got.error or "").startswith("Error: OpenCL"):
                known_issues.report("native crash", f"{where}: {got.error}", reproducer)
            elif (got.error is None) != (want.error is None):
                known_issues.report("disagreement", f"{where}: interpreter {want.error or want.values}, "
                                                    f"native {got.error or got.values}", reproducer)
            elif got.error is None:
                mismatch = compare_values(list(got.values), list(want.values))
                if mismatch is not None:
                    known_issues.report("different values", f"{where}: {mismatch}", reproducer)


@fuzz_settings(2)  # (each example compiles a program of many entry points: slow on a CPU; INCFLAT_FUZZ=long runs more)
@given(source=programs(), args=inputs())
def test_generated_expressions_agree_with_the_interpreter_natively(device, tmp_path_factory, source, args):
    """test_generated's programs (random scalar expressions in maps, reductions, scans and host-level counts)."""
    note(source)
    loaded, generated, native = loaded_and_built(source, tmp_path_factory.mktemp("native-generated"))
    vectors, matrix = args
    runs = [(e.name, matrix if e.name in ("s", "c") else vectors) for e in loaded.source.entries]
    expected = {}
    for entry, entry_args in runs:
        outcome = Interpreter(loaded).run(entry, entry_args)
        assert outcome.error is None, outcome.error
        expected[entry] = list(outcome.values)
    for params in [{}] + tuning.version_assignments(tuning.build_forest(generated.params)):
        runner = NativeRunner(native, device, params)
        for entry, entry_args in runs:
            got = runner.run(entry, entry_args)
            assert got.error is None, f"{entry} {params}: {got.error}"
            mismatch = compare_values(list(got.values), expected[entry])
            assert mismatch is None, f"{entry} {params}: {mismatch}"


def test_arrays_swapped_in_a_loop(device, tmp_path):
    """A loop whose state swaps two arrays: the memory one target lets go of is the other's (a release between
    the two bindings put it on the free list, where the next allocation took it)."""
    source = ("def main [m] (xs: [m]f32) (ys: [m]f32) (n: i64) : [m]f32 =\n"
              "  let (a, b) = loop (a, b) = (map (+1) xs, map (+2) ys) for _i < n do (map (*2) b, a)\n"
              "  in map2 (\\x y -> x * 10 + y) a b")
    native = build(source, tmp_path)
    prog = source_program(source, "swap.fut")
    xs, ys = np.arange(3, dtype=np.float32), np.arange(3, 6, dtype=np.float32)
    for n in (1, 2, 5, 20):
        proc = run_native(native, binary_values([xs, ys, np.int64(n)]), "-d", device, "-b")
        assert proc.returncode == 0, proc.stderr.decode()
        expected = run_entry(prog, "main", [xs, ys, np.int64(n)])[0]
        np.testing.assert_array_equal(read_values(io.BytesIO(proc.stdout))[0], expected)
