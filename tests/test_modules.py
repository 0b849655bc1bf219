"""Modules (ir/frontend/modules.py): elaborated away before the checker; tests/programs/modules.fut checks what
they compute on every version. Here: a file imported as a module, a parametric module applied twice, the
scoping rules, and the errors, each located."""

import numpy as np
import pytest

from incflat import pipeline
from incflat.ir.errors import CompileError
from incflat.ir.interp.interpreter import run_entry
from incflat.pipeline import source_program


def run(text: str, *args):
    return run_entry(source_program(text, "t.fut"), "main", list(args))


def error(text: str) -> CompileError:
    with pytest.raises(CompileError) as e:
        pipeline.compile(text, "t.fut", until="check")
    return e.value


def test_a_file_imported_as_a_module_keeps_its_names_to_itself(tmp_path):
    (tmp_path / "lib.fut").write_text("def twice (x: i32) = x * 2\nentry main (x: i32) = x\n")
    main = tmp_path / "main.fut"
    main.write_text('module L = import "lib"\ndef twice (x: i32) = x + 1000\n'
                    "entry main (x: i32) = L.twice (twice x)\n")
    prog = source_program(main.read_text(), str(main))
    assert [f.name for f in prog.funs if f.entry] == ["main"]
    assert run_entry(prog, "main", [np.int32(1)])[0] == 2002


def test_each_application_of_a_parametric_module_is_its_own_module():
    text = ("module Add (P: { val k: i32 }) = { def add (x: i32) = x + P.k }\n"
            "module One = Add { def k = 1i32 }\nmodule Ten = Add { def k = 10i32 }\n"
            "entry main (x: i32) = One.add x * Ten.add x\n")
    assert run(text, np.int32(2))[0] == 3 * 12


def test_two_parameters_and_a_module_in_a_module():
    text = ("module Pair (A: { val a: i32 }) (B: { val b: i32 }) = { module Inner = { def s = A.a + B.b } }\n"
            "module P = Pair { def a = 3i32 } { def b = 4i32 }\nentry main (x: i32) = x * P.Inner.s\n")
    assert run(text, np.int32(2))[0] == 14


def test_a_declaration_sees_the_ones_before_it_and_locals_shadow_modules():
    text = ("def k = 1i32\nmodule M = { def k = 2i32 def get = k }\nopen M\n"
            "entry main (k: i32) = (k, get, M.k, M.(k))\n")
    assert [int(v) for v in run(text, np.int32(7))] == [7, 2, 2, 2]


def test_a_module_type_constrains_nothing_but_parses():
    text = ("module type S = { type t val f [n]: [n]t -> t val - : t -> t -> t include { val g: t } }\n"
            "module type T = (P: S) -> S with t = i32\n"
            "module M : S with t = i32 = { type t = i32 def f (xs: []i32) = xs[0] def (-) (a: i32) (b: i32) = a }\n"
            "entry main (xs: []i32) = M.f xs M.- 1\n")
    assert run(text, np.array([5, 6], np.int32))[0] == 5


@pytest.mark.parametrize("text, message, where", [
    ("entry main (x: i32) = Nope.f x\n", 'Unknown name "Nope.f"', (1, 23)),
    ("module M = { def f (x: i32) = x }\nentry main (x: i32) = M.g x\n",
     'module M does not define "g"', (2, 23)),
    ("module M = { def f (x: i32) = x }\nmodule N = M { def y = 1 }\nentry main (x: i32) = x\n",
     "Only a parametric module can be applied", (2, 12)),
    ("module F (P: { val y: i32 }) = { def z = P.y }\nopen F\nentry main (x: i32) = x\n",
     "Only a module, not a parametric one, can be opened", (2, 1)),
    ("module M = Missing\nentry main (x: i32) = x\n", 'Unknown module "Missing"', (1, 12)),
    ("module M = { type t = i32 }\nentry main (x: M.u) = x\n", 'Unknown type "M.u"', (2, 16)),
])
def test_errors_are_located(text, message, where):
    e = error(text)
    assert message in str(e), str(e)
    assert (e.loc.line, e.loc.col) == where, str(e)


def test_a_parameter_may_have_the_name_of_its_type():
    text = "module D = { type date = i32 def next (date: date) : date = date + 1 }\nentry main (x: i32) = D.next x\n"
    assert run(text, np.int32(4))[0] == 5


def test_a_prelude_module_type_without_any_module_declared():
    assert run("entry main (x: f64.t) : i32.t = i32.f64 x\n", np.float64(2.5))[0] == 2


def test_a_parametric_type_is_checked_where_it_is_used():
    declared = "type pair 'a = (a, a)\nmodule F (P: { type t }) = { type v = P.t pair }\nentry main (x: i32) = x\n"
    assert run(declared, np.int32(3))[0] == 3, "declared, and in a parametric module never applied: accepted"
    assert run("type pair 'a = (a, a)\nentry main (x: pair i32) : i32 = x.0\n", np.int32(3), np.int32(4))[0] == 3
    e = error("type pair 'a = (a, a)\ndef f (x: pair) : i32 = 1\nentry main (x: i32) : i32 = f (x, x)\n")
    assert 'The type "pair" takes 1 type argument' in str(e) and (e.loc.line, e.loc.col) == (2, 11), str(e)


def test_a_local_declaration_stays_inside_its_module():
    """Futhark's tests/modules/local0.fut: the opened module's local x does not replace the outer x."""
    assert run("def x = 1i32\nopen {local def x = 2i32 def y = x + 10}\nentry main (z: i32) = x + y + z\n",
               np.int32(100))[0] == 1 + 12 + 100
    e = error("module M = { local def h = 1i32 def g = h }\nentry main (x: i32) = M.h + x\n")
    assert 'module M does not define "h"' in str(e)


def test_a_module_lambda_and_a_module_shadowing_one_of_its_name():
    text = ("module F = \\(P: { val k: i32 }) -> { def add (x: i32) = x + P.k }\n"
            "module M = { type t = i32 def v = 1i32 }\nmodule M = { type t = i32 def v = M.v + 1 }\n"
            "module A = F { def k = 5i32 }\nentry main (x: M.t) = A.add x + M.v\n")
    assert run(text, np.int32(1))[0] == 1 + 5 + 2


def test_local_modules_and_opens_at_the_top_level():
    text = "local module M = { def k = 2i32 }\nlocal open M\nentry main (x: i32) = x * k + M.k\n"
    assert run(text, np.int32(5))[0] == 12
