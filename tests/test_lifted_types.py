"""Lifted type abbreviations (`type^`, ir/frontend/lifted.py): a name for a function type, expanded where it is
used with its size arguments (rodinia's bfs/common.fut: `type^ step_fn [n] [e] = (cost: *[n]i32) -> ...`), and
named parameters in function types. Uses that incflat cannot expand are located errors."""

import numpy as np
import pytest

from incflat.ir.errors import CompileError
from incflat.ir.interp.interpreter import run_entry
from incflat.pipeline import source_program

SOURCE = """
type^ step_fn [n] = (xs: *[n]i32) -> (k: i32) -> *[n]i32
type^ pair_fn = (i32, i32) -> i32
def run [n] (step: step_fn [n]) (add: pair_fn) (xs: *[n]i32) : [n]i32 = step (step xs (add (1, 1))) 3
entry main (xs: []i32) = run (\\ys k -> map (+ k) ys) (\\(a, b) -> a + b) (copy xs)
"""


def test_a_lifted_abbreviation_names_a_function_type():
    got, = run_entry(source_program(SOURCE), "main", [np.array([1, 2, 3], np.int32)])
    np.testing.assert_array_equal(got, [6, 7, 8])


@pytest.mark.parametrize("text, line, col, words", [
    ("type^ f = i32 -> i32\ndef g (h: [2]f) = 1i32\n", 2, 11, "An array of \"f\""),
    ("type^ f [n] = [n]i32 -> i32\ndef g (h: f) = 1i32\n", 2, 11, "takes 1 size arguments, but is given 0"),
    ("type+ t = i32\n", 1, 5, '"type+" is not supported'),
])
def test_what_cannot_be_expanded_is_a_located_error(text, line, col, words):
    with pytest.raises(CompileError) as e:
        source_program(text, "t.fut")
    assert words in str(e.value) and (e.value.loc.line, e.value.loc.col) == (line, col), str(e.value)


def test_an_entry_point_that_partially_applies_a_function_takes_its_written_parameters():
    """rodinia's bfs: `def main = common_main step`, where common_main takes a function first: the entry point
    takes the remaining parameters as written, with the sizes they share ([n] twice: one size)."""
    source = SOURCE + """
def common [n] [e] (step: step_fn [n]) (xs: *[n]i32) (ys: [n]i32) (zs: [e]i32) : [n]i32 =
  map2 (+) (step xs 1) ys |> map (+ i32.i64 e)
entry partial = common (\\ys k -> map (+ k) ys)
"""
    prog = source_program(source, "t.fut")
    entry = next(f for f in prog.funs if f.name == "partial")
    assert len(entry.params) == 3 and entry.params[0].type.shape == entry.params[1].type.shape
    got, = run_entry(prog, "partial", [np.array([1, 2], np.int32), np.array([10, 20], np.int32),
                                       np.array([0, 0, 0], np.int32)])
    np.testing.assert_array_equal(got, [15, 26])
    with pytest.raises(Exception, match="size"):
        run_entry(prog, "partial", [np.array([1, 2], np.int32), np.array([10], np.int32), np.array([0], np.int32)])


def test_a_type_parameter_that_the_applied_arguments_decide_is_theirs():
    """`entry sort_i32 b = radix_sort_int b i32.get_bit` (pbbs): the remaining `xs: [n]t` takes t from the prelude
    function given for `get: i32 -> t -> i32`; where nothing decides it, the entry point's types are not known
    from its definition: that error, not an unknown type."""
    source = ("def sort [n] 't (bits: i32) (get: i32 -> t -> i32) (xs: [n]t) : [n]t = map (\\x -> x) xs\n"
              "entry main b = sort b i32.get_bit\n")
    prog = source_program(source, "t.fut")
    got, = run_entry(prog, "main", [np.int32(3), np.array([5, 7], np.int32)])
    np.testing.assert_array_equal(got, [5, 7])
    undecided = "def sort [n] 't (bits: i32) (get: t -> i32) (xs: [n]t) : [n]t = xs\nentry main b = sort b (\\x -> 0)\n"
    with pytest.raises(CompileError, match="cannot be inferred from its"):
        source_program(undecided, "t.fut")


def test_a_lifted_abbreviation_of_a_record_takes_its_size_arguments_in_the_fields():
    source = ("type^ box [n] = {xs: [n]i32, f: i32}\n"
              "def total [k] (b: box [k]) (ys: [k]i32) : [k]i32 = map2 (+) b.xs ys\n"
              "entry main (xs: []i32) = total {xs, f = 1} xs\n")
    got, = run_entry(source_program(source, "t.fut"), "main", [np.array([1, 2], np.int32)])
    np.testing.assert_array_equal(got, [2, 4])
