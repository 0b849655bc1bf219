"""Hypothesis strategies shared by the generated, fuzzing and differential suites, and their settings.

- `expr`, `programs`, `inputs`: well-typed programs that never fail at run time (test_generated.py);
- `failing_programs`: programs whose entry points may fail at run time (an out-of-bounds index, a division by
  zero, a failed `:>` coercion or assertion, a negative size), with arguments (test_differential.py);
- `mutated_sources`: the corpus programs (tests/programs) with random edits, as bytes (test_fuzz.py);
- `value_bytes`, `tuning_texts`, `option_lists`: stdin, tuning files and command lines of compiled programs.

`fuzz_settings(n)`: n examples, derandomized, in the default (CI) run; n * INCFLAT_FUZZ_FACTOR (default 100),
random, under the long profile (`--hypothesis-profile=long` or INCFLAT_FUZZ=long; tests/conftest.py).
"""

import io
import json
import os
import pathlib
import stat

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from incflat.ir.runtime.values import write_binary, write_text

LONG_PROFILE = "long"


def long_run() -> bool:
    return settings.get_current_profile_name() == LONG_PROFILE


def fuzz_settings(examples: int) -> settings:
    if long_run():
        factor = int(os.environ.get("INCFLAT_FUZZ_FACTOR", "100"))
        return settings(max_examples=examples * factor, deadline=None, suppress_health_check=list(HealthCheck))
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


# ---------------------------------------------------------------------------------------------------------
# Programs that never fail at run time

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
    """An expression of type t: a leaf, or one of the forms of its type, each drawing its own parts."""
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        return leaf(draw, t)
    sub = lambda u=t: draw(expr(u, depth - 1))
    pick = lambda options: draw(st.sampled_from(options))
    if t in INTS:
        other = "i64" if t == "i32" else "i32"
        forms = (
            lambda: f"({sub()} {pick(['+', '-', '*', '&', '|', '^'])} {sub()})",
            lambda: f"({t}.{pick(['min', 'max'])} {sub()} {sub()})",
            lambda: f"({sub()} {pick(['/', '%', '//', '%%'])} (({sub()} & 15) + 1))",  # a divisor in 1..16
            lambda: f"({sub()} {pick(['>>', '<<'])} ({sub()} & 7))",
            lambda: f"({sub()} ** ({sub()} & 3))",
            lambda: f"(-{sub()})",
            lambda: f"({t}.abs {sub()})",
            lambda: f"(if {sub('bool')} then {sub()} else {sub()})",
            lambda: f"({t}.{other} {sub(other)})",
            lambda: f"({t}.bool {sub('bool')})",
            lambda: f"({sub()} {pick(['+', '*', '-'])} {leaf(draw, t)})",
        )
        return forms[min(draw(st.integers(0, 11)), len(forms) - 1)]()  # the last form twice as likely
    if t == "f32":
        def converted():
            u = pick(["i32", "i64", "bool"])
            return f"(f32.{u} {sub(u)})"
        forms = (
            lambda: f"({sub()} {pick(['+', '-', '*', '/'])} {sub()})",
            lambda: f"(f32.{pick(['min', 'max', 'atan2'])} {sub()} {sub()})",
            lambda: f"(f32.{pick(['abs', 'sin', 'cos'])} {sub()})",
            lambda: f"(f32.sqrt (f32.abs {sub()}))",
            lambda: f"(f32.exp (f32.sin {sub()}))",
            lambda: f"(f32.log (f32.abs {sub()} + 1))",
            converted,
            lambda: f"(if {sub('bool')} then {sub()} else {sub()})",
            lambda: f"(f32.{pick(['floor', 'ceil'])} z)",
            lambda: f"(-{sub()})",
            lambda: f"(f32.pow (f32.abs {sub()}) 0.5)",
        )
        return forms[draw(st.integers(0, 10))]()

    def compared():
        u = pick(INTS)
        return f"({sub(u)} {pick(['<', '<=', '==', '!=', '>', '>='])} {sub(u)})"
    forms = (
        compared,
        lambda: f"(z {pick(['<', '>='])} ({pick(F32_LITERALS)}))",
        lambda: f"({sub()} {pick(['&&', '||', '==', '!='])} {sub()})",
        lambda: f"(!{sub()})",
        lambda: f"(if {sub()} then {sub()} else {sub()})",
        lambda: f"({sub('i32')} > {sub('i32')})",
    )
    return forms[draw(st.integers(0, 5))]()


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



