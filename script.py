"""FutharkScript, as far as `script input { ... }` uses it (futhark-test(1)): a case's input computed by calling the
program's entry points.

    exp  ::= let NAME = exp in exp | NAME atom+ | atom
    atom ::= value | NAME | ( exp ) | ( exp , exp ... ) | $loaddata "file" | $loadbytes "file"

A value is written as in data files (`100i64`, `[1, 2]`, `empty([0]f32)`); one without a type suffix takes the type
of the entry point's parameter it is passed to. A call gives its results, a tuple its components' values, in
order; the whole expression's values are the input.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from incflat.ir.errors import ToolError
from incflat.ir.runtime.values import read_values, read_value_at

NAME = re.compile(rb"[A-Za-z_][\w']*")
SUFFIX = re.compile(rb"(?:[iu](?:8|16|32|64)|f(?:16|32|64))\b|\btrue\b|\bfalse\b|\bempty\b")
VALUE_START = re.compile(rb"-?[0-9.]|\[|true\b|false\b|empty\b|f(?:32|64)\.")


class _Literal:
    """A value written without a type suffix: converted to the type of the parameter it is passed to."""

    def __init__(self, value):
        self.value = value


def evaluate(text: str, call: Callable[[str, list], list], param_types: Callable[[str], list | None],
             folder: Path) -> list:
    """The values of the expression `text`: `call(entry, args)` runs an entry point and gives its results (or raises
    ToolError with the run's error), `param_types(entry)` gives its parameters' numpy types where known, files are
    read from `folder`. ToolError for an expression that is not FutharkScript incflat reads."""
    parser = _Parser(text.encode(), call, param_types, folder)
    values = parser.exp({})
    parser.end()
    return [v.value if isinstance(v, _Literal) else v for v in values]


class _Parser:
    def __init__(self, data: bytes, call, param_types, folder: Path):
        self.data, self.pos = data, 0
        self.call, self.param_types, self.folder = call, param_types, folder

    def fail(self, what: str):
        found = self.data[self.pos:self.pos + 20].decode(errors="replace") or "the end"
        raise ToolError(f"script input: expected {what} at column {self.pos + 1} of the expression, found {found!r}")

    def skip(self):
        while self.pos < len(self.data) and self.data[self.pos:self.pos + 1].isspace():
            self.pos += 1

    def peek(self, text: bytes) -> bool:
        self.skip()
        return self.data.startswith(text, self.pos)

    def word(self) -> bytes | None:
        self.skip()
        m = NAME.match(self.data, self.pos)
        return m.group(0) if m else None

    def end(self):
        self.skip()
        if self.pos < len(self.data):
            self.fail("the end of the expression")

    def exp(self, env: dict) -> list:
        if self.word() == b"let":
            self.pos += 3
            name = self.word()
            if name is None:
                self.fail("a name after let")
            self.pos += len(name)
            if not self.peek(b"="):
                self.fail("'='")
            self.pos += 1
            bound = self.exp(env)
            if self.word() != b"in":
                self.fail("'in'")
            self.pos += 2
            return self.exp({**env, name: bound})
        name = self.word()
        if name is not None and name not in env and not VALUE_START.match(self.data, self.pos):
            self.pos += len(name)
            args = []
            while (atom := self.atom(env, optional=True)) is not None:
                args.extend(atom)
            return self.called(name.decode(), args)
        return self.atom(env)

    def atom(self, env: dict, optional: bool = False) -> list | None:
        self.skip()
        d, pos = self.data, self.pos
        if d.startswith(b"(", pos):
            self.pos += 1
            parts = [self.exp(env)]
            while self.peek(b","):
                self.pos += 1
                parts.append(self.exp(env))
            if not self.peek(b")"):
                self.fail("')'")
            self.pos += 1
            return [v for part in parts for v in part]
        if d.startswith(b"$", pos):
            return self.builtin()
        name = self.word()
        if name is not None and name in env and not VALUE_START.match(d, pos):
            self.pos += len(name)
            return list(env[name])
        if VALUE_START.match(d, pos):
            try:
                value, end = read_value_at(d, pos)
            except ValueError as e:
                raise ToolError(f"script input: {e}") from None
            self.pos = end
            return [value if SUFFIX.search(d, pos, end) else _Literal(value)]
        if optional:
            return None
        self.fail("a value, a name, '(' or a $builtin")

    def builtin(self) -> list:
        self.pos += 1
        name = self.word() or b""
        self.pos += len(name)
        self.skip()
        m = re.compile(rb'"([^"]*)"').match(self.data, self.pos)
        if name not in (b"loaddata", b"loadbytes") or not m:
            self.fail('$loaddata "file" or $loadbytes "file"')
        self.pos = m.end()
        path = self.folder / m.group(1).decode()
        try:
            if name == b"loadbytes":
                return [np.frombuffer(path.read_bytes(), np.uint8).copy()]
            with open(path, "rb") as f:
                return read_values(f)
        except OSError as e:
            raise ToolError(f"script input: cannot read {path}: {e.strerror}") from None
        except ValueError as e:
            raise ToolError(f"script input: {path}: {e}") from None

    def called(self, entry: str, args: list) -> list:
        types = self.param_types(entry)
        values = []
        for k, a in enumerate(args):
            if isinstance(a, _Literal):
                want = types[k] if types is not None and k < len(types) else None
                a = np.asarray(a.value).astype(want) if want is not None else a.value
                a = a[()] if isinstance(a, np.ndarray) and a.ndim == 0 else a
            values.append(a)
        return list(self.call(entry, values))
