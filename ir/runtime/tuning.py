"""The tuning contract: what the compiler, every compiled program and the tuner agree on, defined once.

- Tuning parameters (`Param`): thresholds, named `<entry>.suff_outer_par_<k>` / `<entry>.suff_intra_par_<k>`,
  each guard being `threshold <= par` (true takes the less flattened version), and each kernel's workgroup
  size, grid size and tile size, and the program's `#[param(NAME)]` parameters. `--print-params` lists them
  one a line as `name (class)`; a threshold's class is `threshold(<default or def>, <ancestors>)` (an intra
  guard's default is INTRA_DEFAULT), each ancestor `name` or `!name` (reached when that guard was false).
  `listing` writes it; `parse_listing` is its only parser.
- The version tree (`build_forest`): the thresholds as nodes, each under the outcome of its parent, rebuilt the
  same way from the target IR (the compiler) and from a listing (the tuner); `version_assignments` enumerates
  threshold values that reach every code version. `NEVER` is the value that makes a guard false.
- Tuning files (`name=int` lines, `--` comments): `tuning_file_text` writes them, `parse_tuning_file` reads
  them, naming the line of an error.
- `--no-fallback`'s error: a workgroup-level version that a true comparison chose and the device cannot run
  stops the program with `the version guarded by <threshold> cannot run at <par> on ...` (`no_fallback_error`,
  `parse_no_fallback`), which tells the tuner that at this ePar the guard's true side runs its false side.
- Log lines: `-L` prints `Compared <threshold> <= <par>: true.` (`comparison_line`, `parse_comparisons`) and
  `-D` prints `Device: <name> (<platform>)` (`device_line`, `parse_device`) and `Default threshold: <n>`, the
  value of every threshold that lists no default and that no tuned default, tuning file or --param sets
  (`default_threshold_line`, `parse_default_threshold`).
- The tuned-defaults block of a compiled program, between two marker lines: `defaults_block` writes it (the
  compiler, at first empty) and `with_defaults` replaces it (the tuner).

This module is part of the runtime that every compiled program carries, so it imports only the standard
library.
"""

import argparse
import re
from dataclasses import dataclass
from typing import Optional

NEVER = 2 ** 31 - 1  # a threshold this large is false for every realistic degree of parallelism
# An intra-group guard's listed default, as in Futhark: a workgroup version runs by default when its inner
# parallelism fills at least a warp. Outer guards list none ("def": the device's default threshold).
INTRA_DEFAULT = 32

THRESHOLD = "threshold"
THREAD_BLOCK_SIZE = "thread_block_size"
GRID_SIZE = "grid_size"
TILE_SIZE = "tile_size"
SIZE_CLASSES = (THREAD_BLOCK_SIZE, GRID_SIZE, TILE_SIZE)
USER_PARAM = "user_param"  # `#[param(NAME)] e`: when set, NAME's value replaces e's


class ContractError(ValueError):
    """Text that does not follow the contract (a listing, a tuning file, a program's defaults block)."""


class VersionTreeError(ContractError):
    """A listing whose ancestor lists do not form a tree."""


# ---- tuning parameters and their listing ----

def threshold_name(entry: str, kind: str, k: int) -> str:
    """The name of threshold number k (unique in the program) of a guard of kind "outer" (t_top) or "intra"
    (t_intra) in an entry point."""
    return f"{entry}.suff_{kind}_par_{k}"


_THRESHOLD_NAME = re.compile(r"(?P<entry>.+)\.suff_(?P<kind>outer|intra)_par_(?P<k>\d+)")


def parse_threshold_name(name: str) -> Optional[tuple]:
    """(entry, kind, k) of a threshold's name, or None for a name of another form."""
    match = _THRESHOLD_NAME.fullmatch(name)
    return (match["entry"], match["kind"], int(match["k"])) if match else None


# A stencil loop tiled in time (flatten/stencils.py) takes K steps a launch in tiles of W elements: two
# `#[param]`-like parameters (class USER_PARAM: unset, the program's default) that the tuner may tune as sizes.
STENCIL_KINDS = ("steps", "width")
_STENCIL_NAME = re.compile(r"(?P<entry>.+)\.stencil_(?P<kind>steps|width)_(?P<k>\d+)")


