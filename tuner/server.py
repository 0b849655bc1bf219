"""A native program's `--server` processes, one per configuration, kept across the tuner's invocations
(tuner/program.py's Program uses them for its timed runs).

A native program (--backend=opencl) speaks Futhark's server protocol with `--server` (codegen/native/server.c):
a command a line, each response ending with the line `%%% OK`, a failed one holding `%%% FAILURE` and its
message before that; `call` prints `runtime: MICROSECONDS` first. A process started for each invocation pays
its start each time (on a GPU, an OpenCL context and the program's load); a server started once for a
configuration (its --param values and its context's options) runs it again on any dataset: each dataset's
input is loaded into it once (`restore`), and each run is a `call`.

What a server is given to read or write (an input given inline or gzipped, the results to check) is an
unnamed temporary file of the tuner, which the server opens as /proc/TUNER/fd/N: nothing is left in a
temporary folder, whatever happens to the tuner. The servers die with the tuner (PR_SET_PDEATHSIG) and are in
children.children, so that kill_children kills them too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import IO

from incflat.datasets import Dataset, InlineValues
from incflat.files import signals_held_back
from incflat.tuner.children import RunResult, checked, child_set_up, children, decode, failure_reason, param_args

# "0" (or "no", "off", "false") runs every invocation as a process of its own; unset, or anything else: servers.
SERVERS_ENVIRONMENT = "INCFLAT_TUNER_SERVERS"
MAX_SERVERS = 4  # the live servers of a program; the least recently used one is closed to start another
CLOSE_WAIT_S = 5.0  # how long a closed server (its stdin at end of file) may take to exit before it is killed

# The program options that a server takes on its command line as a run does: they set up its context, and are
# part of its configuration. Any other option (-L, -P, --profile-json, -D, -r, ...) needs a run of its own.
_FLAGS = frozenset({"--no-fallback"})
_VALUED = frozenset({"-d", "--device", "-p", "--platform", "--default-threshold", "--default-group-size",
                     "--default-tile-size"})


def servers_wanted(flag: bool | None) -> bool:
    """Whether a native program's timed runs go through servers: `flag`, else the environment's say."""
    if flag is not None:
        return flag
    return os.environ.get(SERVERS_ENVIRONMENT, "").strip().lower() not in ("0", "no", "off", "false")


def server_options(tokens: Sequence[str]) -> bool:
    """Whether a server can take program options `tokens` on its command line (see _FLAGS, _VALUED)."""
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name = token.split("=", 1)[0] if token.startswith("--") else token[:2]
        if token in _FLAGS:
            i += 1
        elif name in _VALUED and token != name:  # --device=X, -dX
            i += 1
        elif token in _VALUED and i + 1 < len(tokens):
            i += 2
        else:
            return False
    return True


# A time to answer by (time.monotonic()), and the failure that passing it is.
_Deadline = tuple[float, str]


class _Ended(Exception):
    """The server's output ended: its process exited (or was killed)."""


class _Late(Exception):
    """The deadline passed before the server answered."""


class _Refused(Exception):
    """A command failed; the message is the server's."""


class _Over(Exception):
    """The invocation is over: `failure` (the server concerned is killed and dropped)."""

    def __init__(self, failure: str, timed_out: bool = False):
        super().__init__(failure)
        self.failure, self.timed_out = failure, timed_out


class _Fallback(Exception):
    """The invocation needs the command line: its input cannot be loaded into a server, whose words for that
    would differ from the command line's, or a server cannot do what the command line does."""


