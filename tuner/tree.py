"""The path a dataset takes through the version tree under an assignment, and the tuning order.

The tree itself is the tuning contract's (codegen.runtime.tuning): each guard is `threshold <= ePar`; true takes the less
flattened version, false goes deeper. The program lists, for each threshold, the outcomes of its ancestors,
and the tree is rebuilt from that listing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from incflat.codegen.runtime.tuning import NEVER, Forest, Node, Param, VersionTreeError
from incflat.codegen.runtime.tuning import build_forest as contract_build_forest
from incflat.tuner.errors import TunerError
from incflat.tuner.program import EPars


# A dataset's path: for each threshold it reaches (in tree order), the outcome of each distinct ePar it
# compares against (one outcome outside loops). Two assignments with the same path run the same versions.
Path = tuple[tuple[str, tuple[bool, ...]], ...]


def build_forest(params: Sequence[Param]) -> Forest:
    """The compiler's version tree, rebuilt from a program's --print-params listing."""
    try:
        return contract_build_forest(params)
    except VersionTreeError as e:
        raise TunerError(f"{e} (in the program's --print-params listing)") from None


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
