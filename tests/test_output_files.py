"""A compiled program's output files (-t, --profile-json) written where they lead: into a FIFO that a reader
holds (not replaced by a file, and no wait before the run), through a symbolic link to a file not there yet
(the link kept). Both backends."""

import os
import threading

import pytest

from conftest import run_program
from incflat.cli import compile_file
from incflat.codegen import cprogram

BACKENDS = ["pyopencl"] + (["opencl"] if cprogram.c_compiler() else [])


@pytest.fixture(scope="module", params=BACKENDS)
def program(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"outputs-{request.param}")
    fut = folder / "sum.fut"
    fut.write_text("entry main (xs: []i32): i32 = i32.sum xs\n")
    return compile_file(fut, folder / "sum", backend=request.param)


def test_runtimes_into_a_fifo(program, device, tmp_path):
    fifo = tmp_path / "times"
    os.mkfifo(fifo)
    read = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_text()))
    reader.start()
    done = run_program(program, b"[1, 2, 3]", "-d", device, "-r", "2", "-t", str(fifo))
    reader.join(60)
    assert done.stdout.decode().strip() == "6i32"
    assert fifo.is_fifo() and len(read) == 1 and len(read[0].split()) == 2


def test_runtimes_through_a_link_to_nothing(program, device, tmp_path):
    link = tmp_path / "times"
    link.symlink_to(tmp_path / "target")
    run_program(program, b"[1, 2, 3]", "-d", device, "-r", "3", "-t", str(link))
    assert link.is_symlink() and len((tmp_path / "target").read_text().split()) == 3


def test_a_fifo_that_nothing_reads_is_an_error_not_a_wait(program, device, tmp_path):
    fifo = tmp_path / "times"
    os.mkfifo(fifo)
    done = run_program(program, b"[1, 2, 3]", "-d", device, "-t", str(fifo), check=False)
    assert (done.returncode, done.stderr.decode()) == (1, f"Error: -t {fifo}: no process reads this FIFO\n")
    assert fifo.is_fifo()
