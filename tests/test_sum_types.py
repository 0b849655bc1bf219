"""Sum types and `match` (ir/frontend/check/sums.py), elaborated away by the checker: the source IR holds a sum as
its tag and payloads. tests/programs/sum_types.fut runs here under the interpreter and compiled (and in
test_corpus.py on every code version); here too: how a constructor's type comes from its context, sums in kernels
(a reduction over them) and loops, parametric sum types, `match` on other types, and the errors, each located."""

import pathlib

import numpy as np
import pytest

from incflat import pipeline
from incflat.compiled import compile_cached
from incflat.harness import Compiled, Interpreter, check, load_program, prepare
from incflat.ir.errors import CompileError
from incflat.ir.interp.interpreter import run_entry
from incflat.ir.types import F32, Scalar
from incflat.pipeline import source_program
from test_kernel_shapes import compile_library

PROGRAM = pathlib.Path(__file__).resolve().parent / "programs" / "sum_types.fut"


def run(text: str, entry: str, *args):
    return run_entry(source_program(text, "t.fut"), entry, list(args))


def error(text: str) -> CompileError:
    with pytest.raises(CompileError) as e:
        pipeline.compile(text, "t.fut", until="check")
    return e.value


def failures(runner, cases) -> list:
    return [f"{p.title}: {problem}" for p in cases
            if (problem := p.problem or check(p, runner.run(p.entry, p.inputs))) is not None]


def test_the_program_passes_interpreted():
    program = load_program(PROGRAM)
    assert program.error is None and not failures(Interpreter(program), prepare(program))


def test_the_program_passes_compiled(device, tmp_path):
    program = load_program(PROGRAM)
    runner = Compiled(compile_cached(PROGRAM, cache=tmp_path), device)
    assert runner.load() is None
    assert not failures(runner, prepare(program))


def test_a_sum_is_its_tag_and_every_constructors_payload():
    """Constructors in the order of their names: #circle (f32), #empty (), #rect (f32, f32); the tag an i8."""
    text = ("type shape = #rect f32 f32 | #circle f32 | #empty\n"
            "def area (s: shape) : f32 = match s case #circle r -> r case #rect w h -> w * h case #empty -> 0\n"
            "entry main (x: f32) : f32 = area (#rect x 2)\n")
    area = next(f for f in source_program(text, "t.fut").funs if f.name == "area")
    assert [p.type for p in area.params] == [Scalar("i8"), F32, F32, F32]
    assert run(text, "main", np.float32(1.5))[0] == 3.0


