"""The thresholds of a target program, as the tuning contract's parameters (ir.runtime.tuning).

Each guard is `threshold <= par`: true takes the less flattened version, false goes deeper. A threshold's
ancestors are the guards on the path to it, with the outcome that leads there.
"""

from incflat.ir.runtime.tuning import INTRA_DEFAULT, Param, parse_threshold_name
from incflat.ir import target as T
from incflat.ir.traverse import nested


def thresholds(prog: T.Program) -> list:
    """All thresholds of the program as `Param`s, in creation (number) order."""
    found = []

    def visit(body, path: tuple):
        for stm in body.stms:
            e = stm.exp
            if isinstance(e, T.Guard):
                found.append(Param(e.threshold, default=INTRA_DEFAULT if e.kind == "intra" else None,
                                   ancestors=path))
                visit(e.then, path + ((e.threshold, True),))
                visit(e.else_, path + ((e.threshold, False),))
            else:
                for inner in nested(e):
                    visit(inner.body, path)

    for f in prog.funs:
        visit(f.body, ())
    return sorted(found, key=lambda t: parse_threshold_name(t.name)[2])