def stencil_param_name(entry: str, kind: str, k: int) -> str:
    """The name of tiled stencil loop number k's parameter of a kind in STENCIL_KINDS, e.g. main.stencil_steps_0."""
    return f"{entry}.stencil_{kind}_{k}"


def stencil_kind(name: str) -> Optional[str]:
    """The STENCIL_KINDS kind of a stencil loop's parameter, or None for a name of another form."""
    match = _STENCIL_NAME.fullmatch(name)
    return match["kind"] if match else None


_SIZE_SUFFIX = {THREAD_BLOCK_SIZE: "tblock_size", GRID_SIZE: "num_tblocks", TILE_SIZE: "tile_size"}


def size_name(entry: str, segop: str, cls: str) -> str:
    """The name of a segop's size parameter of class cls (one of SIZE_CLASSES), e.g. main.segred_4_num_tblocks."""
    return f"{entry}.{segop}_{_SIZE_SUFFIX[cls]}"


def sized_kernels(name: str, cls: str, kernels) -> list:
    """The kernels among `kernels` (names) whose launches the size parameter `name` of class cls sets: the
    segop's own kernel and those named after it (segred_4, segred_4_threads, ...)."""
    segop = name.partition(".")[2].removesuffix("_" + _SIZE_SUFFIX[cls])
    return [k for k in kernels if k == segop or k.startswith(segop + "_")]


@dataclass(frozen=True)
class Param:
    name: str
    cls: str = THRESHOLD  # THRESHOLD, one of SIZE_CLASSES or USER_PARAM
    default: Optional[int] = None  # a threshold's listed default; None: the device's ("def")
    ancestors: tuple = ()  # a threshold's guards on the path to it: ((name, outcome that leads here), ...)

    @property
    def is_threshold(self) -> bool:
        return self.cls == THRESHOLD

    @property
    def class_text(self) -> str:
        """The class as `--print-params` shows it, e.g. `threshold(def, !main.suff_outer_par_0)`."""
        if not self.is_threshold:
            return self.cls
        path = " ".join(name if outcome else "!" + name for name, outcome in self.ancestors)
        return f"threshold({'def' if self.default is None else self.default}, {path})"

    @property
    def line(self) -> str:
        return f"{self.name} ({self.class_text})"


def listing(params) -> str:
    """The `--print-params` text: one line a parameter."""
    return "".join(p.line + "\n" for p in params)


_LINE = re.compile(r"(\S+) \((.*)\)")
_THRESHOLD_CLASS = re.compile(r"threshold\(\s*(def|-?\d+)\s*,(.*)\)")


def parse_listing(text: str) -> list:
    """The parameters of a `--print-params` listing; a line of any other form is an error that names it."""
    params = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        whole = _LINE.fullmatch(line.strip())
        if not whole:
            raise ContractError(f"line {number} of the parameter listing is not `name (class)`: {line!r}")
        name, cls = whole.group(1), whole.group(2).strip()
        if cls in SIZE_CLASSES + (USER_PARAM,):
            params.append(Param(name, cls))
            continue
        threshold = _THRESHOLD_CLASS.fullmatch(cls)
        if not threshold:
            raise ContractError(f"line {number} of the parameter listing has an unknown class: {line!r}")
        default = None if threshold.group(1) == "def" else int(threshold.group(1))
        ancestors = tuple((a.lstrip("!"), not a.startswith("!")) for a in threshold.group(2).split())
        params.append(Param(name, THRESHOLD, default, ancestors))
    return params


# ---- the version tree ----

@dataclass(frozen=True)
class Node:
    name: str
    ancestors: tuple  # ((threshold, outcome that leads here), ...), root first
    on_true: tuple  # tuple[Node, ...]: several children under one outcome are a horizontal split
    on_false: tuple

    @property
    def height(self) -> int:
        return 1 + max((child.height for child in self.on_true + self.on_false), default=0)


Forest = tuple  # tuple[Node, ...]: the roots