# ---------------------------------------------------------------------------------------------------------
# Programs that may fail at run time

SCALARS = "(i: i64) (d: i32) (k: i64)"  # an index, a divisor and a size, generated near the array length


@st.composite
def failing_programs(draw):
    """(source, entry names) of a program whose entries take PARAMS and SCALARS and may fail at run time."""
    entries = {}
    m4 = lambda body: MAP4.format(body)
    index = f"(({draw(expr('i64'))}) % (n + {draw(st.integers(0, 2))}))"  # n + 0 == 0 divides by zero
    e32, e32b, ebool = draw(expr("i32")), draw(expr("i32")), draw(expr("bool"))
    entries["ix"] = f"[n]i32 =\n  {m4(f'xs[{index}] + {e32}')}"
    entries["at"] = f"(i32, [n]f32) =\n  (xs[i], {m4('zs[(i + i64.i32 x) % (n + 1)]')})"
    op = draw(st.sampled_from(["/", "%", "//", "%%"]))
    entries["dv"] = f"([n]i32, i32) =\n  ({m4(f'({e32}) {op} (x %% 3 - d)')}, i32.sum xs {op} d)"
    entries["co"] = f"[k]i32 =\n  ({m4(e32b)}) :> [k]i32"
    entries["as"] = f"([n]i32, i64) =\n  ({m4(f'assert ({ebool}) ({e32b})')}, assert (i < n) i)"
    size = draw(st.sampled_from(["iota k", "replicate k d", "map (+ d) (replicate k 1)", "(iota k)[i:]"]))
    entries["sz"] = f"[]{'i64' if 'iota' in size else 'i32'} =\n  {size}"
    names = draw(st.lists(st.sampled_from(sorted(entries)), min_size=1, max_size=3, unique=True))
    source = "\n\n".join(f"entry {name} [n] {PARAMS} {SCALARS}: {entries[name]}" for name in names) + "\n"
    return source, names


@st.composite
def failing_inputs(draw):
    """The arguments of failing_programs' entries: inputs' vectors and i, d, k near their length."""
    vectors, _ = draw(inputs())
    n = len(vectors[0])
    near = st.one_of(st.integers(-2, n + 2), st.sampled_from([-2 ** 40, 2 ** 40]))
    i, k = draw(near), draw(st.one_of(st.integers(-2, n + 2)))
    d = draw(st.integers(-2, 2))
    return vectors + [np.int64(i), np.int32(d), np.int64(k)]


# ---------------------------------------------------------------------------------------------------------
# Mutated corpus programs

CORPUS = sorted((pathlib.Path(__file__).parent / "programs").glob("*.fut"))
IDENTIFIERS = ("x", "xs", "n", "main", "map", "reduce", "i32", "f32.sqrt", "let", "in", "loop", "if", "entry", "def",
               "iota", "replicate", "scan", "type", "assert", "unflatten", "flatten")
OPERATORS_TEXT = ("+", "-", "*", "/", "%", "//", "**", "<<", ">>", "==", "!=", "<=", "&&", "||", "!", "|>", "<|",
                  ":>", ":", "..", "..<", "->", "\\", "=", "(", ")", "[", "]", "{", "}", ",", ".", "#", "'", "\"",
                  "@", "$", "`", "--", "-- ==")
NUMBERS = ("0", "-1", "1i8", "255u8", "2147483648i32", "9223372036854775808", "1e400", "0x", "0b2", "1.5e-50f16",
           "-0.0f64", "f32.nan", "99999999999999999999999999", "1_000", "0.", ".5", "1e", "3i64",
           "-9223372036854775808i64")
JUNK = st.one_of(st.binary(max_size=8), st.sampled_from([b"\x00", b"\xff\xfe", b"\xc3\x28", b"\x1b[0m", b"\r", b"\t",
                                                        b"\x7f", b"\xe2\x80\xae", "é∀".encode()]))


def _tokens(text: bytes) -> list:
    import re
    return re.findall(rb"\s+|\w+|[^\w\s]", text)


