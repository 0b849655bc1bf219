"""The tuner's datasets: the `-- ==` test blocks of a .fut file, and the selection of tuning and held-out
datasets."""

from __future__ import annotations

from pathlib import Path

import pytest

from incflat.datasets import (AutoOutput, ExpectedError, GeneratedInput, InlineValues, ValuesFile, machine_memory,
                              parse_test_cases, read_test_cases, select_datasets)
from incflat.ir.errors import ToolError
from tuner_fixtures import FIXTURES


def parse(text: str, name: str = "prog.fut") -> list:
    return parse_test_cases(text, Path(name))


def test_fixture_block_names_inputs_and_tags():
    cases = read_test_cases(FIXTURES / "matmul.fut")
    by_name = {c.name: c for c in cases}
    assert list(by_name) == [
        "rows", '#1 ("1024i64 64i64 1024i64")', "data/dots.in", "small-dots", '#4 ("16i64 64i64 64i64")',
        "data/wide.in", '#6 ("256i64 16i64 256i64")', "held-rows", "held-dots",
    ]
    assert by_name["rows"].input == InlineValues(" 65536i64 64i64 64i64 ")
    assert " ".join(by_name['#1 ("1024i64 64i64 1024i64")'].input.text.split()) == "1024i64 64i64 1024i64"
    assert by_name["data/dots.in"].input == ValuesFile("data/dots.in", FIXTURES / "data" / "dots.in")
    assert by_name["small-dots"].expected == InlineValues(" 352i64 ")
    assert by_name["data/wide.in"].run_tags == {"compiled"}
    assert [c.name for c in cases if c.held_out] == ["held-rows", "held-dots"]
    assert all(c.entries == ("main",) for c in cases)
    assert by_name["rows"].line == 5 and by_name["data/dots.in"].line == 8


def test_several_blocks_entries_tags_and_expectations():
    cases = parse(
        "-- first block\n"
        "-- ==\n"
        "-- tags { slow gpu-only }\n"
        "-- entry: sum prod\n"
        '-- "train-1" compiled notune input @ data/x.in.gz\n'
        "-- output @ data/x.out\n"
        "-- input { [1, 2, 3] } auto output\n"
        "-- input { [0] } error: division by\n"
        "-- nobench input {\n"
        "--   [1,2]\n"
        "--   [3,4] }\n"
        "-- output { 10 }\n"
        "-- structure gpu { SegMap 1 SegRed 2 }\n"
        "def sum (xs: []i32) = i32.sum xs\n"
        "\n"
        "-- Another block, with its own numbering.\n"
        "-- ==\n"
        "-- input { 5 }\n"
        "-- random input { [10][20]f32 }\n"
        "-- disable input { 6 }\n"
        "-- script input { mk 10i64 }\n"
        "def main (x: i32) = x\n"
    )
    assert [(c.name, c.entries) for c in cases] == [
        ("train-1", ("sum", "prod")),
        ('#1 ("[1, 2, 3]")', ("sum", "prod")),
        ('#2 ("[0]")', ("sum", "prod")),
        ('#3 ("[1,2] [3,4]")', ("sum", "prod")),
        ('#0 ("5")', ("main",)),
        ("[10][20]f32", ("main",)),
        ('#2 ("6")', ("main",)),
        ("mk 10i64", ("main",)),
    ]
    first, auto, error, multi, plain, random, disabled, script = cases
    assert first.run_tags == {"compiled", "notune"} and first.held_out
    assert first.block_tags == {"slow", "gpu-only"} and plain.block_tags == frozenset()
    assert first.input.written == "data/x.in.gz" and first.expected.written == "data/x.out"
    assert isinstance(auto.expected, AutoOutput)
    assert error.expected == ExpectedError("division by")
    assert multi.run_tags == {"nobench"} and multi.expected == InlineValues(" 10 ")
    assert random.input == GeneratedInput("random", " [10][20]f32 ")
    assert disabled.run_tags == {"disable"} and script.input.kind == "script"


def test_long_inline_values_are_truncated_in_the_name():
    (case,) = parse("-- ==\n-- input { " + " ".join(f"{i}i64" for i in range(40)) + " }\n")
    assert case.name.startswith('#0 ("0i64 1i64') and case.name.endswith('...")')
    assert len(case.name) == len('#0 ("') + 50 + len('...")')


