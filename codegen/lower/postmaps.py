"""Maps fused into the sequential scans whose prefixes they consume.

A thread that runs `let ps = scan op ne xs in map f ps` sequentially writes every prefix to memory and reads
it back in a second loop. When the map is the only reader of the prefixes, the `fuse_scan_postmaps` stage
makes it the scan's post-map (`Scanomap.post`): the loop applies f to each prefix as it is computed and
stores only f's results. This halves the memory traffic of a thread-per-row tridiagonal solver (three scans,
each followed by such a map). Only scans inside kernels are sequential after flattening, so only kernel
bodies are rewritten; the level-0 and level-1 segscans are left alone.
"""

import dataclasses
from collections import Counter

from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import use_counts
from incflat.ir.rename import NameSource, Renamer, all_names
from incflat.ir.traverse import map_bodies, map_nested
from incflat.ir.types import Array


def fuse_scan_postmaps(prog: T.Program) -> T.Program:
    """The fuse_scan_postmaps stage (target IR to target IR)."""
    names = NameSource(all_names(prog))
    return map_bodies(prog, lambda body: _host_body(body, names))


def _host_body(body: S.Body, names: NameSource) -> S.Body:
    def stm(s: S.Stm) -> S.Stm:
        if isinstance(s.exp, T.SEGOPS):
            return S.Stm(s.pat, map_nested(s.exp, lambda b: _kernel_body(b, names)), s.loc)
        return S.Stm(s.pat, map_nested(s.exp, lambda b: _host_body(b, names)), s.loc)
    return S.Body(tuple(stm(s) for s in body.stms), body.result)


def _kernel_body(body: S.Body, names: NameSource) -> S.Body:
    stms = [S.Stm(s.pat, map_nested(s.exp, lambda b: _kernel_body(b, names)), s.loc) for s in body.stms]
    counts = use_counts(S.Body(tuple(stms), body.result))
    for i, scan in enumerate(stms):
        if scan is None or not _fusable_scan(scan.exp):
            continue
        prefixes = {p.name: k for k, p in enumerate(scan.pat)}
        for j in range(i + 1, len(stms)):
            consumer = stms[j]
            if consumer is not None and _only_reader(consumer.exp, prefixes, counts):
                stms[j] = S.Stm(consumer.pat, _with_post(scan.exp, consumer.exp, prefixes, names), consumer.loc)
                stms[i] = None
                break
    return S.Body(tuple(s for s in stms if s is not None), body.result)


def _fusable_scan(e) -> bool:
    return isinstance(e, S.Scanomap) and e.post is None and len(e.map_lam.ret) == len(e.neutral)


def _only_reader(e, prefixes: dict, counts: dict) -> bool:
    """Whether `e` is a map of scalars to scalars over prefixes only, and nothing else reads any prefix."""
    if not isinstance(e, S.Map) or not e.arrs or any(isinstance(t, Array) for t in e.lam.ret):
        return False
    if not all(isinstance(a, S.Var) and a.name in prefixes for a in e.arrs):
        return False
    reads = Counter(a.name for a in e.arrs)
    return all(counts.get(name, 0) == reads[name] for name in prefixes)


def _with_post(scan: S.Scanomap, consumer: S.Map, prefixes: dict, names: NameSource) -> S.Scanomap:
    params = tuple(S.Var(names.fresh("prefix"), a.type) for a in scan.neutral)
    subst = {p.name: params[prefixes[a.name]] for p, a in zip(consumer.lam.params, consumer.arrs)}
    post = S.Lambda(params, Renamer(names, subst).body(consumer.lam.body), consumer.lam.ret)
    return dataclasses.replace(scan, post=post)
