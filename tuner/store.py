"""The tuning store: every measurement and ePar probe of the tuner in an sqlite file, so that a tuner run again
(after an interrupt, a kill, or a finished run) resumes: what was measured is not measured again.

By default the store is `prog.fut.tuning.db` beside the .fut file (`--store FILE`, `--no-store`). Its rows are
keyed by
- program: the sha256 of the compiled program with its tuned-defaults block emptied (by the module that owns
  the block, ir.runtime.tuning): tuning rewrites the block, the code stays the same;
- device: the host's name and the options passed to the program (`--pass-option`): `-d`/`-p` choose the
  device on a host, and any other option may change what is measured. The device's own name is known only
  after a run, so it cannot be part of a key that must be found before running;
- dataset: the sha256 of the entry point and the input's content (inline text, or the file's bytes), not its
  name;
- configuration: the `--param` values, and the sha256 of the whole program when some parameter is left out:
  such a run uses the defaults baked into the block (the untuned measurements are runs with no --param at all).

A measurement is one row per program invocation: the first, then one per `measure_more`. A measurement that
timed out is used again only under a time limit no longer than the one it failed under. A probe is one row: the
ePars, the device's name and default threshold, and the timed runs of its first run, from which the bench
learns the dataset's noise as the live probe taught it. Probe failures are not stored (a longer --timeout may
cure them). A paired invocation (two configurations' runs taken in turn, measure.compare_paired) is a row of
each configuration's runs and a row of the pairs. A store of schema 1 (no probe runs) or 2 (no pairs) is
brought to schema 3 when it is opened.
"""

from __future__ import annotations

import hashlib
import json
import reprlib
import shlex
import socket
import sqlite3
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from incflat.datasets import Dataset, InlineValues
from incflat.ir.errors import ToolError
from incflat.tuner.measure import Measurement
from incflat.files import file_place_problem

APPLICATION_ID = 0x1CF1A701  # sqlite's application_id of a tuning store: a file incflat created
SCHEMA_VERSION = 3
SCHEMA = """
CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY,
    program TEXT NOT NULL, device TEXT NOT NULL, dataset TEXT NOT NULL, config TEXT NOT NULL,
    more INTEGER NOT NULL,  -- 0: a measurement's first invocation, 1: runs added to it
    times_us TEXT NOT NULL,  -- JSON list of the timed runs
    failure TEXT,  -- NULL when the invocation succeeded
    timed_out_after_s REAL,  -- the time limit it exceeded, if that was the failure
    wall_s REAL NOT NULL,
    dataset_name TEXT NOT NULL, recorded TEXT NOT NULL
);
CREATE INDEX evaluation_keys ON evaluations (program, device, dataset, config);
CREATE TABLE pairs (
    program TEXT NOT NULL, device TEXT NOT NULL, dataset TEXT NOT NULL, first TEXT NOT NULL, second TEXT NOT NULL,
    first_times_us TEXT NOT NULL, second_times_us TEXT NOT NULL,  -- JSON lists of the timed runs, in turn
    wall_s REAL NOT NULL,
    dataset_name TEXT NOT NULL, recorded TEXT NOT NULL
);
CREATE INDEX pair_keys ON pairs (program, device, dataset, first, second);
CREATE TABLE probes (
    program TEXT NOT NULL, device TEXT NOT NULL, dataset TEXT NOT NULL, config TEXT NOT NULL,
    epars TEXT NOT NULL,  -- JSON {threshold: [values]}
    device_name TEXT,
    dataset_name TEXT NOT NULL, recorded TEXT NOT NULL,
    PRIMARY KEY (program, device, dataset, config)
);
"""
# schema 1 -> 2: the probe's timed runs (warm-up first, JSON; NULL: none), its wall time and the device's default
# threshold
PROBE_RUNS = ("ALTER TABLE probes ADD COLUMN times_us TEXT", "ALTER TABLE probes ADD COLUMN wall_s REAL",
              "ALTER TABLE probes ADD COLUMN default_threshold INTEGER")
# schema 2 -> 3: the paired invocations (the table and its index, as SCHEMA makes them)
PAIRS = tuple(statement for statement in SCHEMA.split(";") if "pair" in statement)


