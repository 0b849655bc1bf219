"""Parsing: source text to a syntax tree (the dataclasses of ir/frontend/syntax.py), with Lark's LALR parser.

Lark's exceptions are turned into `CompileError`.

Some sugar is removed here: `x |> f` and `f <| x` become applications, `let a[i] = v in e`
becomes `let a = a with [i] = v in e`, `let r.f = v in e` becomes `let r = r with f = v in e`, and
attributes are dropped, but `#[param(NAME)] e` (a tuning parameter) and `#[unsafe] e` (its positions are marked
unsafe: kernels leave out their checks), and a constructor applied to arguments (`#node l r`) holds them as
its payload. A field named twice in a record type, expression or pattern, or a constructor twice in a sum type,
is an error here.
"""

import functools
import importlib.resources
import itertools
import re
import threading

from lark import Lark, Token
from lark.exceptions import (UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken,
                             VisitError)
from lark.visitors import Transformer

from incflat.ir.errors import CompileError
from incflat.ir.source import Loc
from incflat.ir.frontend.module_syntax import ModuleSyntax
from incflat.ir.frontend.type_syntax import TypeSyntax
from incflat.ir.frontend.operators import OpSeq, fin
from incflat.ir.frontend.syntax import (ArrayE, AscribeE, AssertE, Case, ConstrE, Decl, ForIn, ForUpto,
                                       HoleE, Ident, IfE, Import, IndexE, LambdaE, LetE, LetFunE, LocalDecl, Lit,
                                       LoopE, MatchE, NegE, Node, NotE, ParamE, PConstr, PLit, PName, PRecord, PTuple,
                                       PTyped, PWild, ProjE, QualIdent, RangeE, RecordE,
                                       RecordUpdateE, SectionE, SliceI, SourceText, Syntax, TupleE,
                                       TypeDecl, TypeExp, While, WithE, mark_unsafe, mk_app)

# The parameter of an index section's lambda: not a valid identifier, so it cannot capture a user's name.
SECTION_PARAM = "(.[])"

_INT_RE = re.compile(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)([iu](?:8|16|32|64))?$")


def _strip_underscores(s):
    return s.replace("_", "")


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\",
            '"': '"', "'": "'", "&": ""}
_ESCAPE_RE = re.compile(r"\\(?:([0-9]+)|x([0-9a-fA-F]+)|o([0-7]+)|(.))")


def _unescape(text, tok, loc):
    """The characters of a string or character literal's text between its quotes, its escapes decoded as
    Futhark (Haskell) decodes them."""
    def one(m):
        dec, hexa, octa, ch = m.groups()
        if ch is not None:
            if ch not in _ESCAPES:
                raise CompileError(f"Invalid escape sequence \\{ch} in the literal {tok}.", loc)
            return _ESCAPES[ch]
        code = int(dec) if dec else int(hexa, 16) if hexa else int(octa, 8)
        if code > 0x10FFFF:
            raise CompileError(f"The escape {m.group(0)} in the literal {tok} is beyond the last Unicode code point "
                               "(0x10FFFF).", loc)
        return chr(code)
    out = _ESCAPE_RE.sub(one, text)
    if str(tok).startswith("'") and len(out) != 1:
        raise CompileError(f"The character literal {tok} is not one character.", loc)
    return out


class _Attr:
    """A parsed attribute: `item` is (name, args), args a list of items or None (`#[inline]`); all but
    `#[param(NAME)]` on an expression are ignored."""

    def __init__(self, item, loc):
        self.item, self.loc = item, loc

    def param_name(self):
        """NAME of `#[param(NAME)]`, else None."""
        name, args = self.item
        if name == "param" and args is not None and len(args) == 1 and args[0][1] is None:
            return args[0][0]
        return None


