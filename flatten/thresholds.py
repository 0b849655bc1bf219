"""The version tree: thresholds as nodes, each reached through the outcomes of its ancestors.

One structure for the compiler (`incflat versions`, the `--print-params` listing it writes) and the tuner
(which rebuilds it from that listing). Each guard is `threshold <= par`: true takes the less flattened
version, false goes deeper; several children under one outcome are a horizontal split.
"""

from dataclasses import dataclass
from typing import Optional

from ir import source as S
from ir import target as T
from ir.target import sub_bodies


@dataclass(frozen=True)
class Threshold:
    name: str
    default: Optional[int]  # None: the device's default ("def" in the listing)
    ancestors: tuple  # ((threshold, outcome that leads here), ...), root first
    kind: str = ""  # "outer" (t_top) or "intra" (t_intra); a listing does not say

    @property
    def param_class(self) -> str:
        """Futhark's --print-params class string, e.g. `threshold(def, !main.suff_outer_par_0)`."""
        path = " ".join(name if outcome else "!" + name for name, outcome in self.ancestors)
        return f"threshold({'def' if self.default is None else self.default}, {path})"


class VersionTreeError(ValueError):
    """A listing whose ancestor lists do not form a tree."""


@dataclass(frozen=True)
class Node:
    name: str
    ancestors: tuple  # ((threshold, outcome that leads here), ...), root first
    on_true: tuple  # tuple[Node, ...]
    on_false: tuple

    @property
    def height(self) -> int:
        return 1 + max((child.height for child in self.on_true + self.on_false), default=0)


Forest = tuple  # tuple[Node, ...]: the roots


def build_forest(thresholds) -> Forest:
    """The version tree from thresholds and their ancestor lists (listed in any order)."""
    by_name = {t.name: t for t in thresholds}
    if len(by_name) != len(thresholds):
        raise VersionTreeError("the program lists a threshold twice in --print-params")
    children = {}
    for t in thresholds:
        children.setdefault(_parent(t, by_name), []).append(t.name)

    def make(name: str, ancestors: tuple) -> Node:
        def under(outcome: bool) -> tuple:
            return tuple(make(c, ancestors + ((name, outcome),)) for c in children.get((name, outcome), []))

        return Node(name, ancestors, under(True), under(False))

    return tuple(make(root, ()) for root in children.get(None, []))


def _parent(t: Threshold, by_name: dict):
    """The ancestor whose own ancestors plus itself are exactly t's ancestors (whatever order they are listed in)."""
    if not t.ancestors:
        return None
    wanted = set(t.ancestors)
    for name, outcome in t.ancestors:
        if name not in by_name:
            raise VersionTreeError(f"threshold {t.name} depends on {name}, which --print-params does not list")
        if set(by_name[name].ancestors) | {(name, outcome)} == wanted:
            return name, outcome
    raise VersionTreeError(f"the ancestors of threshold {t.name} do not form a path of the version tree")


def thresholds(prog: S.Program) -> list:
    """All thresholds of the program, in creation (name) order."""
    found = []

    def visit(body: S.Body, path: tuple):
        for stm in body.stms:
            e = stm.exp
            if isinstance(e, T.Guard):
                found.append(Threshold(e.threshold, None, path, e.kind))
                visit(e.then, path + ((e.threshold, True),))
                visit(e.else_, path + ((e.threshold, False),))
            else:
                for b in sub_bodies(e):
                    visit(b, path)

    for f in prog.funs:
        visit(f.body, ())
    return sorted(found, key=lambda t: int(t.name.rsplit("_", 1)[1]))


def leaf_assignments(prog: S.Program, never: int = 2 ** 31 - 1) -> list:
    """One threshold assignment per leaf version, which reaches that leaf: its guards forced true (1) or
    false (never), every other threshold false. Together they cover every path of the version tree."""
    names = [t.name for t in thresholds(prog)]
    found = []

    def visit(body: S.Body, forced: dict) -> bool:
        """Records the leaves under body; returns whether body holds a guard."""
        has_guard = False
        for stm in body.stms:
            e = stm.exp
            if isinstance(e, T.Guard):
                has_guard = True
                for branch, value in ((e.then, 1), (e.else_, never)):
                    inner = dict(forced, **{e.threshold: value})
                    if not visit(branch, inner):
                        found.append(dict({n: never for n in names}, **inner))
            else:
                has_guard |= any([visit(b, forced) for b in sub_bodies(e)])
        return has_guard

    for f in prog.funs:
        visit(f.body, {})
    return found or [{}]
