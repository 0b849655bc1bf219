"""The shape of the package: one name in a user's environment, no import cycle, modules of a readable size, and
one list of stages."""

import ast
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("ir", "flatten", "codegen", "tuner")
MOST_LINES = 800
REASON = "Over 800 lines because"  # what a longer module's docstring must say


def modules() -> dict:
    """incflat's module name -> its file."""
    found = {}
    for path in sorted(ROOT.glob("*.py")):
        found["incflat" if path.stem == "__init__" else f"incflat.{path.stem}"] = path
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(("incflat",) + (parts[:-1] if parts[-1] == "__init__" else parts))
            found[name] = path
    return found


def imports(name: str, path: pathlib.Path, known: dict) -> set:
    """The incflat modules a module imports, anywhere in it (a function's import is an edge too)."""
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    edges = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        edges |= {t for t in targets if t in known and t != name}
    return edges


def test_no_import_cycle():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    state = {}

    def visit(name, stack):
        state[name] = "open"
        for target in sorted(graph[name]):
            if state.get(target) == "open":
                cycle = stack[stack.index(target):] + [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, stack + [target])
        state[name] = "done"

    for name in graph:
        if name not in state:
            visit(name, [name])


def test_modules_are_short_or_say_why():
    for name, path in modules().items():
        lines = path.read_text().count("\n")
        if lines > MOST_LINES:
            doc = ast.get_docstring(ast.parse(path.read_text())) or ""
            assert REASON in doc, f"{name} has {lines} lines and no '{REASON} ...' at its top"


def test_the_pipeline_is_the_only_list_of_stages():
    """The passes are listed once: in pipeline.STAGES. No other module composes them."""
    import incflat.flatten.normalize as normalize
    from incflat import pipeline
    assert not hasattr(normalize, "PIPELINE") and not hasattr(normalize, "normalize")
    passes = [name for name, value in vars(normalize).items()
              if callable(value) and not name.startswith("_") and getattr(value, "__module__", "") == normalize.__name__]
    listed = set(pipeline.STAGE_NAMES)
    assert set(passes) <= listed, set(passes) - listed


def test_installing_adds_only_incflat(tmp_path):
    target = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    top = {p.name for p in target.iterdir()} - {"bin", "__pycache__"}
    assert {p for p in top if not p.endswith(".dist-info")} == {"incflat"}, top
    installed = target / "incflat"
    assert (installed / "ir" / "frontend" / "grammar.lark").is_file()
    assert (installed / "ir" / "runtime" / "loader.py").is_file()
    assert (installed / "ir" / "frontend" / "check" / "lower.py").is_file()
    assert not (installed / "tests").exists() and not (installed / "futhark_examples").exists()
    # the installed copy compiles a program, from its own files
    code = ("import incflat, incflat.pipeline as p; assert incflat.__file__.startswith(%r); "
            "g = p.compile('entry main (x: i32): i32 = x + 1', 't.fut'); print(len(g.kernels))" % str(installed))
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0 and ran.stdout.strip() == "0", ran.stderr


def test_the_generated_program_does_not_depend_on_the_hash_seed():
    """The same source gives the same generated program in every process: Python randomises the order of a
    set of names from one process to the next, and kernel parameters taken in such an order made
    OptionPricing's kernels differ from one compilation to the next."""
    source = ("entry main [a][b][c][d] (xs: [a][b][c][d]f32) (ys: [b][a][c][d]f32): [a][b]f32 =\n"
              "  map2 (\\x y -> map (\\r -> f32.sum (flatten r) + y[0, 0, 0]) x) xs (transpose ys)")
    script = ("import sys; from incflat import pipeline\n"
              "print(pipeline.show(pipeline.compile(sys.stdin.read(), 't.fut')))")
    texts = {subprocess.run([sys.executable, "-c", script], input=source, capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout
             for seed in range(4)}
    assert len(texts) == 1