class ToSyntax(ModuleSyntax, TypeSyntax, Transformer):
    def __init__(self, filename):
        super().__init__()
        self.filename = filename

    def loc(self, tok: Token) -> Loc:
        return Loc(self.filename, tok.line, tok.column)

    def span(self, first, last):
        a = first.span[0] if isinstance(first, Node) else first.start_pos
        b = last.span[1] if isinstance(last, Node) else last.end_pos
        return (a, b)

    def err(self, msg, tok):
        raise CompileError(msg, self.loc(tok) if isinstance(tok, Token) else tok)

    # ---- declarations

    def start(self, children):
        return [d for d in children if d is not None]  # (a module type declares nothing that is kept)

    def fun_decl(self, c):
        c = [x for x in c if not isinstance(x, _Attr)]
        kw, name = c[0], c[1]
        return self.make_decl(kw, str(name), self.loc(name), c[2:])

    def op_decl(self, c):
        # def (+^) params... = body
        c = [x for x in c if not isinstance(x, _Attr)]
        kw, op = c[0], c[2]
        return self.make_decl(kw, self.check_op_name(op), self.loc(op), c[4:])

    def infix_op_decl(self, c):
        # def (a: t) +^ (b: t): rt = body
        c = [x for x in c if not isinstance(x, _Attr)]
        kw, lhs, op, rhs = c[:4]
        return self.make_decl(kw, self.check_op_name(op), self.loc(op), [lhs, rhs] + c[4:])

    def infix_minus_decl(self, c):
        # def (a: t) - (b: t): rt = body (its left operand bracketed: `def x - ...` would be a parameter -...)
        c = [x for x in c if not isinstance(x, _Attr)]
        kw, lhs, op, rhs = c[0], c[2], c[4], c[5]
        return self.make_decl(kw, "-", self.loc(op), [lhs, rhs] + c[6:])

    def check_op_name(self, tok):
        if str(tok) in ("&&", "||"):
            self.err(f'The operator "{tok}" cannot be defined: a user-defined version would not '
                     f'short-circuit (Futhark forbids it).', tok)
        return str(tok)

    def make_decl(self, kw, name, name_loc, c):
        """c: size parameters, parameters, then [COLON type] EQUALS exp."""
        sizes, types, params = [], [], []
        i = 0
        while isinstance(c[i], tuple) and c[i][0] in ("size", "type"):
            (sizes if c[i][0] == "size" else types).append((c[i][1], c[i][2]))
            i += 1
        while not (c[i] is None or (isinstance(c[i], Token) and c[i].type in ("COLON", "EQUALS"))):
            params.append(c[i])
            i += 1
        # [COLON type] EQUALS exp: with placeholders, a missing `: type` gives None, None
        rest = c[i:]
        ret = rest[1] if len(rest) == 4 else None
        body = fin(rest[-1])
        return Decl(kw.type == "ENTRY", name, name_loc, sizes, params, ret, body, self.loc(kw), types)

    def type_decl(self, c):
        c = [x for x in c if not isinstance(x, _Attr)]
        kw, name = c[0], c[1]
        sizes = [(x[1], x[2]) for x in c[2:-2] if x[0] != "type"]
        type_params = [(x[1], x[2]) for x in c[2:-2] if x[0] == "type"]
        return TypeDecl(str(name), self.loc(name), sizes, c[-1], self.loc(kw), type_params=type_params)

    def lifted_type_decl(self, c):
        """`type^ name [n] = t`, which may be a function type: expanded where it is used (lifted.py)."""
        c = [x for x in c if not isinstance(x, _Attr)]
        if str(c[1]) != "^":
            self.err(f'"type{c[1]}" is not supported by incflat (only type^, a lifted type abbreviation).', c[1])
        decl = self.type_decl([c[0]] + c[2:])
        decl.lifted = True
        return decl

    def size_lifted_type_decl(self, c):
        """`type~ name [n] = t`: a type whose sizes may be unknown (`[]`); a plain abbreviation here, as incflat
        checks unknown sizes where they are used."""
        return self.type_decl(c)

    def local_decl(self, c):
        """`local d`: hidden outside the module that holds it (ir/frontend/modules.py); `local import` is an
        import (which is `local open` already)."""
        if c[1] is None or isinstance(c[1], Import):
            return c[1]
        return LocalDecl(c[1])

    def import_decl(self, c):
        """`import "path"`: `local open` of the file's module (ir/frontend/modules.py)."""
        return Import(self.literal_text(c[-1]), self.loc(c[0]))

    def size_param(self, c):
        return ("size", str(c[1]), self.loc(c[1]))

    def type_param(self, c):
        return ("type", str(c[0]).lstrip("'~^"), self.loc(c[0]))

    def attr(self, c):
        return _Attr(c[1], self.loc(c[0]))

    def attr_item(self, c):
        if len(c) == 1:
            return (str(c[0]), None)
        return (str(c[0]), [x for x in c[2:-1] if isinstance(x, tuple)])

    def attr_exp(self, c):
        attr, body = c[0], fin(c[1])
        if attr.item == ("unsafe", None):
            mark_unsafe(body)
        name = attr.param_name()
        if name is None:
            return body
        return ParamE(attr.loc, (body.span[0], body.span[1]), name, body)

    # ---- patterns

    def pat(self, c):
        return c[0]

    cpat = pat

    def pat_typed(self, c):
        p, _colon, t = c
        return PTyped(p, t, getattr(p, "loc", None))

    def pat_name(self, c):
        tok = c[0]
        name = str(tok)
        if name == "_":
            return PWild(self.loc(tok))
        return PName(name, self.loc(tok))

    def pat_constr(self, c):
        tok, *args = c
        return PConstr(str(tok)[1:], args, self.loc(tok))

    def pat_number(self, c):
        minus, tok = c
        lit = self.int_lit([tok]) if tok.type == "INT" else self.float_lit([tok])
        if minus is not None:
            lit = Lit(self.loc(minus), self.span(minus, tok), lit.kind, -lit.value, lit.suffix)
        return PLit(lit, lit.loc)

    def pat_char(self, c):
        lit = self.char_lit(c)
        return PLit(lit, lit.loc)

    def pat_bool(self, c):
        lit = self.true_lit(c) if c[0].type == "TRUE" else self.false_lit(c)
        return PLit(lit, lit.loc)

    def pat_op(self, c):
        return PName(str(c[1]), self.loc(c[1]))

    def pat_paren(self, c):
        return c[1]

    def pat_tuple(self, c):
        elems = [x for x in c[1:] if x is not None and not isinstance(x, Token)]
        return PTuple(elems, self.loc(c[0]))

    def pat_unit(self, c):
        return PTuple([], self.loc(c[0]))

    def pat_record(self, c):
        fields = self.distinct_fields([x for x in c[1:] if isinstance(x, tuple)], "record pattern")
        return PRecord(fields, self.loc(c[0]))

    def pat_empty_record(self, c):
        self.err("The empty record {} is not supported by incflat.", c[0])

    def field_pat_bind(self, c):
        tok, _eq, p = c
        return (str(tok), self.loc(tok), p)

    def field_pat_typed(self, c):
        tok, _colon, t = c
        return (str(tok), self.loc(tok), PTyped(self.pat_name([tok]), t, self.loc(tok)))

    def field_pat_pun(self, c):
        return (str(c[0]), self.loc(c[0]), self.pat_name(c))

    # ---- records

    def fieldid(self, c):
        tok = c[0]
        if tok.type == "INT" and not str(tok).isdigit():
            self.err(f'"{tok}" is not a field name; a numeric field is written with decimal digits only, as in '
                     f't.0.', tok)
        return tok

    def distinct_fields(self, fields, what):
        """fields: (name, Loc, x) triples, each name once."""
        seen = {}
        for name, loc, _ in fields:
            if name in seen:
                raise CompileError(f'The field "{name}" appears twice in this {what} (first at line {seen[name].line}, '
                                   f'column {seen[name].col}).', loc)
            seen[name] = loc
        return fields

    def field_bind(self, c):
        tok, _eq, e = c
        return (str(tok), self.loc(tok), fin(e))

    def field_pun(self, c):
        return (str(c[0]), self.loc(c[0]), self.name(c))

    def record_exp(self, c):
        fields = self.distinct_fields([x for x in c[1:] if isinstance(x, tuple)], "record")
        return RecordE(self.loc(c[0]), self.span(c[0], c[-1]), fields)

    def empty_record(self, c):
        self.err("The empty record {} is not supported by incflat.", c[0])

    def path_steps(self, toks):
        """The (field, Loc) steps of `a.b` (a QUALNAME), `a`, `0` and `.c` (PROJ) tokens."""
        steps = []
        for tok in toks:
            if tok.type == "PROJ":
                steps.append((str(tok)[1:], Loc(self.filename, tok.line, tok.column + 1)))
            elif tok.type == "QUALNAME":
                col = tok.column
                for part in str(tok).split("."):
                    steps.append((part, Loc(self.filename, tok.line, col)))
                    col += len(part) + 1
            else:
                steps.append((str(self.fieldid([tok])), self.loc(tok)))
        return steps

    def update_path(self, c):
        """The steps of `with`'s path, outermost first: ("field", (name, Loc)) and ("index", (indices, Loc))."""
        if isinstance(c[0], Token) and c[0].type == "LSQUARE":
            first, rest = [("index", (c[1], self.loc(c[0])))], c[3:]
        else:
            first, rest = [("field", step) for step in self.path_steps(c[:1])], c[1:]
        return first + list(rest)

    def path_step(self, c):
        if len(c) == 1:
            return "field", self.path_steps(c)[0]
        return "index", (c[1], self.loc(c[0]))

    def with_path(self, c):
        rec, kw, steps, _eq, val = c
        return self.updated(fin(rec), steps, fin(val), self.loc(kw))

    def updated(self, x, steps, val, loc):
        """`x with steps = val`, where the steps mix fields and indices, as Futhark reads it: the outermost run of
        fields (or the outermost index) updated with the part of x there, itself updated with the rest."""
        span = (x.span[0], val.span[1])
        kind = steps[0][0]
        run = [step for _, step in itertools.takewhile(lambda s: s[0] == "field", steps)] if kind == "field" \
            else [steps[0][1]]
        rest = steps[len(run):]
        if not rest:
            return RecordUpdateE(loc, span, x, run, val) if kind == "field" else WithE(loc, span, x, run[0][0], val)
        target = x if isinstance(x, Ident) else Ident(x.loc, x.span, "(with)")  # (a name no program can write)
        if kind == "field":
            part = target
            for name, floc in run:
                part = ProjE(floc, span, part, name, floc)
            inner = self.updated(part, rest, val, loc)
            out = RecordUpdateE(loc, span, target, run, inner)
        else:
            idxs, iloc = run[0]
            inner = self.updated(IndexE(iloc, span, target, idxs, iloc), rest, val, loc)
            out = WithE(loc, span, target, idxs, inner)
        return out if target is x else LetE(loc, span, PName(target.name, x.loc), [], x, out)

    def let_path(self, c):
        # let r.a[i].b = v in body  ==>  let r = r with a[i].b = v in body
        let, head, *steps = c[:-3]
        rhs, body = fin(c[-2]), fin(c[-1])
        (name, loc), *fields = self.path_steps([head])
        r = Ident(loc, (head.start_pos, head.start_pos + len(name)), name)
        path = [("field", f) for f in fields] + steps
        upd = self.updated(r, path, rhs, path[0][1][1] if path[0][0] == "index" else loc)  # (at `[`, as a with)
        return LetE(self.loc(let), self.span(let, body), PName(name, loc), [], upd, body)

    # ---- expressions

    def exp(self, c):
        return fin(c[0])

    exp_na = exp_nm = exp

    def ascribe(self, c):
        x = fin(c[0])
        return AscribeE(self.loc(c[1]), (x.span[0], c[1].end_pos), x, c[2], False)

    def coerce(self, c):
        x = fin(c[0])
        return AscribeE(self.loc(c[1]), (x.span[0], c[1].end_pos), x, c[2], True)

    def letrest(self, c):
        return fin(c[-1])

    def size_binder(self, c):
        return (str(c[1]), self.loc(c[1]))

    def let_pat(self, c):
        let = c[0]
        sizes = [x for x in c[1:-4]]
        pat, _eq, rhs, body = c[-4:]
        rhs, body = fin(rhs), fin(body)
        return LetE(self.loc(let), self.span(let, body), pat, sizes, rhs, body)

    def let_fun(self, c):
        let, name = c[0], c[1]
        rhs, body = fin(c[-2]), fin(c[-1])
        rest = c[2:-3]  # size and type parameters, params, [COLON type]
        ret = rest[-1]
        sizes = [(n, loc) for x in rest[:-2] if isinstance(x, tuple) for kind, n, loc in [x] if kind == "size"]
        types = [(n, loc) for x in rest[:-2] if isinstance(x, tuple) for kind, n, loc in [x] if kind == "type"]
        params = [x for x in rest[:-2] if not isinstance(x, tuple)]
        return LetFunE(self.loc(let), self.span(let, body), str(name), self.loc(name), params, ret,
                       rhs, body, sizes, types)

    def assert_exp(self, c):
        kw, cond, body = c
        cond, body = fin(cond), fin(body)
        return AssertE(self.loc(kw), self.span(kw, body), cond, body)

    def match_exp(self, c):
        kw, x, *cases = c
        return MatchE(self.loc(kw), self.span(kw, cases[-1].body), fin(x), cases)

    def match_case(self, c):
        kw, pat, _arrow, body = c
        return Case(pat, fin(body), self.loc(kw))

    def if_exp(self, c):
        kw, cond, _t, then, _e, else_ = c
        else_ = fin(else_)
        return IfE(self.loc(kw), self.span(kw, else_), fin(cond), fin(then), else_)

    def loop_exp(self, c):
        kw, pat, _eq, init, form, _do, body = c
        body = fin(body)
        return LoopE(self.loc(kw), self.span(kw, body), pat, fin(init) if init is not None else None, form, body)

    def for_upto(self, c):
        _for, name, op, bound = c
        if str(op) != "<":
            self.err(f'Syntax error: unexpected "{op}" in a for loop; write "for {name} < n" or '
                     f'"for x in xs".', op)
        return ForUpto(str(name), self.loc(name), fin(bound))

    def for_in(self, c):
        return ForIn(c[1], fin(c[3]))

    def while_(self, c):
        return While(fin(c[1]))

    def lambda_exp(self, c):
        bs = c[0]
        body = fin(c[-1])
        ret = c[-3]
        params = [x for x in c[1:-4]]
        return LambdaE(self.loc(bs), self.span(bs, body), params, ret, body)

    def app_lambda(self, c):
        """`f a \\x -> e`: an application whose last argument is a lambda, unbracketed (as Futhark allows)."""
        k = next(i for i, x in enumerate(c) if isinstance(x, Token) and x.type == "BACKSLASH")
        return mk_app(c[0], [*c[1:k], self.lambda_exp(c[k:])])

    def withexp(self, c):
        return fin(c[0])

    def opexp(self, c):
        if len(c) == 1:
            return OpSeq([c[0]])
        seq, op, rhs = c
        seq.items += (op, rhs)  # in place: a sequence of n operators is built in linear time
        return seq

    def open_operand(self, c):
        """`x + if c then a else b`: the open expression is the sequence's last operand."""
        seq, op, rhs = c
        seq.items += (op, fin(rhs))
        return seq.resolve()

    def binop(self, c):
        """(operator, its location, the function of a backquoted operator or None)."""
        return (str(c[0]), self.loc(c[0]), None)

    section_op = binop

    def backquote_op(self, c):
        _bq, tok, _bq2 = c
        fn = self.qualname([tok]) if tok.type == "QUALNAME" else self.name([tok])
        return (f"`{tok}`", self.loc(tok), fn)

    def range_exp(self, c):
        start, _dots, second, end_tok, end = c
        start, end = fin(start), fin(end)
        return RangeE(self.loc(end_tok), (start.span[0], end.span[1]), start,
                      fin(second) if second is not None else None, str(end_tok), end)

    def range_end(self, c):
        return c[0]

    def rangeexp(self, c):
        return fin(c[0])

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

    def name(self, c):
        tok = c[0]
        return Ident(self.loc(tok), self.span(tok, tok), str(tok))

    def hole(self, c):
        return HoleE(self.loc(c[0]), self.span(c[0], c[0]))

    def constructor(self, c):
        tok = c[0]
        return ConstrE(self.loc(tok), self.span(tok, tok), str(tok)[1:], [])

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

    def literal_text(self, tok):
        """The text of a string or character literal token, its escapes decoded."""
        return _unescape(str(tok)[1:-1], tok, self.loc(tok))

    def char_lit(self, c):
        """`'a'`: the integer of its code point, typed as an unsuffixed integer literal (as Futhark)."""
        tok = c[0]
        return Lit(self.loc(tok), self.span(tok, tok), "int", ord(self.literal_text(tok)),
                   None)

    def string_lit(self, c):
        """`"abc"`: the array of its UTF-8 bytes, `[]u8` (as Futhark); `""` is an empty `[0]u8`."""
        tok = c[0]
        loc, span = self.loc(tok), self.span(tok, tok)
        data = self.literal_text(tok).encode("utf-8", "surrogatepass")
        arr = ArrayE(loc, span, [Lit(loc, span, "int", b, "u8") for b in data])
        if data:
            return arr
        return AscribeE(loc, span, arr, TypeExp([("const", 0)], "u8", loc, loc))

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

    def tuple_exp(self, c):
        elems = [fin(x) for x in c[1:-1] if x is not None and not isinstance(x, Token)]
        return TupleE(self.loc(c[0]), self.span(c[0], c[-1]), elems)

    def unit_exp(self, c):
        return TupleE(self.loc(c[0]), self.span(c[0], c[1]), [])

    def array_lit(self, c):
        elems = [fin(x) for x in c[1:-1] if x is not None and not isinstance(x, Token)]
        return ArrayE(self.loc(c[0]), self.span(c[0], c[-1]), elems)

    def empty_array(self, c):
        return ArrayE(self.loc(c[0]), self.span(c[0], c[1]), [])

    def index_exp(self, c):
        arr, lsq, idxs, rsq = c
        return IndexE(arr.loc, self.span(arr, rsq), arr, idxs, self.loc(lsq))

    def index_list(self, c):
        return [x for x in c if x is not None and not (isinstance(x, Token) and x.type == "COMMA")]

    def idx_point(self, c):
        return fin(c[0])

    def idx_slice(self, c):
        a, colon, b = c
        return SliceI(fin(a) if a is not None else None, fin(b) if b is not None else None, None,
                      a.loc if isinstance(a, Node) else self.loc(colon))

    def idx_slice_stride(self, c):
        a, colon, b, _colon2, s = c
        return SliceI(*(fin(x) if x is not None else None for x in (a, b, s)),
                      a.loc if isinstance(a, Node) else self.loc(colon))

    def proj_exp(self, c):
        x, tok = c
        return ProjE(x.loc, self.span(x, tok), x, str(tok)[1:], Loc(self.filename, tok.line, tok.column + 1))

    def field_section(self, c):
        tok = c[0]
        loc, span = self.loc(tok), self.span(tok, tok)
        x = Ident(loc, span, "_field")
        for k in str(tok)[2:-1].split("."):
            x = ProjE(loc, span, x, k, loc)
        return LambdaE(loc, span, [PName("_field", loc)], None, x)

    def op_section(self, c):
        op, oploc, fn = c[1]
        return SectionE(self.loc(c[0]), self.span(c[0], c[2]), op, oploc, None, None, fn)

    def left_section(self, c):
        op, oploc, fn = c[2]
        return SectionE(self.loc(c[0]), self.span(c[0], c[3]), op, oploc, fin(c[1]), None, fn)

    def right_section(self, c):
        op, oploc, fn = c[1]
        return SectionE(self.loc(c[0]), self.span(c[0], c[3]), op, oploc, None, fin(c[2]), fn)

    def index_section(self, c):
        # (.[i, j]) is \x -> x[i, j]
        tok, idxs, _rsq, rpar = c
        loc, span = self.loc(tok), self.span(tok, rpar)
        x = Ident(loc, span, SECTION_PARAM)
        return LambdaE(loc, span, [PName(SECTION_PARAM, loc)], None, IndexE(loc, span, x, idxs, loc))


