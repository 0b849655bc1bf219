"""The layers of incflat, from the ground up, and the rule that imports point down only (docs/architecture.md).

Every module of the package belongs to the first layer, from the top, one of whose prefixes names it (a prefix is
a module or a package). A module may import from its own layer and the layers below it, never from one above,
whether the import is at the top of the module or inside a function. The modules form no import cycle, and none is
over 800 lines.
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = "incflat"

LAYERS = (  # (name, the modules and packages in it), from the ground up
    ("package", ("incflat",)),  # the package's own module: its version (every import of incflat loads it)
    ("runtime", ("incflat.ir.runtime",)),  # what every compiled program carries
    ("ir", ("incflat.ir",)),  # source and target IR, types, traversal, analysis, verifier, printer, thresholds
    ("frontend", ("incflat.ir.frontend",)),  # grammar, parser, checker
    ("interpreter", ("incflat.ir.interp",)),  # the reference interpreter
    ("flatten", ("incflat.flatten",)),  # normalisation, and the flattening rules
    ("lower", ("incflat.codegen.lower",)),  # every pass from target IR to target IR
    ("codegen", ("incflat.codegen",)),  # kernels, host code, the compiled program
    ("driver", ("incflat.pipeline",)),  # the stage list
    ("project", ("incflat.files", "incflat.datasets", "incflat.compiled")),  # files, test blocks, the compile cache
    ("tuner", ("incflat.tuner",)),
    ("tools", ("incflat.harness", "incflat.script", "incflat.bench", "incflat.cli", "incflat.__main__")),
)
MAX_LINES = 800


def package_sources() -> dict[str, str]:
    """Module name -> source text, for every module of the package."""
    sources = {}
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in ("tests", "futhark_examples", "docs", "build") or relative.parts[0].startswith("."):
            continue
        parts = (PACKAGE, *relative.with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        sources[name] = path.read_text(encoding="utf-8")
    return sources


def layer_of(module: str) -> int:
    """The index in LAYERS of the layer of a module: that of its longest prefix (the package itself only by name)."""
    best = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (prefix != PACKAGE and module.startswith(prefix + ".")):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), index)
    if best is None:
        raise LookupError(f"{module} is in no layer: add it to tests/test_layers.py's LAYERS")
    return best[1]


def imports(module: str, source: str, modules) -> list[tuple[str, int, bool]]:
    """(imported module, line, whether inside a function) for every import of a module of the package."""
    package = module if source_is_package(module, modules) else module.rpartition(".")[0]
    found = []

    def visit(node, in_function: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend((a.name, child.lineno, in_function) for a in child.names if a.name.split(".")[0] == PACKAGE)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[:len(package.split(".")) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module
                if target.split(".")[0] == PACKAGE:
                    for alias in child.names:  # `from incflat.ir import source`: the submodule itself
                        sub = f"{target}.{alias.name}"
                        found.append((sub if sub in modules else target, child.lineno, in_function))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(source), False)
    return found


def source_is_package(module: str, modules) -> bool:
    return any(other.startswith(module + ".") for other in modules)


def upward_imports(sources: dict[str, str]) -> list[str]:
    """One sentence for every import that points to a higher layer."""
    problems = []
    for module, source in sources.items():
        here = layer_of(module)
        for imported, line, in_function in imports(module, source, sources):
            there = layer_of(imported)
            if there > here:
                where = " inside a function" if in_function else ""
                problems.append(f"{module} ({LAYERS[here][0]}) imports {imported} ({LAYERS[there][0]}){where}, "
                                f"line {line}: an import that points up")
    return problems


def import_cycles(sources: dict[str, str]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), imports inside functions
    included. A package's __init__ importing its own modules is not a cycle: those modules never import it back."""
    graph = {m: sorted({i for i, _, _ in imports(m, s, sources) if i in sources and i != m}) for m, s in sources.items()}
    index, low, stack, on_stack, components, counter = {}, {}, [], set(), [], [0]

    def connect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in graph:
        if v not in index:
            connect(v)
    return components


def test_every_module_is_in_a_layer():
    for module in package_sources():
        layer_of(module)


def test_imports_point_down():
    assert upward_imports(package_sources()) == []


def test_the_runtime_imports_only_itself_relatively():
    """A compiled program carries the runtime's text and installs it as a package of its own (ir/runtime/loader.py):
    an absolute import of incflat there would not exist in a compiled program."""
    for module, source in package_sources().items():
        if LAYERS[layer_of(module)][0] == "runtime":
            absolute = [node.lineno for node in ast.walk(ast.parse(source))
                        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith(PACKAGE)
                        or isinstance(node, ast.Import) and any(a.name.startswith(PACKAGE) for a in node.names)]
            assert absolute == [], f"{module} imports incflat absolutely, lines {absolute}"


def test_no_import_cycle():
    assert import_cycles(package_sources()) == []


@pytest.mark.parametrize("planted, where", [("from incflat.tuner.autotune import autotune\n", ""),
                                            ("def f():\n    from incflat import pipeline\n", " inside a function"),
                                            ("import incflat.codegen.host\n", "")])
def test_a_planted_upward_import_is_named(planted, where):
    sources = package_sources()
    sources["incflat.ir.types"] += "\n" + planted
    problems = upward_imports(sources)
    assert len(problems) == 1, problems
    assert problems[0].startswith("incflat.ir.types (ir) imports incflat.")
    assert f"{where}, line" in problems[0]


def test_a_planted_cycle_is_found():
    sources = package_sources()
    sources["incflat.ir.types"] += "\nfrom incflat.ir import analysis\n"
    assert any({"incflat.ir.types", "incflat.ir.analysis"} <= set(c) for c in import_cycles(sources))


def test_no_module_is_over_800_lines():
    long = {}
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in ("build", "docs") or relative.parts[0].startswith("."):
            continue
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > MAX_LINES:
            long[str(relative)] = count
    assert long == {}
