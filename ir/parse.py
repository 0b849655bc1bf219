"""Parsing: source text to a syntax tree (the dataclasses below), with Lark's LALR parser.

Every syntax node carries `loc` (an `ir.source.Loc`, 1-based line and column of its first
character, or of its operator for binary operators) and `span` (start and end offsets in the
source text). Lark's exceptions are turned into `CompileError`.
"""

import functools
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Optional

from lark import Lark, Token, Transformer
from lark.exceptions import (UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken,
                             VisitError)

from ir.errors import CompileError
from ir.source import Loc

GRAMMAR_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grammar.lark")

# Futhark keywords that this subset does not have (yet). They lex as NAME and are rejected here
# with a clear message rather than as a confusing syntax error later.
UNSUPPORTED_KEYWORDS = frozenset({
    "loop", "for", "while", "do", "match", "case", "type", "module", "open", "import",
    "include", "local", "val", "with", "assert",
})

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
    "+": 7, "-": 7,
    "*": 8, "/": 8, "%": 8, "//": 8, "%%": 8,
    "**": 9,
}
RIGHT_ASSOC = frozenset({"<|"})


# ---------------------------------------------------------------- syntax tree

@dataclass
class Node:
    loc: Loc = field(repr=False)
    span: tuple = field(repr=False)


@dataclass
class TypeExp:
    """`[n][3][]f32`: dims are ('name', str), ('const', int) or ('any', None)."""
    dims: list
    prim: str
    loc: Loc = field(repr=False)
    prim_loc: Loc = field(repr=False)


@dataclass
class Param:
    name: str
    type: Optional[TypeExp]
    loc: Loc = field(repr=False)


@dataclass
class Lit(Node):
    kind: str = "int"  # 'int', 'float' or 'bool'
    value: object = 0
    suffix: Optional[str] = None  # the type suffix, if any (i32, f32, ...)


@dataclass
class Ident(Node):
    name: str = ""


@dataclass
class QualIdent(Node):
    """`f32.sqrt`: a name in a prelude module."""
    parts: tuple = ()

    @property
    def name(self):
        return ".".join(self.parts)


@dataclass
class App(Node):
    """Application by juxtaposition; `loc` is that of the function."""
    fn: object = None
    args: list = field(default_factory=list)


@dataclass
class BinOpE(Node):
    """`lhs op rhs`; `loc` is the operator's position."""
    op: str = ""
    lhs: object = None
    rhs: object = None


@dataclass
class NegE(Node):
    x: object = None


@dataclass
class NotE(Node):
    x: object = None


@dataclass
class LetE(Node):
    name: str = ""
    name_loc: Loc = None
    ann: Optional[TypeExp] = None
    rhs: object = None
    body: object = None


@dataclass
class IfE(Node):
    cond: object = None
    then: object = None
    else_: object = None


@dataclass
class LambdaE(Node):
    params: list = field(default_factory=list)  # list[Param]
    ret: Optional[TypeExp] = None
    body: object = None


@dataclass
class SectionE(Node):
    """`(op)`, `(x op)` (left given) or `(op y)` (right given)."""
    op: str = ""
    op_loc: Loc = None
    left: object = None
    right: object = None


@dataclass
class AtomE(Node):
    """An already-lowered atom (made by the checker, never by the parser)."""
    atom: object = None


@dataclass
class Decl:
    entry: bool
    name: str
    name_loc: Loc
    size_params: list  # list[(name, Loc)]
    params: list  # list[Param]
    ret: Optional[TypeExp]
    body: object
    loc: Loc


# ---------------------------------------------------------------- building the tree

def mk_app(fn, args):
    """Apply `fn` to `args`, merging nested applications: `(f x) y` is `f x y`."""
    if isinstance(fn, App):
        return App(fn.loc, (fn.span[0], max(fn.span[1], args[-1].span[1])), fn.fn, fn.args + list(args))
    end = max([fn.span[1]] + [a.span[1] for a in args])
    return App(fn.loc, (min(fn.span[0], args[0].span[0]), end), fn, list(args))


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
            op, loc = items[pos]
            prec = PRECEDENCE[op]
            if prec < min_prec:
                break
            pos += 1
            rhs = climb(prec if op in RIGHT_ASSOC else prec + 1)
            lhs = make_binop(op, loc, lhs, rhs)
        return lhs

    return climb(0)


def make_binop(op, loc, lhs, rhs):
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


_INT_RE = re.compile(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)([iu](?:8|16|32|64))?$")


def _strip_underscores(s):
    return s.replace("_", "")