def test_blocks_without_cases_and_ordinary_comments_are_ignored():
    assert parse("-- just a comment\n-- with == inside\ndef main = 1\n") == []
    assert parse("-- ==\n-- error: type error\n") == []  # a compile-time failure test
    assert parse("-- ==\n-- property: prop_a\n") == []


@pytest.mark.parametrize(
    "block, line, message",
    [
        ("-- ==\n-- input { 1 2\n-- output { 3 }\n", 2, "'{' after 'input' is never closed"),
        ("-- ==\n-- input { 1 }\n-- notune { 2 }\n", 3, "expected 'input' after 'notune'"),
        ("-- ==\n-- input { 1 }\n--\n-- input 2\n", 4, "expected '{' or '@' after 'input'"),
        ("-- ==\n-- input @\n", 2, "expected a file name after 'input @'"),
        ("-- ==\n-- input { 1 } auto { 2 }\n", 2, "expected 'output' after 'auto'"),
        ('-- ==\n-- "unterminated input { 1 }\n', 2, "unterminated case name"),
        ("-- ==\n-- entry:\n-- input { 1 }\n", 2, "'entry:' needs at least one entry point name"),
        ("-- ==\n-- input { 1 }\n-- structure { A 1 }\n-- input { 2 }\n", 4, "unexpected 'input'"),
        ('-- ==\n-- "a" input { 1 }\n-- "a" input { 2 }\n', 3, "multiple datasets with name 'a'"),
    ],
)
def test_bad_blocks_name_the_file_and_line(block, line, message):
    with pytest.raises(ToolError) as error:
        parse("def f = 1\n" + block, "dir/prog.fut")
    assert str(error.value).startswith(f"dir/prog.fut:{line + 1}: ")
    assert message in str(error.value)


def test_missing_input_file(tmp_path):
    for folder, hint in ((tmp_path / "mine", False), (tmp_path / "futhark_examples", True)):
        folder.mkdir()
        (folder / "prog.fut").write_text("-- ==\n-- input { 1 }\n-- input @ data/big.in\n")
        with pytest.raises(ToolError) as error:
            select_datasets(read_test_cases(folder / "prog.fut"))
        assert f"prog.fut:3: input file {folder / 'data' / 'big.in'} does not exist" in str(error.value)
        assert ("generate it first (see the comment at the top of the .fut file)" in str(error.value)) == hint


def test_selection_of_tuning_and_held_out_datasets():
    cases = parse(
        "-- ==\n-- entry: a b\n-- input { 1 }\n-- notune input { 2 }\n-- input { 3 } error: x\n"
        "-- disable input { 4 }\n-- random input { i32 }\n-- script input { f 1 }\n-- no_opencl input { 5 }\n"
    )
    selection = select_datasets(cases)
    assert [d.name for d in selection.tuning] == ["a:#0 (\"1\")", "b:#0 (\"1\")", "a:i32", "b:i32"]
    assert [(d.name, d.entry) for d in selection.held_out] == [("a:#1 (\"2\")", "a"), ("b:#1 (\"2\")", "b")]
    assert [reason for _, reason in selection.skipped] == [
        "expects an error", "disabled", "script input is not supported by the tuner", "tagged no_opencl"
    ]
    assert [d.entry for d in select_datasets(cases, entry="b").tuning] == ["b", "b"]
    random_file = selection.tuning[2].input.path
    assert random_file.is_file() and selection.tuning[3].input.path == random_file, "made once, the same values"


def test_a_random_input_that_cannot_be_made_is_skipped_located(tmp_path, monkeypatch):
    """issue 53: `incflat autotune` crashed with a MemoryError traceback; it skips the case and says why."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cases = parse("-- ==\n-- random input { [100000000000000]i32 }\n-- random input {\n--   [-5]i32 }\n"
                  "-- random input { [3]i32 }\n")
    selection = select_datasets(cases)
    assert [d.name for d in selection.tuning] == ["[3]i32"]
    assert selection.skipped == (
        ("[100000000000000]i32", "prog.fut:2:19: random input: '[100000000000000]i32' is too large to make: "
                                 f"400000000000000 bytes, more than this machine's memory ({machine_memory()} bytes)"),
        ("[-5]i32", "prog.fut:4:6: random input: '[-5]i32': '-5' is not a size (a whole number, 0 or more)"))
    assert [p.name for p in (tmp_path / "incflat" / "random").iterdir()] == [selection.tuning[0].input.path.name]
