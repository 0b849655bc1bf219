"""The path a dataset takes through the version tree under an assignment, and the tuning order.

The tree itself is the tuning contract's (ir.runtime.tuning): each guard is `threshold <= ePar`; true takes
the less flattened version, false goes deeper. The program lists, for each threshold, the outcomes of its ancestors,
and the tree is rebuilt from that listing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from incflat.ir.runtime.tuning import (NEVER, Forest, Node, Param, VersionTreeError, leaf_names,
                                           parse_no_fallback, parse_threshold_name)
from incflat.ir.runtime.tuning import build_forest as contract_build_forest
from incflat.datasets import Dataset
from incflat.ir.errors import ToolError
from incflat.tuner.measure import Measurement
from incflat.tuner.program import EPars


# A dataset's path: for each threshold it reaches (in tree order), the outcome of each distinct ePar it
# compares against (one outcome outside loops). Two assignments with the same path run the same versions.
Path = tuple[tuple[str, tuple[bool, ...]], ...]


def build_forest(params: Sequence[Param]) -> Forest:
    """The compiler's version tree, rebuilt from a program's --print-params listing."""
    try:
        return contract_build_forest(params)
    except VersionTreeError as e:
        raise ToolError(f"{e} (in the program's --print-params listing)") from None


def tuning_order(forest: Forest) -> list[Node]:
    """Depth-first, children before parents, deepest subtrees first: a node's subtrees are tuned before it."""
    out: list[Node] = []

    def visit(node: Node) -> None:
        for child in _deepest_first(node.on_true + node.on_false):
            visit(child)
        out.append(node)

    for root in _deepest_first(forest):
        visit(root)
    return out


def _deepest_first(nodes: Iterable[Node]) -> list[Node]:
    return sorted(nodes, key=lambda n: -n.height)


def pins(node: Node, never: int) -> dict[str, int]:
    """Values of node's ancestors that make every dataset that can reach it do so."""
    return {name: 1 if outcome else never for name, outcome in node.ancestors}


# Per dataset, the guards whose workgroup-level version cannot run at an ePar on the device, (threshold, ePar):
# there the program runs the guard's false side whatever its value (learnt from --no-fallback's errors).
Fallbacks = Collection[tuple[str, int]]


def takes_true(name: str, value: int, epar: int, fallbacks: Fallbacks = ()) -> bool:
    """Whether the guard `name <= epar` at this value runs its true side (not where its version cannot run)."""
    return value <= epar and (name, epar) not in fallbacks


def path(forest: Forest, assignment: Mapping[str, int], epars: EPars, fallbacks: Fallbacks = ()) -> Path:
    """The dataset's path, each guard's outcome the side that runs (false where its version cannot run); a
    threshold it never compared (another entry point, say) ends that branch."""
    out: list[tuple[str, tuple[bool, ...]]] = []

    def visit(node: Node) -> None:
        values = epars.get(node.name)
        if not values:
            return
        outcomes = tuple(takes_true(node.name, assignment[node.name], e, fallbacks) for e in values)
        out.append((node.name, outcomes))
        if any(outcomes):
            for child in node.on_true:
                visit(child)
        if not all(outcomes):
            for child in node.on_false:
                visit(child)

    for root in forest:
        visit(root)
    return tuple(out)


def falls_back(name: str) -> bool:
    """Whether the guard's true side is a workgroup-level version, which the program leaves for its false side
    at run time where the device cannot launch it (its workgroup or local memory does not fit)."""
    parsed = parse_threshold_name(name)
    return parsed is not None and parsed[1] == "intra"


def reaches(forest: Forest, node: Node, assignment: Mapping[str, int], epars: EPars, never: int,
            fallbacks: Fallbacks = ()) -> bool:
    """Whether a dataset with these ePars reaches `node` under the assignment, or would where the
    workgroup-level versions on the way fell back: one that fits the tuning datasets may not fit another
    (a workgroup per row of the training datasets' widths may exceed the device's limit at a wider one), and
    its fallback runs this node."""
    fallen = {name: never for name, outcome in node.ancestors if not outcome and falls_back(name)}
    return node.name in dict(path(forest, {**assignment, **fallen}, epars, fallbacks))


