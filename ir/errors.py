"""The one exception type for every user-facing error of the compiler, and its rendering.

    file.fut:3:11: error: Unknown name "foo".
      let y = foo x in y
              ^
"""

from pathlib import Path
from typing import Optional

from incflat.ir.source import Loc


class CompileError(Exception):
    """An error in the user's program (or its inputs), with the position it concerns.

    `message` is a complete sentence as a Futhark user would read it; `loc` may be None when no
    position applies (a missing file, an error in a data set, ...)."""

    def __init__(self, message: str, loc: Optional[Loc] = None):
        super().__init__(message)
        self.message = message
        self.loc = loc

    def __str__(self):
        if self.loc is None:
            return f"error: {self.message}"
        return f"{self.loc}: error: {self.message}"


def source_of(err: Exception, path=None, text: Optional[str] = None) -> Optional[str]:
    """The text of the file an error points into, for its source line and caret: `text` where that is the file
    `path` (already read), else read from disk (an imported file); None if it cannot be read."""
    loc = getattr(err, "loc", None)
    name = loc.file if loc is not None else path
    if text is not None and path is not None and str(name) == str(path):
        return text
    try:
        return Path(name).read_bytes().decode("utf-8", errors="replace")
    except (OSError, TypeError, ValueError):
        return None


def format_error(err: Exception, source_text: Optional[str] = None) -> str:
    """`file:line:col: error: message`, then the source line and a caret under the column.

    Works for any exception; the source excerpt is left out when there is no location, no
    source text, or the line does not exist in it."""
    message = getattr(err, "message", None) or str(err)
    loc = getattr(err, "loc", None)
    if loc is None:
        return f"error: {message}"
    head = f"{loc.file}:{loc.line}:{loc.col}: error: {message}"
    if source_text is None:
        return head
    lines = source_text.splitlines()
    if not (1 <= loc.line <= len(lines)):
        return head
    line = lines[loc.line - 1]
    col = max(1, loc.col)
    # Keep tabs in the padding so that the caret lines up however tabs are shown.
    pad = "".join(c if c == "\t" else " " for c in line[: col - 1])
    pad += " " * max(0, col - 1 - len(line))
    return f"{head}\n{line}\n{pad}^"


def format_run_error(err: Exception, source_text: Optional[str] = None) -> str:
    """A program's run-time error as compiled programs and Futhark's report it, `Error: file:line:col: message`,
    then the source line and a caret where the text is known."""
    message = getattr(err, "message", None) or str(err)
    loc = getattr(err, "loc", None)
    if loc is None:
        return f"Error: {message}"
    excerpt = format_error(err, source_text).splitlines()[1:]
    return "\n".join([f"Error: {loc.file}:{loc.line}:{loc.col}: {message}", *excerpt])


def decode_source(data: bytes, file: str) -> str:
    """A program's bytes as text; a CompileError at the line and column of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[:e.start].decode("utf-8")  # valid up to the bad byte
        line = before.count("\n") + 1
        col = len(before) - (before.rfind("\n") + 1) + 1
        raise CompileError(f"The file is not UTF-8 text: byte 0x{data[e.start]:02x} ({e.reason}).",
                           Loc(file, line, col)) from None


def not_a_file(path) -> str:
    """Why a program path that is not a regular file cannot be read as one."""
    path = Path(path)
    return "is a directory" if path.is_dir() else "not a regular file" if path.exists() else "no such file"


def read_source(path) -> str:
    """The text of a program file (OSError if it cannot be read; CompileError if it is not UTF-8)."""
    with open(path, "rb") as f:
        return decode_source(f.read(), str(path))


class Unsupported(CompileError):
    """A program (or one code version of it) that the backend cannot generate code for yet: a typed error, so
    that callers ask `isinstance`, never the message."""

    def __init__(self, what: str, loc: Optional[Loc] = None):
        super().__init__(f"not supported yet: {what}", loc)
        self.what = what


class ToolError(Exception):
    """An error in what the tools are given besides a program (test blocks, data files, tuning files, options) or
    in what a compiled program did when they ran them: its message is printed as one line, without a traceback."""
