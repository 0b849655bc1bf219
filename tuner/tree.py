"""The version tree: thresholds as nodes, and the path a dataset takes through them under an assignment.

Each guard is `threshold <= ePar`: true takes the less flattened version, false goes deeper. A node's children
hang under one of its outcomes; several children under one outcome are a horizontal split (kernels in
sequence). The program lists, for each threshold, the outcomes of its ancestors; the tree is rebuilt from that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tuner.errors import TunerError
from tuner.program import EPars, Threshold

NEVER = 2**31 - 1  # "infinity" as written out: a threshold this large is false for every realistic ePar


@dataclass(frozen=True)
class Node:
    name: str
    ancestors: tuple[tuple[str, bool], ...]  # root first: (threshold, outcome that leads here)
    on_true: tuple[Node, ...]
    on_false: tuple[Node, ...]

    @property
    def height(self) -> int:
        return 1 + max((child.height for child in self.on_true + self.on_false), default=0)


Forest = tuple[Node, ...]
# A dataset's path: for each threshold it reaches (in tree order), the outcome of each distinct ePar it
# compares against (one outcome outside loops). Two assignments with the same path run the same versions.
Path = tuple[tuple[str, tuple[bool, ...]], ...]


def build_forest(thresholds: Sequence[Threshold]) -> Forest:
    by_name = {t.name: t for t in thresholds}
    if len(by_name) != len(thresholds):
        raise TunerError("the program lists a threshold twice in --print-params")
    children: dict[tuple[str, bool] | None, list[str]] = {}
    for t in thresholds:
        children.setdefault(_parent(t, by_name), []).append(t.name)

    def make(name: str, ancestors: tuple[tuple[str, bool], ...]) -> Node:
        def under(outcome: bool) -> tuple[Node, ...]:
            return tuple(make(c, ancestors + ((name, outcome),)) for c in children.get((name, outcome), []))

        return Node(name, ancestors, under(True), under(False))

    return tuple(make(root, ()) for root in children.get(None, []))


def _parent(t: Threshold, by_name: Mapping[str, Threshold]) -> tuple[str, bool] | None:
    """The ancestor whose own ancestors plus itself are exactly t's ancestors (whatever order they are listed in)."""
    if not t.ancestors:
        return None
    wanted = set(t.ancestors)
    for name, outcome in t.ancestors:
        if name not in by_name:
            raise TunerError(f"threshold {t.name} depends on {name}, which --print-params does not list")
        if set(by_name[name].ancestors) | {(name, outcome)} == wanted:
            return name, outcome
    raise TunerError(f"the ancestors of threshold {t.name} do not form a path of the version tree")


def all_nodes(forest: Forest) -> list[Node]:
    """Every node, parents before children."""
    out: list[Node] = []

    def visit(node: Node) -> None:
        out.append(node)
        for child in node.on_true + node.on_false:
            visit(child)

    for root in forest:
        visit(root)
    return out


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


def path(forest: Forest, assignment: Mapping[str, int], epars: EPars) -> Path:
    """The dataset's path; a threshold it never compared (another entry point, say) ends that branch."""
    out: list[tuple[str, tuple[bool, ...]]] = []

    def visit(node: Node) -> None:
        values = epars.get(node.name)
        if not values:
            return
        outcomes = tuple(assignment[node.name] <= e for e in values)
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


def never_value(epars: Iterable[EPars]) -> int:
    """NEVER, or more if some ePar is that large, so that "never" stays false for every dataset."""
    largest = max((v for e in epars for vs in e.values() for v in vs), default=0)
    return max(NEVER, largest + 1)