class _Server:
    """One `--server` process. Its stderr goes to an unnamed temporary file, read as it grows (no thread:
    the tuner starts children with a preexec_fn, which threads make unsafe)."""

    def __init__(self, argv: list[str]):
        self.stderr: IO[bytes] = tempfile.TemporaryFile()
        try:
            with signals_held_back() as unblock:  # as children.run_child
                self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=self.stderr, preexec_fn=child_set_up(unblock))
                children.add(self.proc)
        except BaseException:
            self.stderr.close()
            raise
        self.loaded: Hashable | None = None  # the (entry, input) that its variables in0, in1, ... hold
        self.pending: list[str] = []  # result variables not freed yet
        self._buffer = b""
        self._read_to = 0

    def command(self, words: Sequence[str] | None, deadline: float) -> list[str]:
        """The response's lines (None: the greeting of a fresh server); raises _Refused, _Ended or _Late."""
        if words is not None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write((" ".join(map(_word, words)) + "\n").encode())
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError):
                raise _Ended from None
        lines: list[str] = []
        failure: list[str] | None = None
        while True:
            line = self._line(deadline)
            if line == "%%% OK":
                if failure is not None:
                    raise _Refused("; ".join(failure) or "no message")
                return lines
            if line == "%%% FAILURE":
                failure = []
            else:
                (lines if failure is None else failure).append(line)

    def _line(self, deadline: float) -> str:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Late
            if select.select([fd], [], [], left)[0]:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise _Ended
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode(errors="replace").rstrip("\r")

    def new_stderr(self) -> str:
        """What the server wrote to stderr since the last call (read without moving the offset it writes at)."""
        with contextlib.suppress(OSError, ValueError):
            fd = self.stderr.fileno()
            size = os.fstat(fd).st_size
            data = os.pread(fd, size - self._read_to, self._read_to) if size > self._read_to else b""
            self._read_to += len(data)
            return decode(data)
        return ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def exit_status(self) -> int:
        """The status of a server whose output ended (killed if it does not exit)."""
        try:
            return self.proc.wait(timeout=CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def close(self, kill: bool = False) -> None:
        """Ends the process: at the end of its input (it frees its variables and exits), or killed."""
        if kill:
            self.proc.kill()
        with contextlib.suppress(OSError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        finally:
            children.discard(self.proc)
            for stream in (self.proc.stdout, self.stderr):
                with contextlib.suppress(OSError):
                    stream.close()


class ServerPool:
    """The servers of one native program, at most `size` at once, by configuration: the options that set up a
    context (server_options) and the --param values (none: the program's defaults). A server of the program
    as it was is closed once the file changes (the tuner writes the tuned program back over it)."""

    def __init__(self, command: Sequence[str], extra_args: Sequence[str], path: os.PathLike, size: int = MAX_SERVERS):
        self.command, self.extra_args, self.path, self.size = list(command), list(extra_args), path, max(1, size)
        self.started = 0  # servers started, ever
        self._servers: OrderedDict[Hashable, _Server] = OrderedDict()  # least recently used first
        self._entries: dict[str, tuple[list[str], int] | None] = {}  # entry point: its inputs' types, its result
        # count (None: the program has no such entry point)
        self._unloadable: set[Hashable] = set()  # (entry, input) a server could not load: the command line's
        self._proc_paths = True  # whether a server opens the tuner's unnamed files (/proc/PID/fd/N)
        self._signature: tuple | None = None
        self._stderr: list[str] = []  # the invocation's servers' stderr so far
        self._invocations = 0

    def close(self) -> None:
        """Closes every server."""
        while self._servers:
            self._drop(next(iter(self._servers)))

    def run(
        self,
        dataset: Dataset,
        params: Mapping[str, int] | None,
        *,
        timeout: float,
        setup_timeout: float,
        timing_runs: int,
        options: Sequence[str] = (),
        check: Callable[[bytes], str | None] | None = None,
    ) -> RunResult | None:
        """Program.run_in_turn of one configuration through its server: the same runs (`-r timing_runs`, no
        warm-up: neither has one), the last results given to `check`. `timeout` limits the runs; starting a
        server and loading the dataset into it are limited by `setup_timeout` (the longest limit the program was
        given: an invocation's own limit is learnt from invocations that had neither). None where the command
        line must run it: options that a server cannot take, or see _Fallback. (Configurations in turn run in
        one process, Program's: calls alternating between processes on one GPU pay its switch between their
        contexts, tens of µs a call on an H100.)"""
        if timing_runs < 1 or not server_options(options):
            return None
        loading = (dataset.entry, dataset.input)
        if loading in self._unloadable or (not self._proc_paths and _input_path(dataset) is None):
            return None
        start = time.monotonic()
        self._stderr = []
        key = (tuple(options), tuple(sorted((params or {}).items())))
        used: list[_Server] = []
        try:
            with contextlib.ExitStack() as files:
                if not self._same_program():
                    return None
                limit = max(setup_timeout, timeout)
                setup = (start + limit, f"timed out after {limit:.3g} s (starting the program's server or loading "
                                        f"the dataset into it)")
                server = self._acquire(key, setup)
                used = [server]
                types, results = self._entry(server, dataset.entry, setup)
                inputs = [f"in{k}" for k in range(len(types))]
                if server.loaded != loading:
                    source = _input_path(dataset) or _input_copy(dataset, files)
                    self._load(server, loading, source, list(zip(inputs, types)), setup)
                runs = (time.monotonic() + timeout, f"timed out after {timeout:.3g} s")
                self._invocations += 1  # (results named afresh: what an interrupt left behind is in no way)
                outputs = [f"out{self._invocations}_{k}" for k in range(results)]
                times = self._runs(dataset.entry, server, inputs, outputs, runs, timing_runs,
                                   keep=check is not None)
                out = self._results(server, outputs, runs, files) if check is not None else b""
        except _Over as over:
            self._free_pending(used)
            return RunResult(over.failure, self._collect(used), time.monotonic() - start, timed_out=over.timed_out)
        except _Fallback:
            self._free_pending(used)
            self._collect(used)
            return None
        except _Refused:  # a command that cannot fail did: the server is in no known state
            for server in used:
                self._drop(server, kill=True)
            self._collect(used)
            return None
        result = checked(RunResult(None, self._collect(used), time.monotonic() - start), out, check)
        if not result.ok:  # (no runtimes, as from the command line)
            return result
        return dataclasses.replace(result, times_us=tuple(times))

    def _same_program(self) -> bool:
        """Closes the servers of an earlier version of the program file; False where it cannot be read (the
        command line then says why)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        signature = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if signature != self._signature:
            self.close()
            self._entries.clear()
            self._unloadable.clear()
            self._signature = signature
        return True

    def _acquire(self, key: Hashable, deadline: _Deadline) -> _Server:
        """The server of configuration `key`, started if there is none (or it died), the least recently used
        one closed where that makes too many."""
        server = self._servers.get(key)
        if server is not None and not server.alive():  # killed (kill_children) or ended while idle
            self._drop(key)
            server = None
        if server is None:
            while len(self._servers) >= self.size:  # (before: device memory for one more)
                self._drop(next(iter(self._servers)))
            options, values = key
            argv = [*self.command, "--server", *options, *param_args(dict(values)), *self.extra_args]
            try:
                server = _Server(argv)
            except OSError as e:  # (the command line's words for it)
                raise _Over(f"{e.filename or argv[0]}: {e.strerror or e}") from None
            self.started += 1
            self._servers[key] = server
            self._talk(server, None, deadline)
        self._servers.move_to_end(key)
        return server

    def _entry(self, server: _Server, entry: str, deadline: _Deadline) -> tuple[list[str], int]:
        """An entry point's inputs' types and its number of results; an unknown one is the command line's to
        name (its message lists the entry points)."""
        if entry not in self._entries:
            try:
                types = self._talk(server, ["inputs", entry], deadline)
                self._entries[entry] = (types, len(self._talk(server, ["outputs", entry], deadline)))
            except _Refused:
                self._entries[entry] = None
        known = self._entries[entry]
        if known is None:
            raise _Fallback
        return known

    def _load(self, server: _Server, loading: Hashable, path: str, typed: list[tuple[str, str]],
              deadline: _Deadline) -> None:
        """The dataset's input into the server's in0, in1, ..., its earlier variables freed. A file the server
        cannot read as the entry point's inputs is the command line's to name (its words are not the
        server's), and the dataset's invocations take the command line from now on."""
        if server.loaded is not None:
            self._talk(server, ["clear"], deadline)
            server.loaded = None
        try:
            self._talk(server, ["restore", path, *(word for pair in typed for word in pair)], deadline)
        except _Refused as e:
            if path.startswith("/proc/") and str(e).startswith("Failed to open"):
                self._proc_paths = False  # (a /proc that the server may not read: files given by path only)
            else:
                self._unloadable.add(loading)
            raise _Fallback from None
        server.loaded = loading

    def _runs(self, entry: str, server: _Server, inputs: list[str], outputs: list[str], deadline: _Deadline,
              timing_runs: int, keep: bool) -> list[float]:
        """The runs' times, each call's results freed but the last's where `keep`."""
        times = []
        for run in range(timing_runs):
            try:
                lines = self._talk(server, ["call", entry, *outputs, *inputs], deadline)
            except _Refused as e:
                self._drop(server, kill=True)  # (its device's state after a failure is not to be trusted)
                if str(e).startswith("OpenCL: "):  # perhaps the memory that the other servers hold
                    self.close()
                    raise _Fallback from None
                raise _Over(f"server call failed: Error: {e}") from None
            server.pending += outputs
            times.append(self._runtime(server, lines))
            if not (keep and run == timing_runs - 1):
                self._free(server, outputs, deadline)
        return times

    def _runtime(self, server: _Server, lines: list[str]) -> float:
        for line in lines:
            if line.startswith("runtime: "):
                with contextlib.suppress(IndexError, ValueError):
                    return float(line.split()[1])
        self._drop(server, kill=True)
        raise _Over(f"the server's call printed no runtime ({'; '.join(lines) or 'nothing'})")

    def _results(self, server: _Server, outputs: list[str], deadline: _Deadline,
                 files: contextlib.ExitStack) -> bytes:
        """The first configuration's last results, in Futhark's binary format (as `-b` writes them), freed."""
        out = files.enter_context(tempfile.TemporaryFile())
        try:
            self._talk(server, ["store", _proc_path(out), *outputs], deadline)
        except _Refused as e:
            if str(e).startswith("Failed to open"):
                self._proc_paths = False
                raise _Fallback from None
            self._drop(server, kill=True)
            raise _Over(f"server store failed: Error: {e}") from None
        self._free(server, outputs, deadline)
        out.seek(0)
        return out.read()

    def _free(self, server: _Server, outputs: list[str], deadline: _Deadline) -> None:
        if outputs:
            self._talk(server, ["free", *outputs], deadline)
        server.pending = [name for name in server.pending if name not in outputs]

    def _free_pending(self, used: list[_Server]) -> None:
        for server in used:
            if server.pending and server in self._servers.values():
                try:
                    self._talk(server, ["free", *server.pending], (time.monotonic() + CLOSE_WAIT_S, "timed out"))
                    server.pending = []
                except (_Refused, _Over):
                    self._drop(server, kill=True)

    def _talk(self, server: _Server, words: list[str] | None, deadline: _Deadline) -> list[str]:
        """A command's response (_Refused where it failed); where the server ends or is late, it is dropped
        and the invocation is over."""
        try:
            return server.command(words, deadline[0])
        except _Refused:
            raise
        except _Late:
            self._drop(server, kill=True)
            raise _Over(deadline[1], timed_out=True) from None
        except _Ended:
            status = server.exit_status()
            text = server.new_stderr()
            self._stderr.append(text)
            self._drop(server)
            raise _Over(failure_reason(status, text)) from None
        except BaseException:  # an interrupt: a server in the middle of a command is in no known state
            self._drop(server, kill=True)
            raise

    def _drop(self, which: Hashable | _Server, kill: bool = False) -> None:
        """Closes a server (by key or itself) and takes it out of the pool, its stderr kept for the report."""
        key = which if not isinstance(which, _Server) else next((k for k, s in self._servers.items() if s is which),
                                                                None)
        server = self._servers.pop(key, None) if key is not None else which
        if server is None or server.stderr.closed:
            return
        self._stderr.append(server.new_stderr())
        server.close(kill=kill)

    def _collect(self, used: list[_Server]) -> str:
        """The stderr of the invocation's servers (a dropped one's is collected when it ends)."""
        for server in used:
            if not server.stderr.closed:
                self._stderr.append(server.new_stderr())
        text, self._stderr = "".join(self._stderr), []
        return text


def _word(word: str) -> str:
    """A word of a command: quoted where it holds a blank (server.c's words(); a word cannot hold a quote)."""
    return f'"{word}"' if not word or any(c in word for c in " \t") else word


def _proc_path(file: IO[bytes]) -> str:
    """The path by which a child opens one of the tuner's unnamed files afresh."""
    return f"/proc/{os.getpid()}/fd/{file.fileno()}"


def _input_path(dataset: Dataset) -> str | None:
    """A dataset's values file as a server can read it, by its own path (None: inline values, a gzipped file,
    or a path that a command cannot hold)."""
    if isinstance(dataset.input, InlineValues) or dataset.input.path.suffix == ".gz":
        return None
    path = os.path.abspath(dataset.input.path)
    return None if any(c in path for c in '"\r\n') else path


def _input_copy(dataset: Dataset, files: contextlib.ExitStack) -> str:
    """The dataset's values (inline, or gzipped, as program._stdin feeds them) in an unnamed temporary file."""
    copy = files.enter_context(tempfile.TemporaryFile())
    if isinstance(dataset.input, InlineValues):
        copy.write(dataset.input.text.encode())
    else:
        try:
            source = gzip.open(dataset.input.path, "rb") if dataset.input.path.suffix == ".gz" else open(
                dataset.input.path, "rb")
            with source:
                shutil.copyfileobj(source, copy)
        except OSError:
            raise _Fallback from None  # (the command line's words for it)
    copy.flush()
    return _proc_path(copy)