class ToSyntax(Transformer):
    def __init__(self, filename):
        super().__init__()
        self.filename = filename

    def loc(self, tok: Token) -> Loc:
        return Loc(self.filename, tok.line, tok.column)

    def span(self, first, last):
        a = first.span[0] if isinstance(first, Node) else first.start_pos
        b = last.span[1] if isinstance(last, Node) else last.end_pos
        return (a, b)

    # ---- declarations

    def start(self, children):
        return list(children)

    def decl(self, c):
        kw, name = c[0], c[1]
        sizes, params, ret, body = [], [], None, None
        for x in c[2:]:
            if isinstance(x, tuple) and x[0] == "size":
                sizes.append((x[1], x[2]))
            elif isinstance(x, Param):
                params.append(x)
            elif isinstance(x, tuple) and x[0] == "ret":
                ret = x[1]
            elif isinstance(x, Token):
                pass  # '='
            else:
                body = fin(x)
        return Decl(kw.type == "ENTRY", str(name), self.loc(name), sizes, params, ret, body, self.loc(kw))

    def size_param(self, c):
        return ("size", self.check_name(c[1]), self.loc(c[1]))

    def typed_param(self, c):
        return Param(self.check_name(c[1]), c[3], self.loc(c[1]))

    def untyped_param(self, c):
        return Param(self.check_name(c[0]), None, self.loc(c[0]))

    def ret_ann(self, c):
        return ("ret", c[1])

    def type(self, c):
        *dims, prim = c
        loc = dims[0][2] if dims else self.loc(prim)
        return TypeExp([(k, v) for k, v, _ in dims], str(prim), loc, self.loc(prim))

    def dim_name(self, c):
        return ("name", str(c[1]), self.loc(c[0]))

    def dim_const(self, c):
        lit = self.int_lit([c[1]])
        if lit.suffix is not None:
            raise CompileError(f'A size must be an unsuffixed integer, not "{c[1]}".', self.loc(c[1]))
        return ("const", lit.value, self.loc(c[0]))

    def dim_any(self, c):
        return ("any", None, self.loc(c[0]))

    # ---- expressions

    def exp(self, c):
        return fin(c[0])

    def let_exp(self, c):
        # LET NAME [COLON type] EQUALS exp IN exp  (maybe_placeholders gives None for a missing [...])
        let, name, _colon, ann, _eq, rhs, _in, body = c
        rhs, body = fin(rhs), fin(body)
        return LetE(self.loc(let), self.span(let, body), self.check_name(name), self.loc(name), ann, rhs, body)

    def let_exp_chained(self, c):
        # LET NAME [COLON type] EQUALS exp letexp: an `in` left out before the next `let`
        return self.let_exp(c[:6] + [None] + c[6:])

    def if_exp(self, c):
        kw, cond, _t, then, _e, else_ = c
        else_ = fin(else_)
        return IfE(self.loc(kw), self.span(kw, else_), fin(cond), fin(then), else_)

    def lambda_exp(self, c):
        bs = c[0]
        params = [x for x in c[1:] if isinstance(x, Param)]
        ret = next((x for x in c if isinstance(x, TypeExp)), None)
        body = fin(c[-1])
        return LambdaE(self.loc(bs), self.span(bs, body), params, ret, body)

    def lparam_name(self, c):
        return Param(self.check_name(c[0]), None, self.loc(c[0]))

    def lparam_typed(self, c):
        return Param(self.check_name(c[1]), c[3], self.loc(c[1]))

    def opexp(self, c):
        if len(c) == 1:
            return OpSeq([c[0]])
        seq, op, rhs = c
        return OpSeq(seq.items + [op, rhs])

    def binop(self, c):
        return (str(c[0]), self.loc(c[0]))

    def neg(self, c):
        x = c[1]
        return NegE(self.loc(c[0]), self.span(c[0], x), x)

    def not_(self, c):
        x = c[1]
        return NotE(self.loc(c[0]), self.span(c[0], x), x)

    def app(self, c):
        if len(c) == 1:
            return c[0]
        return mk_app(c[0], c[1:])

    def check_name(self, tok):
        if str(tok) in UNSUPPORTED_KEYWORDS:
            raise CompileError(f'"{tok}" is not supported by incflat yet.', self.loc(tok))
        return str(tok)

    def name(self, c):
        tok = c[0]
        self.check_name(tok)
        return Ident(self.loc(tok), self.span(tok, tok), str(tok))

    def qualname(self, c):
        tok = c[0]
        return QualIdent(self.loc(tok), self.span(tok, tok), tuple(str(tok).split(".")))

    def int_lit(self, c):
        tok = c[0]
        m = _INT_RE.match(_strip_underscores(str(tok)))
        digits, suffix = m.group(1), m.group(2)
        low = digits.lower()
        if low.startswith("0x"):
            value = int(low[2:], 16)
        elif low.startswith("0b"):
            value = int(low[2:], 2)
        else:
            value = int(low)
        return Lit(self.loc(tok), self.span(tok, tok), "int", value, suffix)

    def float_lit(self, c):
        tok = c[0]
        text = _strip_underscores(str(tok))
        suffix = None
        for s in ("f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"):
            if text.endswith(s):
                suffix, text = s, text[: -len(s)]
                break
        if suffix is not None and suffix[0] in "iu" and ("." in text or "e" in text.lower()):
            raise CompileError(f'The decimal literal "{tok}" cannot have the integer type {suffix}.',
                               self.loc(tok))
        if suffix == "f16":
            raise CompileError("The type f16 is not supported by incflat.", self.loc(tok))
        return Lit(self.loc(tok), self.span(tok, tok), "float", float(text), suffix)

    def true_lit(self, c):
        return Lit(self.loc(c[0]), self.span(c[0], c[0]), "bool", True, None)

    def false_lit(self, c):
        return Lit(self.loc(c[0]), self.span(c[0], c[0]), "bool", False, None)

    def parens(self, c):
        return fin(c[1])

    def op_section(self, c):
        op, oploc = c[1]
        return SectionE(self.loc(c[0]), self.span(c[0], c[2]), op, oploc, None, None)

    def left_section(self, c):
        op, oploc = c[2]
        return SectionE(self.loc(c[0]), self.span(c[0], c[3]), op, oploc, fin(c[1]), None)

    def right_section(self, c):
        optok = c[1]
        return SectionE(self.loc(c[0]), self.span(c[0], c[3]), str(optok), self.loc(optok), None, fin(c[2]))