_TRANSFORMER = ToSyntax("<input>")
_LOCK = threading.Lock()


def grammar_text() -> str:
    return importlib.resources.files(__package__).joinpath("grammar.lark").read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def get_parser() -> Lark:
    """The Lark parser, built once per process. The syntax tree is built during parsing (an
    inline transformer), which is fast and needs no recursion however deep the program nests. Lark keeps the
    parse table in a file of the temporary folder, keyed by the grammar and Lark's version (`cache`): a process
    loads it in a tenth of the time it takes to build (a damaged one is silently built again)."""
    return Lark(grammar_text(), parser="lalr", lexer="contextual", maybe_placeholders=True,
                transformer=_TRANSFORMER, cache=True)


_TOKEN_TEXT = {
    "$END": "end of file", "INDEX_LSQUARE": '"["', "PROJ": "a projection",
}


def _tok_desc(tok: Token) -> str:
    return f'"{tok}"'


def _end_loc(text: str, filename: str) -> Loc:
    stripped = text.rstrip()
    line = stripped.count("\n") + 1
    col = len(stripped) - (stripped.rfind("\n") + 1) + 1
    return Loc(filename, line, col)


def _hint(tok: Token, expected: set, text: str) -> str:
    """A hint for a common mistake, or ''."""
    t = tok.type
    if t in ("LET", "DEF", "ENTRY", "TYPE") and "IN" in expected:
        return ' - missing "in"?'
    if t == "LSQUARE" and tok.start_pos > 0 and text[tok.start_pos - 1] in " \t" and \
            "INDEX_LSQUARE" in expected:
        return " (Write a[i] without a space to index; a [i] applies a to an array literal.)"
    if t == "COLON" and "ARROW" in expected and re.search(r"\bcase\b[^>]*$", text[:tok.start_pos]):
        return " - a case's pattern with a type is written in brackets: case (x: t) -> ..."
    if t == "MATCH" and "BACKSLASH" in expected:
        return " - a match here is written in brackets: (match x case ...)."
    if t in ("RBRACE", "COMMA") and "EQUALS" in expected:
        return ' - a record field is written "name = value", or "name" for the variable of that name.'
    if "DO" in expected and t not in ("DO",):
        return ' - missing "do"?'
    if "THEN" in expected:
        return ' - missing "then"?'
    if "ELSE" in expected:
        return ' - missing "else"? (Every "if" needs an "else".)'
    so_far = _declaration_so_far(text, tok.start_pos)
    if t == "LSQUARE" and "LPAR" in expected and "=" not in so_far:
        return " - size parameters such as [n] come before the other parameters, as in Futhark."
    if "FOR" in expected and "WHILE" in expected and re.search(r"\bloop\b", so_far):
        return ' - a loop needs "for i < n", "for x in xs" or "while cond" before "do".'
    return ""