def default_store_path(fut_path: Path) -> Path:
    return fut_path.with_name(fut_path.name + ".tuning.db")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class ProgramKey:
    """What a stored row of one program is keyed by, besides its dataset and configuration."""

    program: str  # sha256 of the program, its tuned-defaults block emptied
    whole: str  # sha256 of the whole program, block included
    device: str
    params: frozenset[str]  # every parameter the program lists

    @staticmethod
    def of(program: str | bytes, params: Collection[str], extra_args: Sequence[str]) -> "ProgramKey":
        """The key of a compiled program's contents (writeback.read_program)."""
        from incflat.tuner.writeback import with_tuned_defaults

        def data(contents):
            return contents if isinstance(contents, bytes) else contents.encode()
        code = with_tuned_defaults(program, {}, None)
        device = " ".join([socket.gethostname(), shlex.join(extra_args)]).strip()
        return ProgramKey(_sha256(data(code)), _sha256(data(program)), device, frozenset(params))

    def config(self, params: Mapping[str, int] | None) -> str:
        given = dict(params or {})
        defaults = None if self.params <= set(given) else self.whole
        return json.dumps({"params": given, "defaults": defaults}, sort_keys=True)


def dataset_key(dataset: Dataset) -> str:
    digest = hashlib.sha256(f"{dataset.entry}\0".encode())
    if isinstance(dataset.input, InlineValues):
        digest.update(b"inline\0" + dataset.input.text.encode())
    else:
        digest.update(b"file\0")
        try:
            with open(dataset.input.path, "rb") as file:
                for chunk in iter(lambda: file.read(1 << 20), b""):
                    digest.update(chunk)
        except OSError as e:
            raise ToolError(f"cannot read {dataset.input.path}: {e.strerror}") from None
    return digest.hexdigest()


@dataclass(frozen=True)
class Stored:
    measurement: Measurement
    walls: tuple[tuple[float, int], ...]  # (wall time, runs incl. warm-up) of each successful invocation


@dataclass(frozen=True)
class StoredProbe:
    epars: Mapping[str, tuple[int, ...]]
    device: str | None
    default_threshold: int | None
    times_us: tuple[float, ...]  # the timed runs of its first run, the warm-up first (): none
    wall_s: float


class Store:
    """An open store file; `for_program` gives the view a tuner measures through."""

    def __init__(self, path: Path):
        self.path = path
        self._connection = _open(path)

    def close(self) -> None:
        self._connection.close()

    def for_program(self, key: ProgramKey, warn: Callable[[str], None]) -> "ProgramStore":
        return ProgramStore(self, key, warn)


