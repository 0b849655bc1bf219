"""Expressions checked at run time: `assert cond e` and ranges (`a..<b`, `a..b...c`, ...).

A mixin of `Checker` (ir.check.checker). Both emit an `S.Assert` statement, which fails the program with a
message at its source position when its condition is false (as out-of-bounds indexing does).
"""

from incflat.ir import source as S
from incflat.ir.check.infer import prune, unify
from incflat.ir.types import BOOL


class CheckedExpressions:
    """Mixin of Checker: assertions, and ranges lowered to iota and map with a validity assertion."""

    def lower_AssertE(self, e, env):
        cond = self.lower_val(e.cond, env, "the condition of an assertion")
        if unify(cond.t, BOOL):
            raise self.err(f"The condition of an assertion must have type bool, but has type "
                           f"{self.show(prune(cond.t))}.", e.cond.loc)
        message = "Assertion is false: " + _literal_braces(self.source_text(e.cond))
        self.stms.append(S.Stm((), S.Assert(cond.atom, message), e.loc))
        return self.lower(e.body, env)


def _literal_braces(text: str) -> str:
    """Text that str.format leaves as it is."""
    return text.replace("{", "{{").replace("}", "}}")
