"""An interpreter for the target IR under a threshold assignment.

It rewrites every segop into the SOACs it stands for (a segmap into a nest of maps, a segred into maps
around a redomap, a segscan into maps around a scanomap) and every guard into an `if` on
`threshold <= par` with the assigned threshold value, then runs the reference interpreter. So each code
version can be checked against the source program without a device.
"""

import dataclasses

from incflat.ir import nodes
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import exp_types
from incflat.ir.interp.interpreter import run_entry
from incflat.ir.rename import NameSource, all_names
from incflat.ir.runtime.tuning import INTRA_DEFAULT
from incflat.ir.traverse import map_nested
from incflat.ir.types import BOOL, I64, array_of


def run_target(prog: S.Program, entry: str, args: list, assignment: dict, max_group_size: int = 1024,
               default: int = 32768) -> tuple:
    """The results of `entry` with the thresholds in `assignment` (others at `default`, an intra guard at
    INTRA_DEFAULT); an intra-group guard is also false when its parallelism exceeds `max_group_size`, as on a
    device."""
    lowering = _Lowering(NameSource(all_names(prog)), assignment, max_group_size, default)
    funs = tuple(dataclasses.replace(f, body=lowering.body(f.body)) for f in prog.funs)
    return run_entry(S.Program(funs, prog.file), entry, args)


class _Lowering:
    def __init__(self, names: NameSource, assignment: dict, max_group_size: int, default: int):
        self.names, self.assignment = names, assignment
        self.max_group_size, self.default = max_group_size, default

    def body(self, body: S.Body) -> S.Body:
        stms = []
        for stm in body.stms:
            stms.extend(self.stm(stm))
        return S.Body(tuple(stms), body.result)

    def lam(self, lam: S.Lambda) -> S.Lambda:
        return dataclasses.replace(lam, body=self.body(lam.body))

    def stm(self, stm: S.Stm) -> list:
        """The source-IR statements that stm stands for (TABLE's rule for its expression)."""
        return TABLE.rule(stm.exp)(self, stm)

    def source_stm(self, stm: S.Stm) -> list:
        return [S.Stm(stm.pat, map_nested(stm.exp, self.body), stm.loc)]

    def segop_stm(self, stm: S.Stm) -> list:
        return [S.Stm(stm.pat, self.segop(stm.exp), stm.loc)]

    def guard(self, stm: S.Stm) -> list:
        e = stm.exp
        stms, par = [], e.par[0]
        for a in e.par[1:]:
            v = S.Var(self.names.fresh("par"), I64)
            stms.append(S.Stm((v,), S.BinOp("*", par, a, I64)))
            par = v
        value = self.assignment.get(e.threshold, INTRA_DEFAULT if e.kind == "intra" else self.default)
        cond = S.Var(self.names.fresh("chosen"), BOOL)
        stms.append(S.Stm((cond,), S.BinOp("<=", S.Const(value, I64), par, BOOL)))
        if e.kind == "intra":
            fits = S.Var(self.names.fresh("fits"), BOOL)
            both = S.Var(self.names.fresh("chosen"), BOOL)
            stms.append(S.Stm((fits,), S.BinOp("<=", par, S.Const(self.max_group_size, I64), BOOL)))
            stms.append(S.Stm((both,), S.BinOp("&&", cond, fits, BOOL)))
            cond = both
        stms.append(S.Stm(stm.pat, S.If(cond, self.body(e.then), self.body(e.else_), e.types), stm.loc))
        return stms

    def segop(self, op):
        """The SOAC nest a segop stands for."""
        body = self.body(op.body)
        if isinstance(op, T.SegMap):
            return self.maps(op.ctx, op.types, lambda: body)
        inner = op.ctx[-1]
        element = S.Lambda(inner.params, body, tuple(a.type for a in op.neutral))
        if isinstance(op, T.SegRed):
            innermost = S.Redomap(inner.width, self.lam(op.red), element, op.neutral, inner.arrs, op.commutative)
            types = op.types
        else:
            innermost = S.Scanomap(inner.width, self.lam(op.scan), element, op.neutral, inner.arrs)
            types = tuple(t for t in op.types)
        if len(op.ctx) == 1:
            return innermost
        inner_types = exp_types(innermost)
        pat = tuple(S.Var(self.names.fresh("seg"), t) for t in inner_types)
        segment_body = S.Body((S.Stm(pat, innermost),), pat)
        return self.maps(op.ctx[:-1], types, lambda: segment_body)

    def maps(self, ctx: tuple, types: tuple, make_body):
        """A nest of maps over ctx whose innermost body is make_body() and whose results have types."""
        binding = ctx[0]
        row_types = tuple(_drop_outer(t) for t in types)
        if len(ctx) == 1:
            body = make_body()
        else:
            pat = tuple(S.Var(self.names.fresh("row"), t) for t in row_types)
            body = S.Body((S.Stm(pat, self.maps(ctx[1:], row_types, make_body)),), pat)
        return S.Map(binding.width, S.Lambda(binding.params, body, row_types), binding.arrs)


# A source-IR expression stays, its nested bodies lowered (ir/traverse.py finds them); a target-IR one is rewritten.
TABLE = nodes.Table(f"{__name__}.TABLE", "target", {
    **dict.fromkeys(nodes.IRS["source"], _Lowering.source_stm),
    T.SegMap: _Lowering.segop_stm, T.SegRed: _Lowering.segop_stm, T.SegScan: _Lowering.segop_stm,
    T.Guard: _Lowering.guard,
})


def _drop_outer(t):
    return array_of(t.elem, t.shape[1:])


__all__ = ["run_target"]
