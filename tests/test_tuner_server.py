"""The tuner's `--server` processes of a native program (tuner/server.py): one per configuration, reused by
its later invocations, giving what a process per invocation gives (runs, results to check, failures,
timeouts), at most so many at once, and none left behind."""

from __future__ import annotations

import gzip
import os
import shutil
import signal
import subprocess

import pytest

from conftest import DEVICES, NO_DEVICE
from incflat.codegen import cprogram
from incflat.datasets import Dataset, InlineValues, ValuesFile
from incflat.ir.runtime.tuning import NEVER
from incflat.tuner import server as servers
from incflat.tuner.children import kill_children
from incflat.tuner.program import Program

pytestmark = [pytest.mark.skipif(cprogram.c_compiler() is None, reason="no C compiler (cc, or $CC)"),
              pytest.mark.skipif(not DEVICES, reason=NO_DEVICE or "")]

T1, T2 = "main.suff_outer_par_0", "main.suff_intra_par_1"

SOURCE = """-- A map of a reduction (two thresholds), and a loop as long as it is asked to run.
-- ==
-- "small" input { [[1f32, 2f32], [3f32, 4f32]] 1i64 } output { [5f32, 11f32] }
-- "wide" input { [[1f32, 2f32, 3f32, 4f32, 5f32, 6f32, 7f32, 8f32]] 0i64 } output { [37f32] }

entry main [n][m] (xss: [n][m]f32) (i: i64): [n]f32 =
  map (\\xs -> reduce (+) 0 xs + xs[i]) xss

entry spin (k: i64) (xs: []f32) : []f32 =
  map (\\x -> loop a = x for j < k do a * 0.5f32 + f32.i64 j) xs
"""
SMALL = Dataset("small", "main", InlineValues("[[1f32, 2f32], [3f32, 4f32]] 1i64"), False)
WIDE = Dataset("wide", "main", InlineValues("[[1f32, 2f32, 3f32, 4f32, 5f32, 6f32, 7f32, 8f32]] 0i64"), False)
BAD = Dataset("bad", "main", InlineValues("[[1f32, 2f32]] 5i64"), False)  # out of bounds
SPIN = Dataset("spin", "spin", InlineValues("100000000000000i64 [1f32, 2f32]"), False)  # never ends
CONFIGURATIONS = ([None], [None, {T1: 1}], [{T1: NEVER, T2: 1}, {T1: 1}, {}], [{T1: 1}, {T1: 1}])


@pytest.fixture(autouse=True)
def _loader_environment(monkeypatch):
    for name in ("INCFLAT_OPENCL_LIBRARY", "PYOPENCL_HOME", "LD_LIBRARY_PATH"):  # as test_native_host's ENV
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv(servers.SERVERS_ENVIRONMENT, raising=False)


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    from incflat.cli import main as incflat_main
    folder = tmp_path_factory.mktemp("server")
    (folder / "prog.fut").write_text(SOURCE)
    assert incflat_main(["compile", "--backend=opencl", str(folder / "prog.fut")]) == 0
    program = folder / "prog"
    subprocess.run([str(program), "-d", DEVICES[0]], input=b"[[1f32]] 0i64", check=True, capture_output=True,
                   timeout=300)  # (the device's compiler's cache warm)
    return program


@pytest.fixture
def spawned(monkeypatch):
    """The argv of every process started: (server starts, other starts) of `program`."""
    started: list[list[str]] = []

    class Counting(subprocess.Popen):
        def __init__(self, args, *more, **options):
            started.append([str(a) for a in args])
            super().__init__(args, *more, **options)

    monkeypatch.setattr(subprocess, "Popen", Counting)

    def count(program) -> tuple[int, int]:
        mine = [argv for argv in started if argv[0] == str(program.absolute())]
        return sum("--server" in argv for argv in mine), sum("--server" not in argv for argv in mine)
    return count


def open_program(path, **options) -> Program:
    return Program(path, ["-d", DEVICES[0]], **options)


def results_of(program: Program, dataset: Dataset, configurations, **options):
    got: list[bytes] = []
    ran = program.run_in_turn(dataset, configurations, timeout=60, timing_runs=3,
                              check=lambda out: got.append(out), **options)
    return ran, got


def test_the_same_runs_results_and_checks_as_a_process_per_invocation(native, spawned):
    with open_program(native) as served, open_program(native, servers=False) as alone:
        assert served.servers is not None and alone.servers is None
        for dataset in (SMALL, WIDE, SMALL):
            binary = subprocess.run([str(native), "-d", DEVICES[0], "-b"], input=dataset.input.text.encode(),
                                    capture_output=True, check=True).stdout
            for configurations in CONFIGURATIONS:
                for program in (served, alone):
                    ran, got = results_of(program, dataset, configurations)
                    assert ran.ok, ran.failure
                    assert len(ran.times_us) == 3 and all(t >= 0 for t in ran.times_us)
                    assert [len(t) for t in ran.alternate_times_us] == [3] * (len(configurations) - 1)
                    assert got == [binary]  # byte for byte what -b writes
        problem = lambda out: "value #0 differs"  # noqa: E731
        for program in (served, alone):
            ran = program.run(SMALL, params={T1: 1}, timeout=60, timing_runs=2, check=problem)
            assert ran.failure == "wrong result: value #0 differs" and not ran.times_us
    # one server (no --param and none set are one: the only configuration run alone); a process per invocation
    # of several configurations in turn (three datasets, three such), per invocation without servers, and for -b
    assert spawned(native) == (2, 3 * 3 + 3 * 4 + 1 + 3)


