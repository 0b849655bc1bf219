"""Incremental flattening (Henriksen et al., PPoPP'19, Figures 3-4): source IR -> target IR with guarded
code versions; and moderate flattening, the baseline, with one version chosen by a static heuristic.

The flattener is one object, the names it makes and the thresholds it numbers (here), whose rules are in a
module per family, each a part of the `Flattener` class:

- here, G0: host code stays as it is, its loops' and branches' bodies flattened on their own; a SOAC on the host
  starts a nest (`nest`, with the empty context at level 1);
- flatten.maps: `Σ ⊢_l e ⇒ e'` (`nest`): G1 (at level 0, manifest the nest), G2 (a map without inner parallelism
  is a segmap), G9's base case (a redomap without inner parallelism is a segred), and a map's body (`body_rule`);
- flatten.guards: G3 (three versions, e_top, e_middle and e_flat, under guards) and G9's guard, their
  thresholds and the parallelism they compare;
- flatten.intra: • ⊢_0 e, the body at workgroup level (G3's e_middle);
- flatten.distribution: G6, distribution of a map nest over the statements of its body;
- flatten.loops: G7, interchange into a sequential loop, and a host-level loop run by one workgroup;
- flatten.branches: G8, interchange into an `if`.

Where no rule applies, the nest is manifested with its body sequential, which is always correct.
"""

import dataclasses

from incflat.flatten.branches import BranchRule
from incflat.flatten.distribution import DistributionRule
from incflat.flatten.guards import GuardRules
from incflat.flatten.loops import LoopRules
from incflat.flatten.maps import MapRules
from incflat.flatten.nests import bind, nest_types
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import exp_types
from incflat.ir.rename import NameSource, all_names


class Flattener(MapRules, GuardRules, DistributionRule, LoopRules, BranchRule):
    """`moderate=True` gives moderate flattening, the baseline: one version, chosen by a static heuristic
    (a map nest is flattened through maps, distribution and loops; an inner redomap or scanomap is
    sequentialised)."""

    def __init__(self, prog: S.Program, moderate: bool = False):
        self.names = NameSource(all_names(prog))
        self.moderate = moderate
        self.n_thresholds = 0  # thresholds are numbered uniquely in the program, in creation order

    # ---- the host level (empty context, level 1) ----

    def host_body(self, entry: str, body: S.Body) -> S.Body:
        """G0: a body of host code, each SOAC in it flattened as a nest of its own, and each host-level loop
        given a version run by one workgroup where that rule applies (incremental flattening only)."""
        stms = []
        for stm in body.stms:
            e = stm.exp
            if isinstance(e, (S.Map, S.Redomap, S.Scanomap)):
                types = nest_types(e) if isinstance(e, S.Map) else exp_types(e)
                stms.extend(bind(stm.pat, self.nest(entry, (), 1, e, types), stm.loc))
                continue
            if isinstance(e, S.If):  # G0: host-level control flow, branches flattened on their own
                e = S.If(e.cond, self.host_body(entry, e.then), self.host_body(entry, e.else_), e.types)
            elif isinstance(e, S.Loop):  # G0: a host-level loop; its body's parallelism is flattened
                form = e.form
                if isinstance(form, S.WhileLoop):
                    form = S.WhileLoop(self.host_body(entry, form.cond))
                on_host = dataclasses.replace(e, form=form, body=self.host_body(entry, e.body))
                in_group = None if self.moderate else self.loop_in_workgroup(entry, stm, on_host)
                if in_group is not None:
                    stms.append(in_group)
                    continue
                e = on_host
            stms.append(S.Stm(stm.pat, e, stm.loc))
        return S.Body(tuple(stms), body.result)


def flatten(prog: S.Program, flattening: str = "incremental") -> T.Program:
    """The flatten stage: incremental flattening (guarded versions), or moderate flattening (one version,
    the baseline) when `flattening` is "moderate"."""
    if flattening not in ("incremental", "moderate"):
        raise ValueError(f"unknown flattening {flattening!r}")
    f = Flattener(prog, moderate=flattening == "moderate")
    funs = tuple(
        S.FunDef(fn.name, True, fn.size_params, fn.params, fn.ret, f.host_body(fn.name, fn.body), fn.loc)
        for fn in prog.entries)
    return T.Program(funs, prog.file)