@st.composite
def mutation(draw, text: bytes) -> bytes:
    kind = draw(st.integers(0, 9))
    lines = text.splitlines(keepends=True)
    tokens = _tokens(text)
    if not tokens:
        return text + draw(JUNK)
    pick = lambda seq: draw(st.integers(0, max(len(seq) - 1, 0)))
    if kind == 0 and lines:  # delete a line
        j = pick(lines)
        return b"".join(lines[:j] + lines[j + 1:])
    if kind == 1 and lines:  # duplicate a line
        j = pick(lines)
        return b"".join(lines[:j + 1] + lines[j:])
    if kind == 2 and len(lines) > 1:  # swap two lines
        a, b = pick(lines), pick(lines)
        lines[a], lines[b] = lines[b], lines[a]
        return b"".join(lines)
    if kind == 3:  # insert junk bytes
        j = draw(st.integers(0, len(text)))
        return text[:j] + draw(JUNK) + text[j:]
    if kind == 4:  # truncate
        return text[:draw(st.integers(0, len(text)))]
    j = pick(tokens)
    if kind == 5:  # delete a token
        del tokens[j]
    elif kind == 6:  # duplicate a token
        tokens.insert(j, tokens[j])
    elif kind == 7:  # swap two tokens
        a = pick(tokens)
        tokens[a], tokens[j] = tokens[j], tokens[a]
    elif kind == 8:  # replace a token by a number
        tokens[j] = draw(st.sampled_from(NUMBERS)).encode()
    else:  # by an identifier or an operator (also kinds 0-2 on a text of too few lines)
        tokens[j] = draw(st.sampled_from(IDENTIFIERS + OPERATORS_TEXT)).encode()
    return b"".join(tokens)


@st.composite
def mutated_sources(draw, max_mutations: int = 4) -> tuple:
    """(corpus file name, mutated bytes): a corpus program (its code, without the test blocks' comments more often
    than not) with 1..max_mutations edits."""
    path = draw(st.sampled_from(CORPUS))
    text = path.read_bytes()
    if draw(st.booleans()):
        text = b"\n".join(line for line in text.splitlines() if not line.lstrip().startswith(b"--"))
    for _ in range(draw(st.integers(1, max_mutations))):
        text = draw(mutation(text))
    return path.name, text


# ---------------------------------------------------------------------------------------------------------
# Values, tuning files and command lines of compiled programs

DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64, np.float32, np.float64, np.bool_)


@st.composite
def numpy_values(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    count = int(np.prod(shape)) if shape else 1
    if dtype is np.bool_:
        flat = draw(st.lists(st.booleans(), min_size=count, max_size=count))
    elif np.issubdtype(dtype, np.floating):
        flat = draw(st.lists(st.floats(width=32 if dtype is np.float32 else 64), min_size=count, max_size=count))
    else:
        info = np.iinfo(dtype)
        flat = draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=count, max_size=count))
    array = np.array(flat, dtype).reshape(shape)
    return array if shape else dtype(flat[0])


def _serialised(values: list, binary: bool) -> bytes:
    out = io.BytesIO() if binary else io.StringIO()
    for v in values:
        (write_binary if binary else write_text)(v, out)
        if not binary:
            out.write(" ")
    data = out.getvalue()
    return data if binary else data.encode()


TEXT_VALUES = ("1", "1i64", "-1i64", "9223372036854775807i64", "9223372036854775808i64", "2147483648i32", "-0i32",
               "1.5f32", "1e40f32", "f32.nan", "f32.inf", "-f32.inf", "true", "fals", "[]", "[1, 2", "[[1], [2, 3]]",
               "empty([0]i32)", "empty([3][0]f32)", "empty([-1]i32)", "empty([99999999999999]i32)", "[1i32, 2i64]",
               "0x10i32", "1_000i32", "'a'", "\"s\"", "(1, 2)", "b", "-- comment\n1i32", "\x00", "٣i32", "[1,]")


