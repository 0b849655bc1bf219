"""`import "path"`: the declarations of another file, path.fut relative to the importing file's folder (as Futhark
resolves them; `lib/github.com/...` as `futhark pkg` lays packages out), spliced in place of the import.

Each file is read and parsed once, however many files import it; an `entry` of an imported file is an ordinary
function (only the compiled file's are entry points); a cycle of imports is an error at the import that closes
it, and errors inside an imported file name that file. Names are not scoped per file yet (Futhark's imports are:
a file sees the names of the files it imports itself, not theirs): so that no name can resolve otherwise than in
Futhark, a top-level name that two files both define is refused (as two definitions in one file are); a `local`
declaration is an ordinary one, seen by importers too.
"""

from __future__ import annotations

import dataclasses
import os

from incflat.ir.errors import CompileError
from incflat.ir.frontend.syntax import Decl, Import, LocalDecl, TypeDecl


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


def with_imports(decls: list, file: str, parse_syntax) -> tuple:
    """The declarations of a program whose main file (`file`) has these, every import spliced in."""
    done, defined, out = set(), {}, []

    def splice(decls: list, file: str, chain: tuple, imported: bool):
        for d in decls:
            if isinstance(d, Import):
                target = imported_path(file, d.path, d.loc)
                if target in chain:
                    cycle = " -> ".join(chain[chain.index(target):] + (target,))
                    raise CompileError(f"Import cycle: {cycle}.", d.loc)
                if target in done:
                    continue
                done.add(target)
                splice(parse_syntax(read_source(target, d.loc), target), target, chain + (target,), True)
                continue
            # (a module's declarations have names of their own: `M.f`; a module may shadow another)
            inner = d.decl if isinstance(d, LocalDecl) else d
            other = defined.setdefault(inner.name, file) if isinstance(inner, (Decl, TypeDecl)) else file
            if other != file:
                raise CompileError(f'"{inner.name}" is defined in {other} and in {file}: incflat does not scope '
                                   f"imported names per file yet, so two files may not define one name.",
                                   inner.name_loc)
            if imported and isinstance(inner, Decl) and inner.entry:
                inner = dataclasses.replace(inner, entry=False)
            out.append(LocalDecl(inner) if isinstance(d, LocalDecl) else inner)

    splice(decls, file, (os.path.normpath(file),), False)
    return tuple(out)


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