def test_values_files_plain_and_gzipped(native, tmp_path):
    plain, packed = tmp_path / "small.in", tmp_path / "small.in.gz"
    plain.write_text(SMALL.input.text)
    packed.write_bytes(gzip.compress(SMALL.input.text.encode()))
    with open_program(native) as served, open_program(native, servers=False) as alone:
        for path in (plain, packed):
            dataset = Dataset("file", "main", ValuesFile(path.name, path), False)
            assert results_of(served, dataset, [None])[1] == results_of(alone, dataset, [None])[1] != []
        missing = Dataset("missing", "main", ValuesFile("nope.in", tmp_path / "nope.in"), False)
        assert results_of(served, missing, [None])[0].failure == results_of(alone, missing, [None])[0].failure


def test_failures_say_what_the_program_says(native, spawned):
    with open_program(native) as served, open_program(native, servers=False) as alone:
        assert results_of(served, SMALL, [None])[0].ok
        failed, apart = results_of(served, BAD, [None])[0], results_of(alone, BAD, [None])[0]
        assert apart.failure.startswith("exit status 1: Error: ") and "out of bounds" in apart.failure
        assert failed.failure == "server call failed: " + apart.failure.removeprefix("exit status 1: ")
        assert not failed.timed_out and not failed.times_us
        assert len(served.servers._servers) == 0  # a failed call's server is closed
        assert results_of(served, SMALL, [None])[0].ok  # and started again
        assert spawned(native)[0] == 2
        # the command line names what a server would name in its own words: an unknown entry point, an input
        # of the wrong type, a parameter that the program does not have
        unknown = Dataset("unknown", "nosuch", InlineValues("1i64"), False)
        wrong = Dataset("wrong", "main", InlineValues("[1f32, 2f32] 1i64"), False)
        for dataset, configuration in ((unknown, None), (wrong, None), (SMALL, {"main.nope": 1})):
            ran = [results_of(p, dataset, [configuration])[0].failure for p in (served, alone)]
            assert ran[0] == ran[1] and ran[0].startswith("exit status 1: Error: "), ran


def test_a_timeout_kills_the_server_and_the_next_run_starts_another(native, spawned):
    with open_program(native) as served, open_program(native, servers=False) as alone:
        assert results_of(served, SMALL, [None])[0].ok  # (the longest limit given: 60 s, for the start)
        for program in (served, alone):
            ran = program.run_in_turn(SPIN, [None], timeout=1.0, timing_runs=2)
            assert ran.timed_out and ran.failure == "timed out after 1 s", ran
            assert 1.0 <= ran.wall_s < 30
        assert len(served.servers._servers) == 0
        assert results_of(served, SMALL, [None])[0].ok
        assert spawned(native)[0] == 2


def test_a_repeated_configuration_reuses_its_server(native, spawned):
    with open_program(native) as served:
        for dataset in (SMALL, WIDE, SMALL, WIDE):
            for configurations in ([{T1: 1}], [{T1: NEVER}]):
                assert results_of(served, dataset, configurations)[0].ok
                served.run(dataset, params={T1: 1}, timeout=60, timing_runs=2)
        assert spawned(native) == (2, 0) and served.servers.started == 2
        # configurations in turn run in one process: alternating between processes, a GPU switches contexts
        assert results_of(served, SMALL, [{T1: 1}, {T1: NEVER}])[0].ok
        assert spawned(native) == (2, 1)
        # options that a server does not take run a process of their own; --no-fallback is a configuration's
        logged = served.run_in_turn(SMALL, [{T1: 1}], timeout=60, timing_runs=1, options=["-L"])
        assert logged.ok and "Compared main.suff_outer_par_0" in logged.stderr
        assert served.run(SMALL, params={T1: 1}, timeout=60).ok  # (no timed runs: a process of its own)
        assert spawned(native) == (2, 3)
        assert served.run_in_turn(SMALL, [{T1: 1}], timeout=60, timing_runs=2, options=["--no-fallback"]).ok
        assert spawned(native) == (3, 3)