def build_forest(params) -> Forest:
    """The version tree of the thresholds among `params`, listed in any order."""
    thresholds = [p for p in params if p.is_threshold]
    by_name = {t.name: t for t in thresholds}
    if len(by_name) != len(thresholds):
        raise VersionTreeError("the program lists a threshold twice")
    children = {}
    for t in thresholds:
        children.setdefault(_parent(t, by_name), []).append(t.name)

    def make(name: str, ancestors: tuple) -> Node:
        def under(outcome: bool) -> tuple:
            return tuple(make(c, ancestors + ((name, outcome),)) for c in children.get((name, outcome), []))

        return Node(name, ancestors, under(True), under(False))

    return tuple(make(root, ()) for root in children.get(None, []))


def leaf_names(roots: Forest) -> dict[tuple[str, bool], str]:
    """The name of each leaf version, keyed by the guard and outcome that choose it: V1, V2, ... depth first,
    true branches first, as `incflat versions` shows them and the tuner's report names them."""
    names: dict[tuple[str, bool], str] = {}

    def number(node: Node) -> None:
        for outcome, children in ((True, node.on_true), (False, node.on_false)):
            if children:
                for child in children:
                    number(child)
            else:
                names[node.name, outcome] = f"V{len(names) + 1}"

    for root in roots:
        number(root)
    return names


def _parent(t: Param, by_name: dict):
    """The ancestor whose own ancestors plus itself are exactly t's ancestors (whatever order they are listed in)."""
    if not t.ancestors:
        return None
    wanted = set(t.ancestors)
    for name, outcome in t.ancestors:
        if name not in by_name:
            raise VersionTreeError(f"threshold {t.name} depends on {name}, which is not listed")
        if set(by_name[name].ancestors) | {(name, outcome)} == wanted:
            return name, outcome
    raise VersionTreeError(f"the ancestors of threshold {t.name} do not form a path of the version tree")


def all_nodes(forest: Forest) -> list:
    """Every node, parents before children."""
    out = []

    def visit(node: Node) -> None:
        out.append(node)
        for child in node.on_true + node.on_false:
            visit(child)

    for root in forest:
        visit(root)
    return out


def version_assignments(forest: Forest, never: int = NEVER) -> list:
    """Threshold values that together reach every code version: one assignment per leaf version (the side of a
    guard with no guard under it), which forces the guards on its path (1 for true, `never` for false) and
    sets every other threshold to `never`. A program without thresholds has one version: `[{}]`."""
    nodes = all_nodes(forest)
    found = []
    for node in nodes:
        for outcome, children in ((True, node.on_true), (False, node.on_false)):
            if not children:
                forced = {name: 1 if o else never for name, o in node.ancestors + ((node.name, outcome),)}
                found.append(dict({n.name: never for n in nodes}, **forced))
    return found or [{}]


# ---- tuning files ----

def tuning_file_text(values: dict, header: str = "") -> str:
    """`name=int` lines in name order, after `-- header` when one is given."""
    lines = [f"-- {header}"] if header else []
    return "\n".join(lines + [f"{name}={values[name]}" for name in sorted(values)]) + "\n"


_DIGITS = re.compile(r"-?[0-9]+")  # ASCII digits only: int() would also take other scripts' digits


def parse_int(text: str) -> Optional[int]:
    """An integer written in ASCII digits with an optional minus sign, else None."""
    text = text.strip()
    return int(text) if _DIGITS.fullmatch(text) else None


def option_int(text: str) -> int:
    """An option's integer value (an argparse type): ASCII digits only, as parse_int."""
    value = parse_int(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"invalid integer: {text!r} (ASCII digits, with an optional leading -)")
    return value


def option_seed(text: str) -> int:
    """A random generator's seed given as an option (an argparse type): an integer 0 or more (numpy's generators
    take no other)."""
    value = parse_int(text)
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"invalid seed: {text!r} (an integer, 0 or more)")
    return value


_SECONDS = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")


MOST_SECONDS = 10 ** 6  # eleven days: more than any limit a run needs, and within what the system's timers take


def option_seconds(text: str) -> float:
    """An option's positive number of seconds (an argparse type): ASCII digits, with an optional fraction."""
    if not _SECONDS.fullmatch(text.strip()) or not 0 < float(text) <= MOST_SECONDS:
        raise argparse.ArgumentTypeError(f"invalid number of seconds: {text!r} (a positive decimal number, at most "
                                         f"{MOST_SECONDS})")
    return float(text)