@st.composite
def value_bytes(draw, intended: list) -> bytes:
    """stdin for an entry point: its intended arguments (text or binary, some dropped, swapped or added), other
    generated values, literals of odd form, corrupted binary data and raw bytes."""
    values = list(intended)
    kind = draw(st.integers(0, 5))
    if kind == 1 and values:
        del values[draw(st.integers(0, len(values) - 1))]
    elif kind == 2:
        values.insert(draw(st.integers(0, len(values))), draw(numpy_values()))
    elif kind == 3:
        values = draw(st.lists(numpy_values(), max_size=3))
    data = _serialised(values, draw(st.booleans()))
    if kind == 4:
        data = b" ".join(v.encode() for v in draw(st.lists(st.sampled_from(TEXT_VALUES), max_size=4)))
    if kind == 5 or draw(st.integers(0, 3)) == 0:  # corrupt: cut, flip a byte or add junk
        j = draw(st.integers(0, len(data)))
        data = draw(st.sampled_from([data[:j], data[:j] + draw(JUNK) + data[j:],
                                     data[:j] + bytes([draw(st.integers(0, 255))]) + data[j + 1:]]))
    return data


ODD_NUMBERS = ("", "0", "1", "-1", "-5", "--5", "+3", " 7 ", "1e3", "0x10", "1.5", "٣", "²", "99999999999999999999",
               "-99999999999999999999", "2147483648", "nan", "1_0", "\x00", "a=b")


@st.composite
def tuning_texts(draw, names: list) -> str:
    """Tuning-file text: `name=int` lines with known and unknown names, odd values, comments, blank lines, junk."""
    line = st.one_of(
        st.builds(lambda n, v: f"{n}={v}", st.sampled_from(names + ["unknown", "", "main.", "=" ]),
                  st.sampled_from(ODD_NUMBERS) | st.integers(-2 ** 40, 2 ** 40).map(str)),
        st.sampled_from(["", "-- comment", "   ", "--", "name", "=", "==", "a = 1 = 2", "\t-- x=1"]),
        st.text(max_size=12))
    ending = draw(st.sampled_from(["\n", "\r\n", "\r", "\x0b", "\x1c", "\u2028"]))
    return ending.join(draw(st.lists(line, max_size=6)))


def tuning_file_bytes(names: list):
    return st.one_of(tuning_texts(names).map(lambda t: t.encode("utf-8", "surrogatepass")),
                     st.binary(max_size=20), tuning_texts(names).map(lambda t: t.encode() + b"\xff\n"))


@st.composite
def option_lists(draw, entries: list, params: list, paths: dict) -> list:
    """A compiled program's command line: entry points, --param, -t, -r, --tuning, defaults, flags and unknown
    options, with odd values. `paths` names files of the test's folder: "times", "tuning", "dir", "missing"."""
    number = st.sampled_from([v for v in ODD_NUMBERS if "\x00" not in v])  # argv cannot hold a NUL
    small = st.sampled_from(["-1", "0", "1", "2", "x", "", "1.0"])
    choice = st.one_of(
        st.builds(lambda e: ["-e", e], st.sampled_from(entries + ["nope", "", "-b"])),
        st.builds(lambda p, v: ["--param", f"{p}={v}"], st.sampled_from(params + ["nope", ""]), number),
        st.sampled_from([["--param", "x"], ["--param", "="], ["--param"]]),
        st.builds(lambda p: ["-t", str(paths[p])], st.sampled_from(["times", "dir", "missing"])),
        st.builds(lambda r: ["-r", r], small),
        st.just(["--tuning", str(paths["tuning"])]),
        st.sampled_from([["--tuning", str(paths["missing"])], ["--tuning", str(paths["dir"])]]),
        st.builds(lambda o, v: [o, v], st.sampled_from(["--default-threshold", "--default-group-size",
                                                        "--default-tile-size"]), number),
        st.sampled_from([["-b"], ["-L"], ["-D"], ["-P"], ["--print-params"], ["--frobnicate"], ["-Z"], ["-"],
                         ["-d", "no such device"], ["-p", "no such platform"], ["--entry"], ["-e"], ["extra"],
                         ["--profile-json", str(paths["dir"])]]))
    return [word for words in draw(st.lists(choice, max_size=4)) for word in words]


# ---------------------------------------------------------------------------------------------------------
# Host code nested deeply (issue 53: Python refuses 100 levels of indentation and 20 nested blocks)