def _declaration_so_far(text: str, pos) -> str:
    """The text of the declaration that the error is in, up to the error (LALR's expected tokens are a union
    over many contexts: a hint must fit what was written)."""
    pos = pos if isinstance(pos, int) else len(text)
    starts = [m.start() for m in re.finditer(r"^(def|entry|let|type)\b", text[:pos], re.MULTILINE)]
    return text[starts[-1] if starts else 0:pos]


def parse_syntax(text: str, filename: str = "<input>") -> list:
    """Parse a whole file into a list of `Decl` and `TypeDecl`."""
    parser = get_parser()
    try:
        with _LOCK:
            _TRANSFORMER.filename = filename
            return parser.parse(text)
    except UnexpectedToken as e:
        tok = e.token
        expected = set(e.expected or ())
        if tok.type == "$END":
            msg = "Syntax error: unexpected end of file."
            hint = _hint(tok, expected, text)
            if hint and "missing" in hint:
                msg = "Syntax error: unexpected end of file" + hint
            raise CompileError(msg, _end_loc(text, filename)) from None
        loc = Loc(filename, tok.line, tok.column)
        if tok.type == "TYPEVAR" and "TYPEVAR" not in expected:  # `'ab'`, `'a`: a broken character literal
            raise CompileError(f"Syntax error: unexpected {tok}. (A character literal holds one character: 'a', "
                               "'\\n'.)", loc) from None
        hint = _hint(tok, expected, text)
        sep = "" if hint.startswith(" -") else "."
        msg = f"Syntax error: unexpected token {_tok_desc(tok)}{sep}{hint}"
        if sep == "" and not msg.endswith((".", "?", ")")):
            msg += "."
        raise CompileError(msg, loc) from None
    except UnexpectedCharacters as e:
        loc = Loc(filename, e.line, e.column)
        ch = text[e.pos_in_stream] if 0 <= e.pos_in_stream < len(text) else ""
        msg = f'Syntax error: unexpected character "{ch}".'
        if ch == "[":
            msg += " (Write a[i] without a space to index an array.)"
        elif ch == "." and e.pos_in_stream > 0 and text[e.pos_in_stream - 1] in " \t":
            msg += " (Write t.0 without a space to project a tuple.)"
        elif ch == "'":
            msg += " (A character literal holds one character: 'a', '\\n'.)"
        elif ch == '"':
            msg += " (A string literal ends on its line.)"
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


def parse(source: SourceText) -> Syntax:
    """The parse stage of the pipeline: the file's declarations, its imports' in place of each `import`."""
    from incflat.ir.frontend.lifted import expand_lifted_types
    from incflat.ir.frontend.modules import elaborate_modules
    decls = elaborate_modules(parse_syntax(source.text, source.file), source.file, parse_syntax)
    return Syntax(expand_lifted_types(decls), source.file, source.text)
