"""The version tree of a target program, for `incflat versions`: the guards with their thresholds and
degrees of parallelism, and the code of each leaf version, as text, Graphviz or JSON."""

import json
from dataclasses import dataclass, field

from incflat.ir.runtime.tuning import build_forest, leaf_names
from incflat.ir.thresholds import thresholds
from incflat.ir import pretty
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.rename import user_name
from incflat.ir.traverse import walk_exps


@dataclass
class Version:
    """A leaf: the code that runs when the guards above it choose it."""
    name: str  # V1, V2, ... in depth-first order, true branches first
    body: S.Body


@dataclass
class Guard:
    threshold: str
    kind: str
    par: str  # Par(...) in the program's own size names
    true: list = field(default_factory=list)  # list[Guard | Version]
    false: list = field(default_factory=list)


def par_text(par: tuple) -> str:
    return " * ".join(user_name(str(a)) for a in par)


def version_forest(f: S.FunDef) -> list:
    """The version trees of an entry point (several at one level are a horizontal split), built by the
    same `build_forest` that the tuner uses on a `--print-params` listing; leaves named by `leaf_names`."""
    guards = {e.threshold: e for e in walk_exps(f.body) if isinstance(e, T.Guard)}
    forest = build_forest(thresholds(T.Program((f,))))
    names = leaf_names(forest)

    def convert(node) -> Guard:
        g = guards[node.name]
        out = Guard(g.threshold, g.kind, par_text(g.par))
        for outcome, children, body, side in ((True, node.on_true, g.then, out.true),
                                              (False, node.on_false, g.else_, out.false)):
            if children:
                side.extend(convert(c) for c in children)
            else:
                side.append(Version(names[node.name, outcome], body))
        return out

    return [convert(root) for root in forest]


def segop_summary(body: S.Body) -> str:
    """`segmap1 <xs ∈ xss, ys ∈ yss'>; segred0 ...`: the segops of a version, outer ones only."""
    parts = []
    for e in walk_exps(body):
        if isinstance(e, T.SEGOPS):
            parts.append(f"{type(e).__name__.lower()}{e.level} <{pretty.ctx(e.ctx)}>")
    return "; ".join(parts) or "(host code only)"


def render_text(prog: S.Program) -> str:
    out = []
    for f in prog.funs:
        out.append(f"entry {f.name}:")
        forest = version_forest(f)
        if not forest:
            out.append("  one version: " + segop_summary(f.body))
        for node in forest:
            _text(node, 1, out)
    return "\n".join(out) + "\n"


def _text(node, depth: int, out: list):
    pad = "  " * depth
    if isinstance(node, Version):
        out.append(f"{pad}{node.name}: {segop_summary(node.body)}")
        out.extend(pad + "    " + line for line in pretty.body(node.body, 0).splitlines())
        return
    fits = " (and fits a workgroup)" if node.kind == "intra" else ""
    out.append(f"{pad}if {node.threshold} <= {node.par}{fits}:")
    for child in node.true:
        _text(child, depth + 1, out)
    out.append(f"{pad}else:")
    for child in node.false:
        _text(child, depth + 1, out)


def to_json(prog: S.Program) -> str:
    def node(n):
        if isinstance(n, Version):
            return {"version": n.name, "segops": segop_summary(n.body), "code": pretty.body(n.body, 0)}
        return {"threshold": n.threshold, "kind": n.kind, "par": n.par,
                "true": [node(c) for c in n.true], "false": [node(c) for c in n.false]}
    return json.dumps({f.name: [node(n) for n in version_forest(f)] for f in prog.funs}, indent=1)


def to_dot(prog: S.Program) -> str:
    lines = ["digraph versions {", "  node [fontname=monospace];"]
    ids = iter(range(10 ** 9))

    def node(n) -> str:
        me = f"n{next(ids)}"
        if isinstance(n, Version):
            lines.append(f'  {me} [shape=box, label="{n.name}\\n{_escape(segop_summary(n.body))}"];')
            return me
        lines.append(f'  {me} [shape=diamond, label="{n.threshold} <= {n.par}"];')
        for label, children in (("true", n.true), ("false", n.false)):
            for c in children:
                lines.append(f'  {me} -> {node(c)} [label="{label}"];')
        return me

    for f in prog.funs:
        entry = f"n{next(ids)}"
        lines.append(f'  {entry} [shape=plaintext, label="entry {f.name}"];')
        for n in version_forest(f):
            lines.append(f"  {entry} -> {node(n)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def stats(prog: S.Program) -> dict:
    """Counts of versions, segops (kernels) and thresholds."""
    versions = 0
    for f in prog.funs:
        stack = list(version_forest(f))
        versions += not stack  # an entry without guards has one version
        while stack:
            n = stack.pop()
            if isinstance(n, Version):
                versions += 1
            else:
                stack.extend(n.true + n.false)
    segops = sum(segop_counts(prog).values())
    guards = sum(1 for f in prog.funs for e in walk_exps(f.body) if isinstance(e, T.Guard))
    return {"versions": versions, "segops": segops, "thresholds": guards}


def segop_counts(prog) -> dict:
    """How many segops of each kind and level a target program holds, e.g. {"SegMap1": 3, "SegRed0": 1},
    for Futhark-style `structure` tests."""
    counts = {}
    for f in prog.funs:
        for e in walk_exps(f.body):
            if isinstance(e, T.SEGOPS):
                key = f"{type(e).__name__}{e.level}"
                counts[key] = counts.get(key, 0) + 1
    return counts
