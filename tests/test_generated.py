"""Generated programs agree between the reference interpreter and the compiled program (hypothesis).

Each example is one program with several entry points (one compilation, as PoCL builds kernels slowly): random
scalar expressions over i32, i64, f32 and bool, with the operators and prelude functions of the language, used
as the body of a map over input arrays, as the map before a reduction with an associative operator (scalar and
tuple operators), inside a reduction per row of a matrix, under a reduction and a scan whose operator works on
rows (`map2 op`), and in a count that sizes arrays on the host (a size computed on the device). Every entry runs with the default thresholds and
with each code version forced (the tuning contract's version enumeration).

The expressions stay clear of what Futhark leaves undefined or what floating point does not reproduce across
devices: divisors are made non-zero and positive, shift amounts small, float-to-integer conversions and float
equality on computed values are not generated, and floats are reduced only with min and max.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from incflat.ir.errors import CompileError, format_error
from incflat.harness import Compiled, Interpreter, compare_values, compile_cached, load_program, version_assignments

INTS = ("i32", "i64")
TYPES = ("i32", "i64", "f32", "bool")
VARS = {"i32": "x", "i64": "y", "f32": "z", "bool": "b"}
F32_LITERALS = ("0.5", "1.5", "-2.25", "3.0", "0.1", "10.0")
PARAMS = "(xs: [n]i32) (ys: [n]i64) (zs: [n]f32) (bs: [n]bool)"
MAP4 = "map4 (\\x y z b -> {}) xs ys zs bs"


def leaf(draw, t: str) -> str:
    if draw(st.booleans()):
        return VARS[t]
    if t in INTS:
        return f"({draw(st.integers(-20, 20))}{t})"
    if t == "f32":
        return f"({draw(st.sampled_from(F32_LITERALS))}f32)"
    return draw(st.sampled_from(("true", "false")))


@st.composite
def expr(draw, t: str, depth: int = 3) -> str:
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        return leaf(draw, t)
    sub = lambda u=t: draw(expr(u, depth - 1))
    if t in INTS:
        other = "i64" if t == "i32" else "i32"
        form = draw(st.integers(0, 11))
        if form == 0:
            return f"({sub()} {draw(st.sampled_from(['+', '-', '*', '&', '|', '^']))} {sub()})"
        if form == 1:
            return f"({t}.{draw(st.sampled_from(['min', 'max']))} {sub()} {sub()})"
        if form == 2:  # a divisor in 1..16
            return f"({sub()} {draw(st.sampled_from(['/', '%', '//', '%%']))} (({sub()} & 15) + 1))"
        if form == 3:
            return f"({sub()} {draw(st.sampled_from(['>>', '<<']))} ({sub()} & 7))"
        if form == 4:
            return f"({sub()} ** ({sub()} & 3))"
        if form == 5:
            return f"(-{sub()})"
        if form == 6:
            return f"({t}.abs {sub()})"
        if form == 7:
            return f"(if {sub('bool')} then {sub()} else {sub()})"
        if form == 8:
            return f"({t}.{other} {sub(other)})"
        if form == 9:
            return f"({t}.bool {sub('bool')})"
        return f"({sub()} {draw(st.sampled_from(['+', '*', '-']))} {leaf(draw, t)})"
    if t == "f32":
        form = draw(st.integers(0, 10))
        if form == 0:
            return f"({sub()} {draw(st.sampled_from(['+', '-', '*', '/']))} {sub()})"
        if form == 1:
            return f"(f32.{draw(st.sampled_from(['min', 'max', 'atan2']))} {sub()} {sub()})"
        if form == 2:
            return f"(f32.{draw(st.sampled_from(['abs', 'sin', 'cos']))} {sub()})"
        if form == 3:
            return f"(f32.sqrt (f32.abs {sub()}))"
        if form == 4:
            return f"(f32.exp (f32.sin {sub()}))"
        if form == 5:
            return f"(f32.log (f32.abs {sub()} + 1))"
        if form == 6:
            u = draw(st.sampled_from(["i32", "i64", "bool"]))
            return f"(f32.{u} {sub(u)})"
        if form == 7:
            return f"(if {sub('bool')} then {sub()} else {sub()})"
        if form == 8:
            return f"(f32.{draw(st.sampled_from(['floor', 'ceil']))} z)"
        if form == 9:
            return f"(-{sub()})"
        return f"(f32.pow (f32.abs {sub()}) 0.5)"
    form = draw(st.integers(0, 5))
    if form == 0:
        u = draw(st.sampled_from(INTS))
        return f"({sub(u)} {draw(st.sampled_from(['<', '<=', '==', '!=', '>', '>=']))} {sub(u)})"
    if form == 1:
        return f"(z {draw(st.sampled_from(['<', '>=']))} ({draw(st.sampled_from(F32_LITERALS))}))"
    if form == 2:
        return f"({sub()} {draw(st.sampled_from(['&&', '||', '==', '!=']))} {sub()})"
    if form == 3:
        return f"(!{sub()})"
    if form == 4:
        return f"(if {sub()} then {sub()} else {sub()})"
    return f"({sub('i32')} > {sub('i32')})"


# Associative operators: (type, operator applied to a and b, neutral element)
OPERATORS = [
    *[(t, f"({{a}} {op} {{b}})", ne) for t in INTS for op, ne in (("+", "0"), ("*", "1"), ("&", "(-1)"), ("|", "0"),
                                                                  ("^", "0"))],
    *[(t, f"({t}.{f} {{a}} {{b}})", ne) for t in INTS for f, ne in (("min", f"{t}.highest"), ("max", f"{t}.lowest"))],
    *[(t, "(if {b} == 0 then {a} else {b})", "0") for t in INTS],  # the last non-zero element
    ("f32", "(f32.min {a} {b})", "f32.inf"), ("f32", "(f32.max {a} {b})", "(-f32.inf)"),
    ("bool", "({a} && {b})", "true"), ("bool", "({a} || {b})", "false"),
    ("bool", "({a} == {b})", "true"), ("bool", "({a} != {b})", "false"),
]


def lam(op: str) -> str:
    return f"(\\a b -> {op.format(a='a', b='b')})"


@st.composite
def programs(draw):
    """The source, with map entries m*, reduction entries r*, a tuple reduction p, a reduction per row s, a
    reduction and a scan of rows with an elementwise operator c, and a size computed by a kernel d."""
    entries = []
    for k in range(draw(st.integers(1, 3))):
        t = draw(st.sampled_from(TYPES))
        entries.append(f"entry m{k} [n] {PARAMS}: [n]{t} =\n  {MAP4.format(draw(expr(t)))}")
    for k in range(draw(st.integers(1, 2))):
        t, op, ne = draw(st.sampled_from(OPERATORS))
        entries.append(f"entry r{k} [n] {PARAMS}: {t} =\n  reduce {lam(op)} {ne} ({MAP4.format(draw(expr(t)))})")
    (t1, op1, ne1), (t2, op2, ne2) = draw(st.sampled_from(OPERATORS)), draw(st.sampled_from(OPERATORS))
    pair_op = f"(\\(a1, a2) (b1, b2) -> ({op1.format(a='a1', b='b1')}, {op2.format(a='a2', b='b2')}))"
    body = f"({draw(expr(t1))}, {draw(expr(t2))})"
    entries.append(f"entry p [n] {PARAMS}: ({t1}, {t2}) =\n  reduce {pair_op} ({ne1}, {ne2}) ({MAP4.format(body)})")
    t, op, ne = draw(st.sampled_from(OPERATORS))
    row_body = f"let y = i64.i32 x let z = f32.i32 x / 4 let b = x % 3 == 0 in {draw(expr(t))}"
    entries.append(f"entry s [r][c] (xss: [r][c]i32): [r]{t} =\n"
                   f"  map (\\row -> reduce {lam(op)} {ne} (map (\\x -> {row_body}) row)) xss")
    t, op, ne = draw(st.sampled_from(OPERATORS))  # an elementwise operator on rows: a column reduction and scan
    rows = f"map (map (\\x -> let y = i64.i32 x let z = f32.i32 x / 4 let b = x % 3 == 0 in {draw(expr(t))})) xss"
    entries.append(f"entry c [r][c] (xss: [r][c]i32): ([c]{t}, [r][c]{t}) =\n"
                   f"  (reduce (map2 {lam(op)}) (replicate c {ne}) ({rows}),\n"
                   f"   scan (map2 {lam(op)}) (replicate c {ne}) ({rows}))")
    t = draw(st.sampled_from(TYPES))  # a size computed by a kernel, used on the host; a reversed slice
    entries.append(f"entry d [n] {PARAMS} =\n"
                   f"  let k = i64.sum (map (\\b -> i64.bool b) ({MAP4.format(draw(expr('bool')))}))\n"
                   f"  in (iota k, replicate k (i32.sum xs), ({MAP4.format(draw(expr(t)))})[::-1][:k])")
    return "\n\n".join(entries) + "\n"


@st.composite
def inputs(draw):
    n = draw(st.integers(0, 40))
    xs = np.array(draw(st.lists(st.integers(-100, 100), min_size=n, max_size=n)), np.int32)
    ys = np.array(draw(st.lists(st.integers(-10 ** 6, 10 ** 6), min_size=n, max_size=n)), np.int64)
    zs = np.array(draw(st.lists(st.floats(-10, 10, width=32), min_size=n, max_size=n)), np.float32)
    bs = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), np.bool_)
    r, c = draw(st.integers(0, 6)), draw(st.integers(0, 20))
    xss = np.array(draw(st.lists(st.integers(-50, 50), min_size=r * c, max_size=r * c)), np.int32).reshape(r, c)
    return [xs, ys, zs, bs], [xss]


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(source=programs(), args=inputs())
def test_generated_programs_agree_with_the_interpreter(device, tmp_path_factory, source, args):
    note(source)
    folder = tmp_path_factory.mktemp("generated")
    path = folder / "generated.fut"
    path.write_text(source)
    program = load_program(path)
    assert program.error is None, format_error(program.error, source)
    try:
        compiled = compile_cached(path, source, cache=folder / "cache")
    except CompileError as e:
        pytest.fail(format_error(e, source))
    vectors, matrix = args
    runs = [(e.name, matrix if e.name in ("s", "c") else vectors) for e in program.source.entries]
    expected = {}
    for entry, entry_args in runs:
        outcome = Interpreter(program).run(entry, entry_args)
        assert outcome.error is None, outcome.error
        expected[entry] = list(outcome.values)
    for params in [{}] + version_assignments(compiled):
        runner = Compiled(compiled, device, params)
        for entry, entry_args in runs:
            got = runner.run(entry, entry_args)
            assert got.error is None, f"{entry} {params}: {got.error}"
            mismatch = compare_values(list(got.values), expected[entry])
            assert mismatch is None, f"{entry} {params}: {mismatch}"
