"""The expression classes of each IR, and the tables of rules that treat an expression by its class.

Printing, renaming, analysis, verification, interpretation and code generation each keep a `Table` from
expression class to rule. A table is checked when it is made (when its module loads, as the stage list's
composition is): every class of its IR has a rule, or is listed as absent with the reason no rule is needed.
A new expression form is its class (in `source.Exp` or `target.EXPS`) plus the entries that the checks ask
for; each check names its table and the classes it lacks.
"""

from __future__ import annotations

import contextlib
import typing
from collections.abc import Callable, Mapping

from incflat.ir import source as S
from incflat.ir import target as T

# The classes of each IR's expressions; the target IR holds the source IR's statements too.
IRS = {"source": list(typing.get_args(S.Exp))}
IRS["target"] = IRS["source"] + list(T.EXPS)

TABLES: list[Table] = []  # every table made, in the order their modules loaded


class IncompleteTable(Exception):
    """A table that lacks rules for classes of its IR (or has rules for classes that are not in it)."""


class Table(Mapping):
    """`name`: what the table is, as its check names it ("ir.pretty: printing an expression");
    `ir`: "source" or "target", the classes it must cover; `rules`: class -> rule;
    `absent`: class -> why the table has no rule for it (a rule that would never run)."""

    def __init__(self, name: str, ir: str, rules: Mapping[type, Callable], absent: Mapping[type, str] = ()):
        self.name, self.ir = name, ir
        self.rules, self.absent = dict(rules), dict(absent)
        problem = self.problem()
        if problem:
            raise IncompleteTable(problem)
        TABLES.append(self)  # (only a complete table: one refused here is never made)

    def __getitem__(self, cls: type) -> Callable:
        return self.rules[cls]

    def __iter__(self):
        return iter(self.rules)

    def __len__(self):
        return len(self.rules)

    def rule(self, e) -> Callable:
        """The rule for e's class; a TypeError names the table and the class it has no rule for."""
        try:
            return self.rules[type(e)]
        except KeyError:
            why = self.absent.get(type(e), "not an expression of the " + self.ir + " IR")
            raise TypeError(f"{self.name}: no rule for {type(e).__name__} ({why})") from None

    def missing(self) -> list[type]:
        """The classes of the IR that have neither a rule nor a reason to have none."""
        return [c for c in IRS[self.ir] if c not in self.rules and c not in self.absent]

    def problem(self) -> str | None:
        """What is wrong with the table, in a sentence that names it, or None."""
        problems = []
        missing = self.missing()
        if missing:
            problems.append(f"has no rule for {_names(missing)}")
        both = [c for c in self.rules if c in self.absent]
        if both:
            problems.append(f"has a rule for {_names(both)}, listed as absent too")
        foreign = [c for c in (*self.rules, *self.absent) if c not in IRS[self.ir]]
        if foreign:
            problems.append(f"has entries for {_names(foreign)}, which are not expressions of the {self.ir} IR")
        return f"{self.name} {'; '.join(problems)}" if problems else None


def _names(classes) -> str:
    return ", ".join(c.__name__ for c in classes)


def problems() -> list[str]:
    """What every table made so far lacks, one sentence a table."""
    return [p for p in (t.problem() for t in TABLES) if p]


@contextlib.contextmanager
def planted(cls: type, ir: str = "source"):
    """The IRs with one more expression class, for as long as the block runs (the tests of the checks)."""
    added = [name for name in IRS if name == ir or (ir == "source" and name == "target")]
    for name in added:
        IRS[name].append(cls)
    try:
        yield
    finally:
        for name in added:
            IRS[name].remove(cls)


__all__ = ["IRS", "IncompleteTable", "TABLES", "Table", "planted", "problems"]