@st.composite
def deep_host_programs(draw) -> str:
    """`entry main (x: i64): i64` whose body nests host `if`s, `else if` chains, loops and `let`s, 60 to 130 deep;
    the loops run once, so that any depth runs fast."""
    depth = draw(st.integers(60, 130))
    kinds = draw(st.lists(st.sampled_from(("if", "else", "loop", "let")), min_size=depth, max_size=depth))
    body = "x"
    for level, kind in enumerate(reversed(kinds)):  # from the innermost out
        k = draw(st.integers(-3, 3))
        if kind == "if":
            body = f"(if x > {k} then {body} else x - {level})"
        elif kind == "else":
            body = f"(if x == {k} then {level} else {body})"
        elif kind == "loop":
            body = f"(loop x = x + {k} for i{level} < 1 do {body} + i{level})"
        else:
            body = f"(let x = x * 2 + {k} in {body})"
    return f"entry main (x: i64): i64 =\n  {body}\n"


# ---------------------------------------------------------------------------------------------------------
# incflat's commands (issue 53): extreme numbers, odd files, malformed JSON and store rows, signals

EXTREME_NUMBERS = tuple(v for v in ODD_NUMBERS if "\x00" not in v) + (  # (argv cannot hold a NUL)
    "1" + "0" * 30, "-1" + "0" * 30, "9" * 400, "inf", "-inf", "Infinity", "NaN", "-nan", "1e400", "1e-400", "-0",
    "0.0", "-0.0", "3.", ".5", "1,5", "٣.٥", "１２", "𝟙", "1\u200b", "0b101", "1e308", "4294967296", "-2147483649")


def extreme_numbers():
    """Where a number is expected: huge, negative, zero, NaN and infinities, non-ASCII digits, empty, floats."""
    return st.one_of(st.sampled_from(EXTREME_NUMBERS), st.integers(-2 ** 70, 2 ** 70).map(str),
                     st.floats().map(repr))


ODD_FILES = ("directory", "fifo", "null device", "dangling symlink", "symlink loop", "missing folder", "unreadable")


def make_odd_file(kind: str, folder: pathlib.Path) -> pathlib.Path:
    """A path of the odd kind in folder. The null device is a node of its own where we may make one (root): a
    command that replaced it would replace the test's, not the system's /dev/null."""
    path = folder / f"odd-{kind.replace(' ', '-')}"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "null device":
        if os.geteuid() != 0:
            return pathlib.Path(os.devnull)
        null = os.stat(os.devnull).st_rdev
        os.mknod(path, stat.S_IFCHR | 0o666, null)
    elif kind == "dangling symlink":
        path.symlink_to(folder / "nowhere")
    elif kind == "symlink loop":
        path.symlink_to(path)
    elif kind == "missing folder":
        return folder / "no-such-folder" / "file"
    else:
        path.write_text("{}\n")
        path.chmod(0)
    return path


def json_values(max_leaves: int = 8):
    """Any JSON value, numbers extreme included."""
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(), st.text(max_size=6))
    return st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                        max_leaves=max_leaves)


@st.composite
def bench_json_texts(draw) -> str:
    """futhark bench JSON, well formed or not: a program -> {"datasets": {name: result}} object whose parts may be
    any JSON value, cut short, or not JSON at all."""
    runtime = st.one_of(st.integers(-1, 10 ** 6), st.floats(), json_values(2))
    result = st.one_of(st.fixed_dictionaries({"runtimes": st.lists(runtime, max_size=4)}), st.text(max_size=8),
                       json_values())
    datasets = st.one_of(st.dictionaries(st.text(max_size=6), result, max_size=3), json_values())
    program = st.one_of(st.fixed_dictionaries({"datasets": datasets}), json_values())
    data = draw(st.one_of(st.dictionaries(st.text(max_size=6), program, max_size=3), json_values()))
    text = json.dumps(data)  # (NaN and Infinity spelt as Python's json does)
    cut = draw(st.sampled_from(["whole", "cut", "junk"]))
    if cut == "cut":
        return text[:draw(st.integers(0, len(text)))]
    return text if cut == "whole" else text + draw(st.text(max_size=4))


def store_column_values():
    """What a damaged store's column may hold: text (JSON or not), numbers, blobs, NULL."""
    return st.one_of(st.none(), st.integers(-2 ** 63, 2 ** 63 - 1), st.floats(), st.binary(max_size=8),
                     json_values().map(json.dumps), st.text(max_size=10))