def test_at_most_so_many_servers_the_least_recently_used_closed(native, spawned):
    with open_program(native, max_servers=2) as served:
        def run(*values):
            assert results_of(served, SMALL, [{T1: v} for v in values])[0].ok
            return {dict(key[1])[T1] for key in served.servers._servers}
        assert run(1) == {1} and run(2) == {1, 2}
        first = served.servers._servers[((), ((T1, 1),))].proc
        assert run(3) == {2, 3} and first.poll() is not None  # (1, the least recently used, closed)
        assert run(2) == {2, 3} and spawned(native)[0] == 3
        assert run(1) == {1, 2} and spawned(native)[0] == 4  # (3 closed)
        assert run(1, 2, 3) == {1, 2} and spawned(native)[0] == 4  # (in turn: a process of its own)
        procs = [s.proc for s in served.servers._servers.values()]
    assert all(p.poll() is not None for p in procs)  # closed with the program


def test_killed_servers_are_dropped_and_their_run_fails(native):
    with open_program(native) as served:
        assert results_of(served, SMALL, [None, {T1: 1}])[0].ok
        idle = [s.proc for s in served.servers._servers.values()]
        kill_children()  # (an interrupt kills the servers, idle or not)
        assert all(p.wait(timeout=10) < 0 for p in idle)
        assert results_of(served, SMALL, [None, {T1: 1}])[0].ok  # started again
        previous = signal.signal(signal.SIGALRM, lambda *_: kill_children())
        try:
            signal.setitimer(signal.ITIMER_REAL, 0.5)
            ran = served.run_in_turn(SPIN, [None], timeout=60, timing_runs=1)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        assert ran.failure == "exit status -9: no message" and not ran.timed_out
        assert ((), ()) not in served.servers._servers
        assert results_of(served, SMALL, [None])[0].ok
        busy = served.servers._servers[((), ())].proc

        def interrupt(*_):
            raise KeyboardInterrupt
        previous = signal.signal(signal.SIGALRM, interrupt)
        try:
            signal.setitimer(signal.ITIMER_REAL, 0.5)
            with pytest.raises(KeyboardInterrupt):
                served.run_in_turn(SPIN, [None], timeout=60, timing_runs=1)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        assert busy.poll() is not None and ((), ()) not in served.servers._servers  # (its state unknown)
        assert results_of(served, SMALL, [None, {T1: 1}])[0].ok


def test_a_program_replaced_gets_new_servers(native, tmp_path, spawned):
    program = tmp_path / "prog"
    shutil.copy(native, program)
    with open_program(program) as served:
        assert results_of(served, SMALL, [None])[0].ok
        old = served.servers._servers[((), ())].proc
        tuned = tmp_path / "tuned"
        tuned.write_bytes(cprogram.with_defaults(program.read_bytes(), {T1: 1}, None))
        tuned.chmod(0o755)
        os.replace(tuned, program)  # (as the tuner's write-back does)
        assert results_of(served, SMALL, [None])[0].ok
        assert old.poll() is not None and spawned(program)[0] == 2


def test_servers_can_be_turned_off(native, monkeypatch):
    assert open_program(native).servers is not None
    monkeypatch.setenv(servers.SERVERS_ENVIRONMENT, "0")
    assert open_program(native).servers is None and open_program(native, servers=True).servers is not None
    assert Program(native, ["-L"]).servers is None  # (options for every run that a server cannot take)
    assert servers.server_options(["-d", "x", "--device=y", "-dz", "--no-fallback", "--default-threshold", "5"])
    assert not servers.server_options(["-d"]) and not servers.server_options(["-P"])
    assert not servers.server_options(["-r", "3"]) and not servers.server_options(["--tuning", "f"])


def test_autotune_through_servers(tmp_path, monkeypatch):
    """`incflat autotune --backend=opencl` tunes with a server per configuration: fewer starts than timed
    invocations, and every server ended with the tuner."""
    from incflat.cli import main as incflat_main
    fut = tmp_path / "prog.fut"
    fut.write_text(SOURCE)
    started: list[subprocess.Popen] = []
    served: list[bool] = []
    start, run = servers._Server.__init__, servers.ServerPool.run

    def keep(self, argv):
        start(self, argv)
        started.append(self.proc)

    def count(self, dataset, params, **options):
        ran = run(self, dataset, params, **options)
        if servers.server_options(options.get("options", ())):  # (not the probes')
            served.append(ran is not None)
        return ran
    monkeypatch.setattr(servers._Server, "__init__", keep)
    monkeypatch.setattr(servers.ServerPool, "run", count)
    assert incflat_main(["autotune", "--backend=opencl", str(fut), "-r", "2", "--no-moderate"]) == 0
    lines = [line for line in (tmp_path / "prog.fut.tuning").read_text().splitlines() if not line.startswith("--")]
    assert {line.split("=")[0] for line in lines} == {T1, T2}
    assert all(served) and len(started) < len(served), (len(started), len(served))
    assert all(p.poll() is not None for p in started)
    out = subprocess.run([str(tmp_path / "prog")], input=SMALL.input.text.encode(), capture_output=True)
    assert out.returncode == 0 and out.stdout == b"[5.0f32, 11.0f32]\n"
