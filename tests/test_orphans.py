"""The processes incflat starts die with it, whatever kills it (SIGKILL, SIGHUP): `incflat run`'s program and
`incflat test`'s worker, which may be in the middle of a long run, are not left computing under pid 1."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")

# A run of many seconds on a CPU device: the worker is busy, not waiting for its next request.
SLOW = """\
-- ==
-- input { 10000000000i64 }
-- output { 0i64 }
entry main (n: i64): i64 = i64.sum (map (\\i -> loop acc = i for j < n do (acc * 3 + j) % 1000003) (iota 8))
"""


def descendants(pid: int) -> set:
    """The processes below pid, from /proc."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids) -> set:
    return {pid for pid in pids if Path(f"/proc/{pid}").exists()
            and Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"}


def killed_while(command, until, sig, timeout=120) -> set:
    """The descendants of `incflat COMMAND` still alive 10 s after sig killed it, once until(descendants) held."""
    process = subprocess.Popen([sys.executable, "-m", "incflat", *command], stdin=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    below = set()
    while time.monotonic() < deadline and not until(below):
        time.sleep(0.1)
        below = descendants(process.pid)
    assert until(below), f"never reached the moment to kill it: {below}"
    process.send_signal(sig)
    process.wait(30)
    deadline = time.monotonic() + 10
    while alive(below) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = alive(below)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGHUP])
def test_incflat_runs_program_dies_with_it(sig, tmp_path):
    fut = tmp_path / "wait.fut"
    fut.write_text("entry main (xs: []i32): i32 = i32.sum xs\n")  # (it waits for its input)
    started = lambda below: any("wait" in cmdline(pid) and "-m incflat" not in cmdline(pid) for pid in below)
    assert killed_while(["run", str(fut)], started, sig) == set()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGHUP])
def test_incflat_tests_worker_dies_with_it_mid_run(sig, tmp_path, device):
    fut = tmp_path / "slow.fut"
    fut.write_text(SLOW)
    working = lambda below: any("multiprocessing" in cmdline(pid) and "resource_tracker" not in cmdline(pid)
                                for pid in below) and time.sleep(3) is None  # (well into the run)
    assert killed_while(["test", "-d", device, str(fut)], working, sig) == set()
