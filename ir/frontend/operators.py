"""Binary operators of the front end: Futhark's precedence and associativity, and the resolution of a flat
operator sequence (the grammar's `opexp`) into a tree by precedence climbing (ir/frontend/parse.py)."""

from incflat.ir.frontend.syntax import App, BinOpE, mk_app


# Binary operators: Futhark's precedence (higher binds tighter) and associativity.
# Futhark classifies an operator by its leading characters; these are the ones we accept.
PRECEDENCE = {
    "|>": 0,
    "<|": 1,
    "||": 2,
    "&&": 3,
    "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4,
    "&": 5, "^": 5, "|": 5,
    "<<": 6, ">>": 6,
    "+": 7, "-": 7, "++": 7,
    "*": 8, "/": 8, "%": 8, "//": 8, "%%": 8,
    "**": 9,
}
PRECEDENCE.update({"!": 4, "=": 4})  # the leading characters of user-defined operators such as !== or =>
BACKQUOTE_PRECEDENCE = -1  # x `f` y binds more loosely than every symbolic operator
RIGHT_ASSOC = frozenset({"<|"})
PIPES = ("|>", "<|")


def operator_class(op: str) -> str:
    """The builtin operator whose precedence and associativity `op` has: as in Futhark, its longest
    leading part that is a builtin operator (`+^` binds like `+`, `>>=` like `>>`); a qualified
    operator (`i32.+`) binds like its symbol."""
    sym = op.rsplit(".", 1)[1] if op[0].isalpha() else op
    for k in range(len(sym), 0, -1):
        if sym[:k] in PRECEDENCE:
            return sym[:k]
    return sym


def precedence(op: str) -> int:
    if op.startswith("`"):
        return BACKQUOTE_PRECEDENCE
    return PRECEDENCE.get(operator_class(op), PRECEDENCE["+"])


def resolve_ops(items):
    """Precedence climbing over [operand, (op, loc), operand, ...]."""
    pos = 0

    def operand():
        nonlocal pos
        e = items[pos]
        pos += 1
        return e

    def climb(min_prec):
        nonlocal pos
        lhs = operand()
        while pos < len(items):
            op, loc, fn = items[pos]
            prec = precedence(op)
            if prec < min_prec:
                break
            pos += 1
            right = not op.startswith("`") and operator_class(op) in RIGHT_ASSOC
            rhs = climb(prec if right else prec + 1)
            lhs = make_binop(op, loc, fn, lhs, rhs)
        return lhs

    return climb(BACKQUOTE_PRECEDENCE)


def make_binop(op, loc, fn, lhs, rhs):
    """`fn` is the function of a backquoted operator (x `f` y is f x y), else None."""
    if fn is not None:
        return App(loc, (lhs.span[0], rhs.span[1]), fn, [lhs, rhs])
    if op == "|>":
        return mk_app(rhs, [lhs])
    if op == "<|":
        return mk_app(lhs, [rhs])
    return BinOpE(loc, (lhs.span[0], rhs.span[1]), op, lhs, rhs)


class OpSeq:
    """An unresolved operator sequence (the `opexp` rule)."""

    def __init__(self, items):
        self.items = items

    def resolve(self):
        return resolve_ops(self.items)


def fin(x):
    return x.resolve() if isinstance(x, OpSeq) else x
