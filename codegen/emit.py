"""Emitters: lines of code indented by the structure that holds them, never by hand.

`with out.block(head):` writes a block's head and indents what is emitted inside it: `head {` ... `}` for
OpenCL C, `head:` for Python. A small emitter of our own rather than cgen or genpy: the kernel writers build
their C expressions as strings while they bind names (cgen has no expression trees either), and what they
need from a library, balanced blocks and indentation by nesting, is these forty lines.
"""

import contextlib


class Emitter:
    INDENT = "    "

    def __init__(self, depth: int = 0):
        self.lines = []
        self.depth = depth

    def line(self, text: str = ""):
        self.lines.append(self.INDENT * self.depth + text if text else "")

    @contextlib.contextmanager
    def indented(self):
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def text(self) -> str:
        return "\n".join(self.lines)


class CEmitter(Emitter):
    INDENT = "  "

    @contextlib.contextmanager
    def block(self, head: str):
        """`head { ... }`; `head` may be empty for a bare block."""
        self.line(f"{head} {{" if head else "{")
        with self.indented():
            yield
        self.line("}")

    def if_else(self, condition: str, then, otherwise):
        """`if (condition) {then()} else {otherwise()}`, each callable emitting its branch."""
        with self.block(f"if ({condition})"):
            then()
        with self.block("else"):
            otherwise()


class PyEmitter(Emitter):
    @contextlib.contextmanager
    def block(self, head: str):
        """`head:` and its indented suite."""
        self.line(f"{head}:")
        with self.indented():
            yield