_TRANSFORMER = ToSyntax("<input>")
_LOCK = threading.Lock()


@functools.lru_cache(maxsize=None)
def get_parser() -> Lark:
    """The Lark parser, built once per process. The syntax tree is built during parsing (an
    inline transformer), which is fast and needs no recursion however deep the program nests."""
    with open(GRAMMAR_PATH) as f:
        grammar = f.read()
    return Lark(grammar, parser="lalr", lexer="contextual", maybe_placeholders=True,
                transformer=_TRANSFORMER)


def _tok_desc(tok: Token) -> str:
    return f'"{tok}"'


def _end_loc(text: str, filename: str) -> Loc:
    stripped = text.rstrip()
    # skip a trailing comment-only tail: point just after the last character of the text
    line = stripped.count("\n") + 1
    col = len(stripped) - (stripped.rfind("\n") + 1) + 1
    return Loc(filename, line, col)


def parse_syntax(text: str, filename: str = "<input>") -> list:
    """Parse a whole file into a list of `Decl`."""
    parser = get_parser()
    try:
        with _LOCK:
            _TRANSFORMER.filename = filename
            return parser.parse(text)
    except UnexpectedToken as e:
        tok = e.token
        if tok.type == "$END":
            raise CompileError("Syntax error: unexpected end of file.", _end_loc(text, filename)) from None
        loc = Loc(filename, tok.line, tok.column)
        msg = f"Syntax error: unexpected token {_tok_desc(tok)}."
        expected = set(e.expected or ())
        if tok.type in ("LET", "DEF", "ENTRY") and "IN" in expected:
            msg = f'Syntax error: unexpected token {_tok_desc(tok)} - missing "in"?'
        elif tok.type == "LSQUARE" and tok.column > 1:
            msg += " (Indexing and array literals are not supported by incflat yet.)"
        elif tok.type == "NAME" and str(tok) in UNSUPPORTED_KEYWORDS:
            msg = f'"{tok}" is not supported by incflat yet.'
        raise CompileError(msg, loc) from None
    except UnexpectedCharacters as e:
        loc = Loc(filename, e.line, e.column)
        ch = text[e.pos_in_stream] if 0 <= e.pos_in_stream < len(text) else ""
        if ch == ",":
            msg = 'Syntax error: unexpected character ",". (Tuples are not supported by incflat yet.)'
        else:
            msg = f'Syntax error: unexpected character "{ch}".'
        raise CompileError(msg, loc) from None
    except UnexpectedEOF:
        raise CompileError("Syntax error: unexpected end of file.", _end_loc(text, filename)) from None
    except VisitError as e:  # pragma: no cover - only if Lark wraps a callback's exception
        if isinstance(e.orig_exc, CompileError):
            raise e.orig_exc from None
        raise
    except UnexpectedInput as e:  # pragma: no cover - any other Lark input error
        raise CompileError(f"Syntax error: {e}", Loc(filename, getattr(e, "line", 1) or 1,
                                                     getattr(e, "column", 1) or 1)) from None
