"""The version tree: the thresholds of a target program, each with the guards on the path to it."""

from dataclasses import dataclass

from ir import source as S
from ir import target as T
from ir.target import sub_bodies


@dataclass(frozen=True)
class Threshold:
    name: str
    kind: str  # "outer" | "intra"
    ancestors: tuple  # tuple[str, ...]: each `name` (reached when true) or `!name` (reached when false)

    @property
    def param_class(self) -> str:
        """Futhark's --print-params class string."""
        return f"threshold(def, {' '.join(self.ancestors)})"


def thresholds(prog: S.Program) -> list:
    """All thresholds of the program, in creation (name) order."""
    found = []

    def visit(body: S.Body, path: tuple):
        for stm in body.stms:
            e = stm.exp
            if isinstance(e, T.Guard):
                found.append(Threshold(e.threshold, e.kind, path))
                visit(e.then, path + (e.threshold,))
                visit(e.else_, path + ("!" + e.threshold,))
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
