"""The front end: Futhark source text to the typed source IR (ir.source) in A-normal form.

    parse_program(text, filename) -> ir.source.Program
    load_program(path) -> ir.source.Program

Parsing (Lark, LALR) lives in ir/parse.py with the grammar in ir/grammar.lark; type checking,
literal typing and lowering live in ir/check.py. Every user error is an ir.errors.CompileError.
"""

import os
import sys

from ir.check import check_program
from ir.errors import CompileError
from ir.parse import get_parser, parse_syntax
from ir.source import Program

__all__ = ["parse_program", "load_program", "CompileError", "get_parser"]


def parse_program(text: str, filename: str = "<input>") -> Program:
    """Parse, type-check and lower a whole program."""
    # Lowering recurses on the nesting of expressions (a long `a + b + c + ...` nests deeply).
    old = sys.getrecursionlimit()
    if old < 20000:
        sys.setrecursionlimit(20000)
    try:
        decls = parse_syntax(text, filename)
        return check_program(decls, filename, text)
    finally:
        if old < 20000:
            sys.setrecursionlimit(old)


def load_program(path) -> Program:
    """`parse_program` on the contents of a file; the file name in locations is `path` as given."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise CompileError(f'Cannot read "{path}": {e.strerror or e}.') from None
    return parse_program(text, path)
