"""`import "path"` (ir/frontend/imports.py, ir/frontend/modules.py): files relative to the importing one, `lib/...`
as `futhark pkg` lays packages out, each read once, names scoped per file as Futhark scopes them (an import is
`local open` of the file's module), an imported `entry` an ordinary function, cycles and unreadable files located
at the import, errors inside an imported file naming it, and the compile cache keyed on every file read."""

import numpy as np
import pytest

from incflat import compiled, pipeline
from incflat.ir.errors import CompileError
from incflat.ir.interp.interpreter import run_entry
from incflat.pipeline import source_program


def write(folder, files: dict):
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


PACKAGE = {
    "lib/github.com/someone/helpers/helpers.fut": "def twice (x: i32) = x * 2\nentry alone (x: i32) = twice x\n",
    "util.fut": 'import "lib/github.com/someone/helpers/helpers"\ndef quad (x: i32) = twice (twice x)\n',
    "main.fut": 'import "util"\nimport "lib/github.com/someone/helpers/helpers"\n'
                "entry main (xs: []i32) = map (\\x -> quad x + twice 1) xs\n",
}


def compile_error(path) -> CompileError:
    with pytest.raises(CompileError) as e:
        pipeline.compile(path.read_text(), str(path), until="check")
    return e.value


def test_an_imported_file_is_read_once_and_its_entries_are_functions(tmp_path):
    main = write(tmp_path, PACKAGE) / "main.fut"
    prog = source_program(main.read_text(), str(main))
    assert [f.name for f in prog.funs if f.entry] == ["main"]
    assert [f.name for f in prog.funs if f.name.endswith("twice")] == ["helpers.twice"], \
        "the helpers, imported twice, are read once"
    got, = run_entry(prog, "main", [np.array([1, 2], np.int32)])
    np.testing.assert_array_equal(got, [6, 10])
    generated = pipeline.compile(main.read_text(), str(main))
    assert [e.name for e in generated.entries] == ["main"]


def test_a_cycle_is_an_error_at_the_import_that_closes_it(tmp_path):
    write(tmp_path, {"a.fut": 'import "b"\ndef fa (x: i32) = x\n', "b.fut": '\nimport "a"\ndef fb (x: i32) = x\n',
                     "main.fut": 'import "a"\nentry main (x: i32) = fa x\n'})
    e = compile_error(tmp_path / "main.fut")
    assert "Import cycle:" in str(e) and e.loc.file.endswith("b.fut") and (e.loc.line, e.loc.col) == (2, 1)


@pytest.mark.parametrize("path, words", [("nothere", "cannot read the imported file"),
                                         ("/abs/file", "relative to the importing one"),
                                         ("util.fut", 'without ".fut"')])
def test_a_file_that_cannot_be_imported_is_an_error_at_the_import(tmp_path, path, words):
    write(tmp_path, {"main.fut": f'def one = 1i32\nimport "{path}"\nentry main (x: i32) = x\n'})
    e = compile_error(tmp_path / "main.fut")
    assert words in str(e) and e.loc.file.endswith("main.fut") and e.loc.line == 2


def test_an_error_inside_an_imported_file_names_that_file(tmp_path):
    write(tmp_path, {"bad.fut": "def f (x: i32) =\n  x + true\n", "main.fut": 'import "bad"\nentry main (x: i32) = f x\n'})
    e = compile_error(tmp_path / "main.fut")
    assert e.loc.file == str(tmp_path / "bad.fut") and e.loc.line == 2


def run_main(path, *args):
    return run_entry(source_program(path.read_text(), str(path)), "main", list(args))[0]