@dataclass(frozen=True)
class Version:
    """The code a dataset runs under some threshold values (the report's "version chosen")."""

    names: tuple[str, ...]  # the leaf versions it runs, named as `incflat versions` names them (V1, V2, ...)
    # each guard it reaches, in tree order, with its outcome for each ePar it compares against (one outside
    # loops); None: the threshold's value is not known (the device's default), and the walk stopped there
    guards: tuple[tuple[str, tuple[bool, ...] | None], ...]
    one_version: bool = False  # the entry point has no thresholds

    @property
    def mixed(self) -> bool:
        """Whether a loop guard takes both sides (on different iterations): several versions run in turn."""
        return any(outcomes is not None and len(set(outcomes)) > 1 for _, outcomes in self.guards)

    @property
    def name(self) -> str:
        """`V3`; `V1+V4` where a horizontal split (or a mixed loop guard) runs several; `?` where a guard's
        value is not known."""
        if self.one_version:
            return "one version"
        if any(outcomes is None for _, outcomes in self.guards):
            return "?"
        text = "+".join(self.names) or "no guard compared"
        return f"{text} (mixed)" if self.mixed else text

    @property
    def outcomes(self) -> str:
        """Each guard's outcome in order, `main.suff_outer_par_0:no main.suff_intra_par_1:yes` (yes: the
        guard `threshold <= ePar` holds, the less flattened side); a loop guard that takes both sides is
        `mixed(2 of 3 yes)`, over the distinct ePars it compares against; `?`: its value is not known."""
        return " ".join(f"{name}:{_outcome_text(outcomes)}" for name, outcomes in self.guards)


def _outcome_text(outcomes: tuple[bool, ...] | None) -> str:
    if outcomes is None:  # the device's default value: not known to the tuner
        return "?"
    if all(outcomes):
        return "yes"
    if not any(outcomes):
        return "no"
    return f"mixed({sum(outcomes)} of {len(outcomes)} yes)"


def entry_of(threshold: str) -> str:
    """The entry point a threshold belongs to, from its name (`main.suff_outer_par_0`: main)."""
    parsed = parse_threshold_name(threshold)
    return parsed[0] if parsed else threshold.rpartition(".")[0]


def version(forest: Forest, values: Mapping[str, int], epars: EPars, entry: str, fallbacks: Fallbacks = ()) -> Version:
    """The versions that a dataset of entry point `entry`, which compares the thresholds against `epars`,
    runs under the threshold `values` (those missing: not known; a guard whose version cannot run there takes
    its false side). Leaves are named per entry point as `incflat versions` names them (leaf_names)."""
    roots = tuple(root for root in forest if entry_of(root.name) == entry)
    leaves = leaf_names(roots)
    names: list[str] = []
    guards: list[tuple[str, tuple[bool, ...] | None]] = []

    def visit(node: Node) -> None:
        compared = epars.get(node.name)
        if not compared:
            return
        value = values.get(node.name)
        if value is None:
            guards.append((node.name, None))
            return
        outcomes = tuple(takes_true(node.name, value, e, fallbacks) for e in compared)
        guards.append((node.name, outcomes))
        for outcome, children in ((True, node.on_true), (False, node.on_false)):
            if outcome in outcomes:
                if children:
                    for child in children:
                        visit(child)
                else:
                    names.append(leaves[node.name, outcome])

    for root in roots:
        visit(root)
    return Version(tuple(names), tuple(guards), one_version=not roots)


@dataclass(frozen=True)
class Probed:
    """A tuning dataset, the ePars its -L probe saw each threshold compared against, and the guards whose
    versions the experiments found cannot run on it (learnt as they fail: `learn`)."""
    dataset: Dataset
    epars: EPars
    fallbacks: set[tuple[str, int]] = field(default_factory=set, compare=False)

    def runnable(self, assignment: Mapping[str, int]) -> dict[str, int]:
        """The assignment with each guard whose version cannot run at any ePar of this dataset set just past
        them: the same path, taken without a fallback (an experiment runs with --no-fallback). A loop guard
        whose version runs at some of its ePars and not at others keeps its value (its experiment fails)."""
        fallen = {name for name, _ in self.fallbacks if name in assignment and self.epars.get(name)}
        return dict(assignment) | {name: max(self.epars[name]) + 1 for name in fallen
                                   if all((name, e) in self.fallbacks for e in self.epars[name])
                                   and assignment[name] <= max(self.epars[name])}

    def settled(self, attempt: Callable[[], Measurement]) -> Measurement:
        """attempt() (a measurement of this dataset, its params and key computed from what is known), again
        while its failure names a guard whose version cannot run here that was not known."""
        while True:
            found = attempt()
            if not self.learn(found.failure):
                return found

    def learn(self, failure: str | None) -> bool:
        """Whether a failed experiment's message names a guard whose version cannot run here, not known before
        (--no-fallback's error): it is then known, and the dataset's paths take that guard's false side."""
        fell = parse_no_fallback(failure) if failure else None
        if fell is None or fell in self.fallbacks:
            return False
        self.fallbacks.add(fell)
        return True


def never_value(epars: Iterable[EPars]) -> int:
    """NEVER, or more if some ePar is that large, so that "never" stays false for every dataset."""
    largest = max((v for e in epars for vs in e.values() for v in vs), default=0)
    return max(NEVER, largest + 1)


def shown(value: int, never: int) -> str:
    """A threshold's value as the logs show it."""
    return "never" if value == never else str(value)