KERNELS = """
type opt 'a = #some a | #none

def first_some (a: opt i32) (b: opt i32) : opt i32 =
  match a
  case #some _ -> a
  case #none -> b

def get_or 'a (d: a) (x: opt a) : a =
  match x
  case #some v -> v
  case #none -> d

def some x = #some x

entry first_positive (xs: []i32) : i32 =
  get_or (-1) (reduce first_some #none (map (\\x -> if x > 0 then some x else #none) xs))

entry both (x: i32) (y: f32) : (i32, f32) = (get_or 0 (some x), get_or 0 (some y : opt f32))

type mooboo = #moo i32 | #boo i32

def swap (ns: []i32) : *[]mooboo =
  let x = map (\\n -> #moo n) ns ++ map (\\n -> #boo n) ns
  in loop x for i < 2 * length ns do
       x with [i] = match x[i]
                    case #moo y -> #boo (-y)
                    case #boo y -> #moo (2 * y)

entry swapped (ns: []i32) : []i32 = map (\\m -> match m case #moo y -> y case #boo y -> y) (swap ns)
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    return compile_library(tmp_path_factory.mktemp("sums"), "sums", KERNELS)


def test_constructors_in_kernels_and_loops(kernels, device):
    """A reduction whose operator matches on sums; a generic function whose constructor has a sum type of its own at
    each call; constructors typed by a declared result only after a loop (Futhark's tests/sumtypes/sumtype13)."""
    lib = kernels.load(device=device)
    prog = source_program(KERNELS, "sums.fut")
    for xs, want in (([-1, 0, 5, 3], 5), ([-2], -1)):
        xs = np.array(xs, np.int32)
        assert lib.first_positive(xs) == want and run_entry(prog, "first_positive", [xs])[0] == want
    assert tuple(lib.both(np.int32(3), np.float32(2.5))) == (3, 2.5)
    ns = np.array([1, 2, 3, 4], np.int32)
    np.testing.assert_array_equal(lib.swapped(ns), [-1, -2, -3, -4, 2, 4, 6, 8])
    np.testing.assert_array_equal(run_entry(prog, "swapped", [ns])[0], [-1, -2, -3, -4, 2, 4, 6, 8])


@pytest.mark.parametrize("body, want", [
    ("g (#b 2 : t)", 2),  # an annotation
    ("f #a", 10),  # a parameter
    ("let v = if x > 0 then #b x else #a in g v", 1),  # the other branch, then a parameter
    ("let v : t = if x > 0 then #a else #b 7 in g v", 10),  # an annotation of the if
    ("match (#b x, #a) : (t, t) case (#b y, #a) -> y + 1 case _ -> 0", 2),  # a tuple of sums
    ("g (h x)", 1),  # a declared result
])
def test_a_constructor_takes_its_type_from_its_context(body, want):
    text = ("type t = #a | #b i32\n"
            "def g (v: t) : i32 = match v case #a -> 10 case #b y -> y\n"
            "def f (v: t) : i32 = g v\n"
            "def h (x: i32) : t = if x == 0 then #a else #b x\n"
            f"entry main (x: i32) : i32 = {body}\n")
    assert run(text, "main", np.int32(1))[0] == want


def test_equality_compares_only_the_constructors_payload():
    """The payload of the other constructors is blank: #none holds an empty array where #some holds xs."""
    text = ("type opt = #some ([]i32) | #none\n"
            "entry main (xs: []i32) (ys: []i32) : (bool, bool, bool) =\n"
            "  ((#some xs : opt) == #some ys, (#none : opt) == (if length xs > 5 then #some ys else #none),\n"
            "   (#none : opt) != #some xs)\n")
    a, b = np.array([1, 2], np.int32), np.array([1, 2], np.int32)
    assert [bool(v) for v in run(text, "main", a, b)] == [True, True, True]
    assert [bool(v) for v in run(text, "main", a, np.array([1], np.int32))] == [False, True, True]


def test_parametric_type_abbreviations():
    text = ("type pair 'a = (a, a)\ntype opt 'a = #some a | #none\n"
            "def swap (p: pair i32) : pair i32 = (p.1, p.0)\n"
            "def lengths [n] (xs: [n](opt ([2]f32))) : [n]i32 =\n"
            "  map (\\x -> match x case #some _ -> 2 case #none -> 0) xs\n"
            "entry main (x: i32) : (i32, [2]i32) = ((swap (x, 1)).0, lengths [#some [1, 2], #none])\n")
    got = run(text, "main", np.int32(5))
    assert got[0] == 1 and list(got[1]) == [2, 0]


def test_match_on_integers_floats_and_booleans():
    text = ("entry main (x: i32) (y: f64) (b: bool) : (i32, i32, i32) =\n"
            "  (match x case -1 -> 1 case 0 -> 2 case _ -> 3,\n"
            "   match y case 0.5 -> 1 case -2 -> 2 case _ -> 3,\n"
            "   match (b, x) case (true, 0) -> 1 case (false, _) -> 2 case (true, n) -> n)\n")
    assert [int(v) for v in run(text, "main", np.int32(-1), np.float64(-2), np.bool_(True))] == [1, 2, -1]
    assert [int(v) for v in run(text, "main", np.int32(0), np.float64(0.5), np.bool_(False))] == [2, 1, 2]


SUMS = "type t = #a | #b i32\ntype u = #c (i32, bool) | #d\n"


@pytest.mark.parametrize("text, line, col, words", [
    (SUMS + "def f (x: t) : i32 =\n  match x\n  case #a -> 1", 4, 3,
     "Unmatched cases in match expression: no case matches #b _."),
    (SUMS + "def f (x: u) : i32 = match x case #c (_, true) -> 1 case #d -> 2", 3, 22,
     "no case matches #c (_, false)."),
    ("def f (x: (i32, i32)) : i32 = match x case (0, _) -> 0 case (_, 1) -> 1", 1, 31, "no case matches (1, 0)."),
    ("def f (x: i32) : i32 = match x case 1 -> 2", 1, 24, "no case matches 0."),
    (SUMS + "def f (x: t) : i32 = match x case #c -> 1 case _ -> 2", 3, 35,
     "the value matched has type #a | #b i32, which does not have it"),
    (SUMS + "def f (x: t) : i32 = match x case #b -> 1 case _ -> 2", 3, 35,
     "#b has 1 payload in type #a | #b i32, but this pattern gives it 0"),
    (SUMS + "def f (x: t) : i32 = match x case 1 -> 1 case _ -> 2", 3, 35,
     "the literal 1, but the value matched has type #a | #b i32"),
    ("def f (x: i32) : i32 = match x case #a -> 1 case _ -> 2", 1, 37, "the constructor #a, but the value matched"),
    (SUMS + "def f (x: t) : i32 = match x case #a -> 1 case #b _ -> 2.5", 3, 22,
     'declared to return i32, but its body has type decimal literal'),
    (SUMS + "def f (x: t) : i32 = match x case #a -> 1 case #b _ -> true", 3, 22,
     'The cases of "match" have different types: integer literal and bool'),
    (SUMS + "def f (x: i32) : t = #b true", 3, 22, "declared to return #a | #b i32, but its body has type #b bool"),
    (SUMS + "def f (x: i32) : t = #c", 3, 22, "declared to return #a | #b i32, but its body has type #c"),
    ("def f (x: i32) : i32 = match #b x case #a -> 1 case #b y -> y", 1, 40, "Type is ambiguous"),
    ("def f (x: i32) : i32 = let y = #b x in 1", 1, 32, "Type is ambiguous: a sum type with the constructor #b i32"),
    (SUMS + "def f (x: t) (y: t) = x < y", 3, 25, 'The operator "<" cannot be applied to sum types'),
    (SUMS + "def f (x: t) : i32 = let #a = x in 1", 3, 26, "The pattern #a is refutable"),
    ("def f (x: i32) : i32 = let 0 = x in 1", 1, 28, "The pattern 0 is refutable"),
    (SUMS + "entry main (x: t) : i32 = 1", 3, 13, 'The entry point "main" cannot take a value of type #a | #b i32'),
    (SUMS + "entry main (x: i32) : t = #b x", 3, 27, 'cannot return a value of type #a | #b i32'),
    ("type t = #a | #a i32", 1, 15, "The constructor #a appears twice in this sum type"),
    ("type t = #a + #b", 1, 13, 'constructors are separated by "|"'),
    ("def f (x: i32) : i32 = match x case y: i32 -> y", 1, 38, "case (x: t) -> ..."),
    ("type opt [n] = #some ([n]i32) | #none\ndef f (xs: []i32) : i32 =\n"
     "  let ys = filter (> 0) xs\n  let o = if length ys > 2 then (#some ys : opt [length ys]) else #none\n"
     "  in match o case #some _ -> 1 case #none -> 0", 4, 67, "#none is not supported by incflat here"),
    ("type pair 'a = (a, a)\ndef f (x: pair) : i32 = 1", 2, 11,
     """The type "pair" takes 1 type argument ('a), but is given 0"""),
    ("def f (x: i32 i32) : i32 = 1", 1, 11, '"i32" is applied to a type, but it takes no type arguments'),
])
def test_errors_are_located(text, line, col, words):
    e = error(text)
    assert words in str(e), str(e)
    assert (e.loc.line, e.loc.col) == (line, col), str(e)