def test_names_are_scoped_per_file(tmp_path):
    """accelerate's nbody-bh: two files define `mass`, each using its own; an import opens the file's names
    locally (the later import's shadow the earlier's), and a file does not see what its imports import."""
    write(tmp_path, {"a.fut": "def f (x: i32) = x\ndef g (x: i32) = f x + 10\n",
                     "b.fut": "def f (x: i32) = x + 1\ndef h (x: i32) = f x * 100\n",
                     "main.fut": 'import "a"\nimport "b"\nentry main (x: i32) = f x + g x + h x\n',
                     "own.fut": 'import "a"\ndef f (x: i32) = x * 7\nentry main (x: i32) = f x + g x\n',
                     "c.fut": 'import "a"\ndef k (x: i32) = f x\n',
                     "deep.fut": 'import "c"\nentry main (x: i32) = k x + f x\n'})
    assert run_main(tmp_path / "main.fut", np.int32(2)) == 3 + 12 + 300
    assert run_main(tmp_path / "own.fut", np.int32(2)) == 14 + 12
    e = compile_error(tmp_path / "deep.fut")
    assert 'Unknown name "f"' in str(e) and e.loc.file.endswith("deep.fut")


def test_open_import_passes_the_names_on(tmp_path):
    write(tmp_path, {"a.fut": "def f (x: i32) = x + 1\n", "b.fut": 'open import "a"\ndef g (x: i32) = f x\n',
                     "main.fut": 'import "b"\nentry main (x: i32) = f (g x)\n',
                     "named.fut": 'module B = import "b"\nentry main (x: i32) = B.f (B.g x)\n'})
    assert run_main(tmp_path / "main.fut", np.int32(1)) == 3
    assert run_main(tmp_path / "named.fut", np.int32(1)) == 3


def test_the_compile_cache_is_keyed_on_every_file_read(tmp_path):
    main = write(tmp_path, PACKAGE) / "main.fut"
    before = compiled.cache_key(main, main.read_text())
    helpers = tmp_path / PACKAGE_HELPERS
    helpers.write_text(helpers.read_text().replace("x * 2", "x * 3"))
    assert compiled.cache_key(main, main.read_text()) != before
    alone = tmp_path / "alone.fut"
    alone.write_text("entry main (x: i32) = x\n")
    key = compiled.cache_key(alone, alone.read_text())
    (tmp_path / "util.fut").write_text("def quad (x: i32) = x\n")  # beside it, but not imported
    assert compiled.cache_key(alone, alone.read_text()) == key


PACKAGE_HELPERS = "lib/github.com/someone/helpers/helpers.fut"


def test_a_local_declaration_is_hidden_from_importers(tmp_path):
    """`local def` at the top level (the sorts library's radix_sort.fut): seen in its file only."""
    write(tmp_path, {"lib.fut": "local def step (x: i32) = x + 1\nlocal\ndef twice (x: i32) = step (step x)\n"
                                "def four (x: i32) = twice (twice x)\n",
                     "main.fut": 'import "lib"\nentry main (x: i32) = four x\n',
                     "own.fut": 'import "lib"\nlocal def step (x: i32) = x\nentry main (x: i32) = step (four x)\n',
                     "hidden.fut": 'import "lib"\nentry main (x: i32) = step x\n'})
    assert run_main(tmp_path / "main.fut", np.int32(3)) == 7
    assert run_main(tmp_path / "own.fut", np.int32(3)) == 7
    e = compile_error(tmp_path / "hidden.fut")
    assert 'Unknown name "step"' in str(e)


def test_open_import_opens_and_open_of_an_unknown_module_is_located(tmp_path):
    write(tmp_path, {"lib.fut": "def twice (x: i32) = x * 2\n",
                     "main.fut": 'open import "lib"\nentry main (x: i32) = twice x\n',
                     "module.fut": "open perm\nentry main (x: i32) = x\n"})
    main = tmp_path / "main.fut"
    assert run_entry(source_program(main.read_text(), str(main)), "main", [np.int32(4)])[0] == 8
    e = compile_error(tmp_path / "module.fut")
    assert 'Unknown module "perm"' in str(e) and (e.loc.line, e.loc.col) == (1, 6)


def test_a_local_import_is_an_import(tmp_path):
    """pbbs's sorts library: `local import "../segmented/segmented"` (a traceback before)."""
    write(tmp_path, {"lib/seg.fut": "def twice (x: i32) = x * 2\n",
                     "lib/sort.fut": 'local import "seg"\ndef quad (x: i32) = twice (twice x)\n',
                     "main.fut": 'import "lib/sort"\nentry main (x: i32) = quad x\n'})
    main = tmp_path / "main.fut"
    assert run_entry(source_program(main.read_text(), str(main)), "main", [np.int32(3)])[0] == 12