@dataclass
class ProgramStore:
    """The rows of one program on one device. A failure of the file during the run is reported once (`warn`),
    then the tuner goes on without the store."""

    store: Store
    key: ProgramKey
    warn: Callable[[str], None]
    _datasets: dict[Dataset, str] = field(default_factory=dict)
    _broken: bool = False

    def measurement(self, dataset: Dataset, params: Mapping[str, int] | None, limit_s: float) -> Stored | None:
        """The stored measurement of this configuration, or None: not stored, or a timeout under a shorter
        time limit than `limit_s`."""
        rows = self._query(
            "SELECT times_us, failure, timed_out_after_s, wall_s FROM evaluations"
            " WHERE program = ? AND device = ? AND dataset = ? AND config = ? ORDER BY id",
            (*self._where(dataset), self.key.config(params)))
        if not rows:
            return None
        found, walls = Measurement(), []
        for index, row in enumerate(rows):
            try:
                times, failure, timed_out_after, wall = _evaluation(row)
            except _DamagedRow as e:
                self._damaged(e)
                return None
            if timed_out_after is not None and timed_out_after < limit_s:
                return None
            run = Measurement(tuple(times), failure)
            found = run if index == 0 else found.merged(run)
            if run.ok:
                walls.append((wall, len(run.times_us) + 1))
        return Stored(found, tuple(walls))

    def add(self, dataset: Dataset, params: Mapping[str, int] | None, run: Measurement, wall_s: float,
            timed_out_after_s: float | None, more: bool) -> None:
        """Stores one invocation: a new measurement (replacing what was stored for it), or `more` runs of one."""
        where = (*self._where(dataset), self.key.config(params))
        statements = [] if more else [("DELETE FROM evaluations WHERE program = ? AND device = ? AND dataset = ?"
                                       " AND config = ?", where)]
        statements.append(self._evaluation(dataset, params, run, wall_s, timed_out_after_s, more))
        self._write(statements)

    def _evaluation(self, dataset: Dataset, params: Mapping[str, int] | None, run: Measurement, wall_s: float,
                    timed_out_after_s: float | None, more: bool) -> tuple[str, tuple]:
        """The statement that stores one invocation's runs of a configuration."""
        return ("INSERT INTO evaluations (program, device, dataset, config, more, times_us, failure,"
                " timed_out_after_s, wall_s, dataset_name, recorded) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (*self._where(dataset), self.key.config(params), int(more), json.dumps(list(run.times_us)),
                 run.failure, timed_out_after_s, wall_s, dataset.name, _now()))

    def pairs(self, dataset: Dataset, first: Mapping[str, int] | None,
              second: Mapping[str, int] | None) -> list[tuple[tuple[float, ...], tuple[float, ...]]]:
        """The stored paired invocations of two configurations: (first's runs, second's runs) each, in order."""
        configs = (self.key.config(first), self.key.config(second))
        rows = self._query(
            "SELECT first, first_times_us, second_times_us FROM pairs WHERE program = ? AND device = ?"
            " AND dataset = ? AND ((first = ? AND second = ?) OR (first = ? AND second = ?)) ORDER BY rowid",
            (*self._where(dataset), *configs, *reversed(configs)))
        found = []
        for which, a, b in rows:
            try:
                runs = (tuple(_column("pairs", "first_times_us", a, RUNS)),
                        tuple(_column("pairs", "second_times_us", b, RUNS)))
            except _DamagedRow as e:
                self._damaged(e)
                return []
            found.append(runs if which == configs[0] else runs[::-1])
        return found

    def add_pair(self, dataset: Dataset, first: Mapping[str, int] | None, second: Mapping[str, int] | None,
                 runs: tuple[Measurement, Measurement], wall_s: float,
                 merged: tuple[bool, bool] = (True, True)) -> None:
        """Stores a paired invocation: the pairs, and its runs added to the measurement of each configuration
        whose measurement takes them in the run (`merged`), so that one answered from the store is the run's."""
        statements = [self._evaluation(dataset, params, run, wall_s / 2, None, more=True)
                      for params, run, merge in zip((first, second), runs, merged) if merge]
        statements.append(("INSERT INTO pairs (program, device, dataset, first, second, first_times_us,"
                           " second_times_us, wall_s, dataset_name, recorded) VALUES (?,?,?,?,?,?,?,?,?,?)",
                           (*self._where(dataset), self.key.config(first), self.key.config(second),
                            *(json.dumps(list(run.times_us)) for run in runs), wall_s, dataset.name, _now())))
        self._write(statements)

    def probe(self, dataset: Dataset) -> StoredProbe | None:
        """The stored probe of a dataset, or None."""
        rows = self._query("SELECT epars, device_name, default_threshold, times_us, wall_s FROM probes"
                           " WHERE program = ? AND device = ? AND dataset = ? AND config = ?",
                           (*self._where(dataset), self.key.whole))
        if not rows:
            return None
        try:
            epars, device, default, times, wall = _probe(rows[0])
        except _DamagedRow as e:
            self._damaged(e)
            return None
        return StoredProbe({name: tuple(values) for name, values in epars.items()}, device, default,
                           tuple(times or ()), wall or 0.0)

    def add_probe(self, dataset: Dataset, found: StoredProbe) -> None:
        row = (*self._where(dataset), self.key.whole, json.dumps({k: list(v) for k, v in found.epars.items()}),
               found.device, found.default_threshold, json.dumps(list(found.times_us)) if found.times_us else None,
               found.wall_s, dataset.name, _now())
        self._write([("INSERT OR REPLACE INTO probes (program, device, dataset, config, epars, device_name,"
                      " default_threshold, times_us, wall_s, dataset_name, recorded)"
                      " VALUES (?,?,?,?,?,?,?,?,?,?,?)", row)])

    def _where(self, dataset: Dataset) -> tuple[str, str, str]:
        if dataset not in self._datasets:
            self._datasets[dataset] = dataset_key(dataset)
        return self.key.program, self.key.device, self._datasets[dataset]

    def _query(self, sql: str, args: tuple) -> list[tuple]:
        if self._broken:
            return []
        try:
            return self.store._connection.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            self._fail(f"failed ({e})")
            return []

    def _write(self, statements: list[tuple[str, tuple]]) -> None:
        if self._broken:
            return
        try:
            with _transaction(self.store._connection) as connection:
                for sql, args in statements:
                    connection.execute(sql, args)
        except sqlite3.Error as e:
            self._fail(f"failed ({e})")

    def _damaged(self, error: _DamagedRow) -> None:
        self._fail(f"has a damaged row ({error})", " (remove it to start a new store)")

    def _fail(self, problem: str, remedy: str = "") -> None:
        self._broken = True
        self.warn(f"the tuning store {self.store.path} {problem}; going on without it{remedy}")


