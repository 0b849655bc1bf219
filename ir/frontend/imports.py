"""The files of a program: the file an `import "path"` reads (path.fut relative to the importing file's folder,
as Futhark resolves them; `lib/github.com/...` as `futhark pkg` lays packages out), and every file a program
reads, what a cache of its compilation is keyed on. ir/frontend/modules.py gives an imported file its meaning:
a module, which `import` opens locally.
"""

from __future__ import annotations

import os

from incflat.ir.errors import CompileError
from incflat.ir.frontend.syntax import Import


def imported_path(importer: str, path: str, loc) -> str:
    """The file an `import "path"` of `importer` reads."""
    if not path or path.startswith("/") or path.endswith(".fut"):
        raise CompileError(f'An import names a file relative to the importing one, without ".fut": "{path}".', loc)
    return os.path.normpath(os.path.join(os.path.dirname(importer), path + ".fut"))


def read_source(path: str, loc) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise CompileError(f"cannot read the imported file {path}: {why}.", loc) from None


def program_files(text: str, file: str, parse_syntax) -> list[tuple[str, str]]:
    """(path, text) of every file a program reads, the main file first: what a cache of its compilation is keyed
    on. A file that cannot be read or parsed is left out (compiling the program reports it)."""
    found, pending, seen = [(file, text)], [(file, text)], {os.path.normpath(file)}
    while pending:
        importer, source = pending.pop()
        if "import" not in source:  # most programs: no parse for a cache key
            continue
        try:
            decls = parse_syntax(source, importer)
        except CompileError:
            continue
        for d in decls:
            if not isinstance(d, Import):
                continue
            try:
                target = imported_path(importer, d.path, d.loc)
                if target not in seen:
                    seen.add(target)
                    pair = (target, read_source(target, d.loc))
                    found.append(pair)
                    pending.append(pair)
            except CompileError:
                continue
    return found
