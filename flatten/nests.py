"""What the flattening rules ask of a nest and its body, and how a rule's result is bound: the names an atom
list reads, the names bound inside a nest, whether a neutral element varies in the nest, the types of a map
nest's results, whether a reduction operator is commutative. Functions of the IR only: no rule is here."""

from incflat.ir import source as S
from incflat.ir.types import array_of


def names_of(atoms) -> set:
    """The names of the variables among atoms."""
    return {a.name for a in atoms if isinstance(a, S.Var)}


def bound_in(ctx: tuple, body: S.Body) -> set:
    """The variables bound inside a nest: the context's parameters and the body's statements' patterns."""
    return {p.name for b in ctx for p in b.params} | {p.name for s in body.stms for p in s.pat}


def bound_anywhere(ctx: tuple, body: S.Body) -> set:
    """bound_in, with what the loops and branches of the body bind (a loop's parameters, its statements)."""
    bound = bound_in(ctx, body)
    for stm in body.stms:
        e = stm.exp
        if isinstance(e, S.Loop):
            bound |= {p.name for p in e.params} | bound_anywhere((), e.body)
            if isinstance(e.form, S.ForLoop):
                bound.add(e.form.i.name)
        elif isinstance(e, S.If):
            bound |= bound_anywhere((), e.then) | bound_anywhere((), e.else_)
    return bound


def uses_any(atoms, ctx) -> bool:
    """Whether an atom is a parameter of the context (a neutral element that varies in the nest)."""
    bound = {p.name for b in ctx for p in b.params}
    return any(isinstance(a, S.Var) and a.name in bound for a in atoms)


def nest_types(e: S.Map) -> tuple:
    """The types of a map's results: arrays of its width."""
    return tuple(array_of(t, (S.dim_of(e.width),)) for t in e.lam.ret)


COMMUTATIVE_OPS = {"+", "*", "&&", "||", "&", "|", "^", "==", "!="}
COMMUTATIVE_FNS = {"min", "max"}


def is_commutative(lam: S.Lambda) -> bool:
    """Recognises operators known to be commutative: one binary operator (or min/max) on the two params."""
    if len(lam.params) != 2 or len(lam.body.stms) != 1 or len(lam.body.result) != 1:
        return False
    stm = lam.body.stms[0]
    e = stm.exp
    if stm.pat != lam.body.result:
        return False
    if isinstance(e, S.BinOp) and e.op in COMMUTATIVE_OPS:
        operands = (e.x, e.y)
    elif isinstance(e, S.PrimCall) and e.fn.split(".")[-1] in COMMUTATIVE_FNS:
        operands = e.args
    else:
        return False
    return {getattr(a, "name", None) for a in operands} == {p.name for p in lam.params}


def bind(pat: tuple, result, loc) -> list:
    """Statements binding pat to a flattening result: an expression, or a body (spliced in)."""
    if isinstance(result, S.Body):
        return list(result.stms) + [S.Stm((p,), S.AtomExp(r), loc) for p, r in zip(pat, result.result)]
    return [S.Stm(pat, result, loc)]