class _DamagedRow(Exception):
    """A row that is not as the tuner writes it (edited, or damaged on disk): which value, and what it should be."""


@dataclass(frozen=True)
class _Kind:
    """What the tuner writes in a column it reads back."""

    what: str
    valid: Callable[[object], bool]
    json: bool = False  # JSON text, decoded before `valid`


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


RUNS = _Kind("a JSON list of run times", lambda v: isinstance(v, list) and all(map(_is_number, v)), json=True)
EPARS = _Kind("a JSON object of ePar values", lambda v: isinstance(v, dict) and all(
    isinstance(values, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in values)
    for values in v.values()), json=True)
NUMBER = _Kind("a number", _is_number)
NUMBER_OR_NULL = _Kind("a number or NULL", lambda v: v is None or _is_number(v))
INTEGER_OR_NULL = _Kind("an integer or NULL", lambda v: v is None or isinstance(v, int))
TEXT_OR_NULL = _Kind("text or NULL", lambda v: v is None or isinstance(v, str))


def _column(table: str, column: str, value, kind: _Kind):
    """A column's value (decoded, where it is JSON); one that is not of its kind is a _DamagedRow."""
    try:
        decoded = json.loads(value) if kind.json else value
        valid = kind.valid(decoded)
    except (TypeError, ValueError):  # not JSON text
        valid = False
    if not valid:
        raise _DamagedRow(f"{table}.{column} is {reprlib.repr(value)}, not {kind.what}")
    return decoded


def _evaluation(row: tuple) -> tuple:
    """(times, failure, timed_out_after_s, wall_s) of an evaluations row."""
    times, failure, timed_out_after, wall = row
    return (_column("evaluations", "times_us", times, RUNS), _column("evaluations", "failure", failure, TEXT_OR_NULL),
            _column("evaluations", "timed_out_after_s", timed_out_after, NUMBER_OR_NULL),
            _column("evaluations", "wall_s", wall, NUMBER))


def _probe(row: tuple) -> tuple:
    """(epars, device_name, default_threshold, times or None, wall_s or None) of a probes row."""
    epars, device, default, times, wall = row
    return (_column("probes", "epars", epars, EPARS), _column("probes", "device_name", device, TEXT_OR_NULL),
            _column("probes", "default_threshold", default, INTEGER_OR_NULL),
            None if times is None else _column("probes", "times_us", times, RUNS),
            _column("probes", "wall_s", wall, NUMBER_OR_NULL))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _open(path: Path) -> sqlite3.Connection:
    """Opens (or creates) a store; a file that is not one, or that sqlite cannot read, is a ToolError and is
    left as it was. Tuners may open one new store at once: whichever first holds sqlite's write lock creates
    the schema, the others wait for it (the busy timeout). So an empty file is taken for a store being created
    (sqlite makes the file before it takes the lock) and becomes one."""
    def refuse(why: str, remedy: str = "remove it, or tune") -> ToolError:
        return ToolError(f"the tuning store {path} {why}; {remedy} with --store FILE or --no-store")

    if problem := file_place_problem(path):
        raise refuse(problem, "tune")
    try:
        connection = sqlite3.connect(path, timeout=30, isolation_level=None)
    except sqlite3.Error as e:
        raise refuse(f"cannot be opened ({e})") from None
    try:
        with _transaction(connection):
            application_id = connection.execute("PRAGMA application_id").fetchone()[0]
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            objects = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if application_id == 0 and objects == 0:  # new
                # statement by statement: executescript would commit the transaction
                for statement in [*filter(str.strip, SCHEMA.split(";")), *PROBE_RUNS]:
                    connection.execute(statement)
                connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif application_id != APPLICATION_ID:
                raise refuse("is an sqlite database that incflat did not write")
            elif version in (1, 2):
                for statement in (PROBE_RUNS if version == 1 else ()) + PAIRS:
                    connection.execute(statement)
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif version != SCHEMA_VERSION:
                raise refuse(f"was written by another version of incflat (schema {version}, not {SCHEMA_VERSION})")
    except sqlite3.Error as e:
        connection.close()
        raise refuse(f"cannot be used ({e})") from None
    except ToolError:
        connection.close()
        raise
    return connection


@contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