def decode_tuning_file(data: bytes, where: str) -> str:
    """A tuning file's text; bytes that are not UTF-8 are an error naming the line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise ContractError(f"{where}:{line}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def parse_tuning_file(text: str, known, where: str) -> dict:
    """The values of a tuning file; blank lines and `--` comments are skipped. `where` names the file in errors."""
    values = {}
    for number, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("--"):
            continue
        name, eq, value = (part.strip() for part in s.partition("="))
        number_value = parse_int(value)
        if not eq or not name or number_value is None:
            raise ContractError(f"{where}:{number}: invalid line (must be of form 'name=int'): {line!r}")
        if name not in known:
            raise ContractError(f"{where}:{number}: unknown tuning parameter {name!r}")
        values[name] = number_value
    return values


# ---- log lines ----

def comparison_line(name: str, par: int, result: bool) -> str:
    return f"Compared {name} <= {par}: {'true' if result else 'false'}."


_COMPARISON = re.compile(r"^Compared (\S+) <= (-?\d+): (true|false)\.$", re.MULTILINE)


def comparisons(stderr: str) -> list:
    """The comparisons of a `-L` run, in order: (threshold, degree of parallelism, outcome)."""
    return [(name, int(par), outcome == "true") for name, par, outcome in _COMPARISON.findall(stderr)]


def parse_comparisons(stderr: str) -> dict:
    """The comparisons of a `-L` run: the sorted distinct degrees of parallelism each threshold met."""
    values = {}
    for name, par, _ in comparisons(stderr):
        values.setdefault(name, set()).add(par)
    return {name: tuple(sorted(vs)) for name, vs in values.items()}


def no_fallback_error(name: str, par: int, device: str, why: str) -> str:
    return f"the version guarded by {name} cannot run at {par} on {device} ({why}), and --no-fallback was given"


_NO_FALLBACK = re.compile(r"the version guarded by (\S+) cannot run at (-?\d+) on .*, and --no-fallback was given")


def parse_no_fallback(failure: str) -> Optional[tuple]:
    """(threshold, par) of a run stopped by `no_fallback_error` (its message anywhere in `failure`), else None."""
    match = _NO_FALLBACK.search(failure)
    return (match.group(1), int(match.group(2))) if match else None


def device_line(device: str, platform: str) -> str:
    return f"Device: {device} ({platform})"


_DEVICE = re.compile(r"^Device:\s*(.*?)\s*$", re.MULTILINE)


def parse_device(stderr: str) -> Optional[str]:
    match = _DEVICE.search(stderr)
    return match.group(1) if match and match.group(1) else None


def default_threshold_line(value: int) -> str:
    return f"Default threshold: {value}"


_DEFAULT_THRESHOLD = re.compile(r"^Default threshold:\s*(\d+)\s*$", re.MULTILINE)


def parse_default_threshold(stderr: str) -> Optional[int]:
    match = _DEFAULT_THRESHOLD.search(stderr)
    return int(match.group(1)) if match else None


# ---- the tuned-defaults block of a compiled program ----

TUNED_BEGIN = "# BEGIN INCFLAT TUNED DEFAULTS"
TUNED_END = "# END INCFLAT TUNED DEFAULTS"


def defaults_block(values: dict, provenance: Optional[dict]) -> str:
    """The block: `TUNED_DEFAULTS` ({name: int}) and `TUNING_PROVENANCE` (None, or a dict saying where the values
    come from), between the marker lines."""
    entries = "".join(f"    {name!r}: {int(values[name])},\n" for name in sorted(values))
    defaults = "{\n" + entries + "}" if values else "{}"
    return f"{TUNED_BEGIN}\nTUNED_DEFAULTS = {defaults}\nTUNING_PROVENANCE = {provenance!r}\n{TUNED_END}\n"


def with_defaults(program_text: str, values: dict, provenance: Optional[dict]) -> str:
    """The program with its block replaced; the program must hold exactly one (its marker lines, whole)."""
    lines = program_text.splitlines(keepends=True)
    begins = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == TUNED_BEGIN]
    ends = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == TUNED_END]
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise ContractError(f"the program has {len(begins)} '{TUNED_BEGIN}' and {len(ends)} '{TUNED_END}' "
                            f"lines, not one block")
    return "".join(lines[:begins[0]]) + defaults_block(values, provenance) + "".join(lines[ends[0] + 1:])
