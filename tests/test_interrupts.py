"""Ctrl-C stops a compiled program with `Interrupted.` and status 130, never a traceback, whenever it comes:
while the program imports its modules, or later (building its kernels, waiting for its input)."""

import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT
from incflat.cli import compile_file

# A numpy that announces its import in a file and takes its time: the interrupt comes while the program
# imports its modules, whatever the machine's speed.
SLOW_NUMPY = """\
import os, pathlib, sys, time
pathlib.Path(os.environ["IMPORTING_NUMPY"]).write_text("importing")
time.sleep(30)
"""


@pytest.fixture(scope="module")
def waiting_program(tmp_path_factory):
    folder = tmp_path_factory.mktemp("interrupts")
    fut = folder / "prog.fut"
    fut.write_text("entry main (xs: []i32): i32 = i32.sum xs\n")
    return compile_file(fut, folder / "prog.py", backend="pyopencl")


def interrupted(program, env, ready) -> tuple:
    """(status, stderr) of the program interrupted once `ready()` holds."""
    process = subprocess.Popen([sys.executable, str(program)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env)  # (it waits for its input)
    deadline = time.monotonic() + 60
    while not ready() and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    return process.returncode, err.decode()


def test_an_interrupt_while_the_program_imports(waiting_program, tmp_path):
    (tmp_path / "numpy.py").write_text(SLOW_NUMPY)
    marker = tmp_path / "importing"
    env = dict(os.environ, PYTHONPATH=str(tmp_path), IMPORTING_NUMPY=str(marker))
    assert interrupted(waiting_program, env, marker.exists) == (130, "Interrupted.\n")


@pytest.mark.parametrize("delay", [0.5, 2.0])
def test_an_interrupt_later(delay, waiting_program):
    start = time.monotonic()
    assert interrupted(waiting_program, None, lambda: time.monotonic() > start + delay) == (130, "Interrupted.\n")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_incflat_loads_its_modules_ends_it_quietly(sig, tmp_path):
    """incflat's own start-up (its modules import numpy): no traceback, the signal's status."""
    (tmp_path / "numpy.py").write_text(SLOW_NUMPY)
    marker = tmp_path / "importing"
    fut = tmp_path / "p.fut"
    fut.write_text("entry main (x: i32): i32 = x\n")
    process = subprocess.Popen([sys.executable, "-m", "incflat", "check", str(fut)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=ROOT,
                               env=dict(os.environ, PYTHONPATH=str(tmp_path),
                                        IMPORTING_NUMPY=str(marker)))
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(sig)
    _, err = process.communicate(timeout=60)
    assert (process.returncode, err.decode()) == (128 + sig, "")


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM])
def test_a_signal_once_the_command_has_ended_keeps_its_status(sig):
    """The long fuzz run: SIGHUP to `incflat test` as it exited killed it (-1 where its status was 0): Python puts
    the default handlers back while it shuts down. Here the signal comes from an exit hook, after the command."""
    code = ("import atexit, os, signal, incflat.cli as cli\n"
            "cli.main = lambda argv=None: 0\n"
            f"atexit.register(lambda: os.kill(os.getpid(), {int(sig)}))\n"
            "cli.run()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
