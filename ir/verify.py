"""Verifiers of the source and the target IR: what every stage's output must satisfy.

`verify_source` and `verify_target` raise `IRError`, an internal compiler error naming the function and the
statement at fault, when a program breaks an invariant:
- scoping: every variable is bound before it is used, by a parameter, a size parameter or a statement, and
  no name is bound twice on a path from a function's root; every size a type mentions is in scope;
- types: a pattern has one variable per result of its expression, of the same shape (its sizes aside); the
  operands of operators, conditions, loop counters and widths have the types they must have; a function call
  names an earlier function with as many arguments as it has parameters;
- the source IR holds no segop and no guard; the target IR holds entry points only, no call, and no reduce or
  scan that normalisation should have made a redomap or scanomap;
- segops: levels 1 (grid, at the host level only) and 0 (workgroup, only as statements of a level-1 segmap's
  body, the intra-group version); a context of at least one binding, each binding as many parameters as
  arrays, each parameter a row of its array; an operator taking two values per neutral element;
- guards: at the host level only; `kind` "outer" or "intra", matching the threshold's name
  `<entry>.suff_<kind>_par_<k>`, with k unique in the program; a non-empty product of i64 atoms as the
  degree of parallelism; both branches as many results as the guard has types.
"""

from __future__ import annotations

from incflat.ir.runtime.tuning import parse_threshold_name, threshold_name
from incflat.ir import nodes
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import exp_atoms, exp_types, type_size_names
from incflat.ir.pretty import exp as show_exp
from incflat.ir.traverse import nested
from incflat.ir.types import BOOL, I64, Array, Scalar, Tuple

COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


class IRError(Exception):
    """A program that breaks an invariant of its IR: a bug in the stage that made it."""


def verify_source(prog: S.Program, stage: str = "") -> None:
    if not isinstance(prog, S.Program):
        raise IRError(f"{_after(stage)}expected a source program, got {type(prog).__name__}")
    _Verifier(prog, stage, target=False).program()


def verify_target(prog: T.Program, stage: str = "") -> None:
    if not isinstance(prog, T.Program):
        raise IRError(f"{_after(stage)}expected a target program, got {type(prog).__name__}")
    _Verifier(prog, stage, target=True).program()


def _after(stage: str) -> str:
    return f"after stage {stage}: " if stage else ""


# Where a statement is: at the host level, in a level-1 segop's body, or in the body of a level-0 segop.
HOST, KERNEL, GROUP = "host", "kernel", "workgroup"


class _Verifier:
    def __init__(self, prog, stage: str, target: bool):
        self.prog, self.stage, self.target = prog, stage, target
        self.function = None
        self.thresholds = {}  # k -> threshold name

    def fail(self, message: str, stm: S.Stm = None):
        where = f"in {self.function}: " if self.function else ""
        shown = f"\n  let {', '.join(v.name for v in stm.pat)} = {show_exp(stm.exp, 1)}" if stm else ""
        at = f" ({stm.loc})" if stm is not None and stm.loc else ""
        raise IRError(f"{_after(self.stage)}{where}{message}{at}{shown}")

    # ---- programs and functions ----

    def program(self):
        defined = set()
        for f in self.prog.funs:
            self.function = f.name
            if f.name in defined:
                self.fail(f"function {f.name} is defined twice")
            if self.target and not f.entry:
                self.fail("a target program holds entry points only (every call is inlined)")
            scope = set()
            for n in f.size_params:
                self.bind_name(n, scope)
            for p in f.params:
                self.well_formed(p.type, scope | {p.name})
                self.bind_name(p.name, scope)
            for t in f.ret:
                self.well_formed(t, None)
            inner = self.body(f.body, scope, HOST)
            for t in f.ret:
                self.sizes_in_scope(t, inner, "the result type")
            defined.add(f.name)

    def bind_name(self, name: str, scope: set, stm: S.Stm = None):
        if name in scope:
            self.fail(f"{name} is bound twice", stm)
        scope.add(name)

    def well_formed(self, t, scope, stm=None):
        if isinstance(t, Tuple):
            self.fail(f"a variable of tuple type {t}", stm)
        if isinstance(t, Array):
            if not t.shape or any(not isinstance(d, (int, str)) for d in t.shape):
                self.fail(f"malformed array type {t}", stm)

    def sizes_in_scope(self, t, scope: set, what: str, stm: S.Stm = None):
        missing = sorted(type_size_names(t) - scope)
        if missing:
            self.fail(f"{what} {t} mentions {', '.join(missing)}, which is not in scope", stm)

    # ---- bodies and statements ----

    def body(self, body: S.Body, scope: set, where: str) -> set:
        """Checks a body in scope; returns the scope at its end."""
        scope = set(scope)
        for stm in body.stms:
            self.stm(stm, scope, where)
            for v in stm.pat:
                self.well_formed(v.type, None, stm)
                self.bind_name(v.name, scope, stm)
            for v in stm.pat:
                self.sizes_in_scope(v.type, scope, f"the type of {v.name}", stm)
        for a in body.result:
            self.atom(a, scope, None)
        return scope

    def atom(self, a, scope: set, stm: S.Stm):
        if isinstance(a, S.Const):
            if not isinstance(a.type, Scalar):
                self.fail(f"a constant of non-scalar type {a.type}", stm)
            return
        if not isinstance(a, S.Var):
            self.fail(f"an operand that is not an atom: {a!r}", stm)
        if a.name not in scope:
            self.fail(f"{a.name} is used but not bound", stm)
        self.sizes_in_scope(a.type, scope, f"the type of {a.name}", stm)

    def stm(self, stm: S.Stm, scope: set, where: str):
        e = stm.exp
        if isinstance(e, T.SEGOPS):  # a binding's arrays may be rows bound by the bindings before it
            outer = set(scope)
            for b in e.ctx:
                for a in (b.width,) + tuple(b.arrs):
                    self.atom(a, outer, stm)
                outer |= {p.name for p in b.params}
            atoms = getattr(e, "neutral", ())
        else:
            atoms = exp_atoms(e)
        for a in atoms:
            self.atom(a, scope, stm)
        if isinstance(e, T.SEGOPS + (T.Guard,)) and not self.target:
            self.fail(f"a {type(e).__name__} in the source IR", stm)
        if self.target and isinstance(e, (S.Apply, S.Reduce, S.Scan)):
            self.fail(f"a {type(e).__name__} in the target IR", stm)
        types = self.pattern(stm)
        TABLE.rule(e)(self, e, stm, types, where)
        for inner in nested(e):
            inner_scope = set(scope)
            for p in inner.binds:
                self.well_formed(p.type, None, stm)
                self.bind_name(p.name, inner_scope, stm)
            for p in inner.binds:
                self.sizes_in_scope(p.type, inner_scope, f"the type of {p.name}", stm)
            for t in inner.ret:  # a lambda's result sizes may not name what its body binds
                self.sizes_in_scope(t, inner_scope, "a lambda's result type", stm)
            level = self.level_inside(e, inner, where, stm)
            self.body(inner.body, inner_scope, level)

    def pattern(self, stm: S.Stm) -> tuple:
        try:
            types = exp_types(stm.exp)
        except (TypeError, AttributeError, IndexError) as failure:
            self.fail(f"the expression has no type ({type(failure).__name__}: {failure})", stm)
        if len(types) != len(stm.pat):
            self.fail(f"{len(stm.pat)} variables bound to {len(types)} results", stm)
        for v, t in zip(stm.pat, types):
            if not same_shape(v.type, t):
                self.fail(f"{v.name} has type {v.type}, but its value has type {t}", stm)
        return types

    def level_inside(self, e, inner, where: str, stm: S.Stm) -> str:
        """Where the statements of a nested body run."""
        if isinstance(e, T.SEGOPS) and not inner.is_lambda:
            return GROUP if e.level == 0 else KERNEL
        return where

    # ---- expressions: the rules of TABLE, the checks of each class; `types` are the expression's ----

    def no_check(self, e, stm: S.Stm, types: tuple, where: str):
        """The classes whose atoms, pattern and nested bodies are all there is to check (done for every class)."""

    def binop(self, e: S.BinOp, stm: S.Stm, types: tuple, where: str):
        if e.x.type != e.y.type:
            self.fail(f"operands of {e.op} of types {e.x.type} and {e.y.type}", stm)
        if (e.op in COMPARISONS or e.op in ("&&", "||")) and e.type != BOOL:
            self.fail(f"{e.op} gives {e.type}, not bool", stm)

    def if_(self, e: S.If, stm: S.Stm, types: tuple, where: str):
        self.boolean(e.cond, stm, "the condition of an if")
        self.results(e.then, types, stm, "then")
        self.results(e.else_, types, stm, "else")

    def tuning_param(self, e: S.TuningParam, stm: S.Stm, types: tuple, where: str):
        self.i64(e.default, stm, f"the default of tuning parameter {e.name}")

    def assertion(self, e: S.Assert, stm: S.Stm, types: tuple, where: str):
        self.boolean(e.cond, stm, "the condition of an assertion")
        for a in e.values:
            if not (isinstance(a.type, Scalar) and a.type.is_int):
                self.fail(f"an assertion's message shows a value of type {a.type}", stm)

    def apply(self, e: S.Apply, stm: S.Stm, types: tuple, where: str):
        callee = self.earlier(e.fn)
        if callee is None:
            self.fail(f"a call of {e.fn}, which is not defined before it", stm)
        if len(callee.params) != len(e.args):
            self.fail(f"{e.fn} takes {len(callee.params)} arguments, but the call passes {len(e.args)}", stm)

    def loop(self, e: S.Loop, stm: S.Stm, types: tuple, where: str):
        if not (len(e.params) == len(e.init) == len(e.body.result)):
            self.fail(f"a loop of {len(e.params)} parameters, {len(e.init)} initial values and "
                      f"{len(e.body.result)} results", stm)
        if isinstance(e.form, S.ForLoop) and not (isinstance(e.form.bound.type, Scalar)
                                                  and e.form.bound.type.is_int):
            self.fail(f"a for loop whose bound has type {e.form.bound.type}", stm)
        if isinstance(e.form, S.WhileLoop) and len(e.form.cond.result) != 1:
            self.fail("a while loop whose condition has several results", stm)

    def map_or_filter(self, e, stm: S.Stm, types: tuple, where: str):
        self.soac(e, stm)
        self.elements(e.lam.params, e.arrs, stm)

    def reduce_or_scan(self, e, stm: S.Stm, types: tuple, where: str):
        self.soac(e, stm)
        self.operator(e.lam, e.neutral, stm)

    def redomap(self, e: S.Redomap, stm: S.Stm, types: tuple, where: str):
        self.soac(e, stm)
        self.operator(e.red, e.neutral, stm)
        self.elements(e.map_lam.params, e.arrs, stm)

    def scanomap(self, e: S.Scanomap, stm: S.Stm, types: tuple, where: str):
        self.soac(e, stm)
        self.operator(e.scan, e.neutral, stm)
        if e.post is not None:
            self.post_map(e, stm)
        self.elements(e.map_lam.params, e.arrs, stm)

    def hist(self, e: S.Hist, stm: S.Stm, types: tuple, where: str):
        self.i64(e.width, stm, "the width")
        self.operator(e.lam, e.neutral, stm)
        arrays = (e.dest, e.idxs, e.vals)
        if not all(isinstance(a.type, Array) and a.type.rank == 1 for a in arrays):
            self.fail("a histogram over arrays that are not one-dimensional", stm)
        elif e.idxs.type.elem != I64 or e.vals.type.elem != e.dest.type.elem:
            self.fail(f"a histogram of {e.dest.type} with indices {e.idxs.type} and values {e.vals.type}", stm)

    def segmap(self, e: T.SegMap, stm: S.Stm, types: tuple, where: str):
        self.segop(e, stm, where, None, len(types))

    def segred(self, e: T.SegRed, stm: S.Stm, types: tuple, where: str):
        self.segop(e, stm, where, e.red, len(e.neutral))

    def segscan(self, e: T.SegScan, stm: S.Stm, types: tuple, where: str):
        self.segop(e, stm, where, e.scan, len(e.neutral))

    def earlier(self, name: str):
        for f in self.prog.funs:
            if f.name == self.function:
                return None
            if f.name == name:
                return f
        return None

    def boolean(self, a, stm, what: str):
        if a.type != BOOL:
            self.fail(f"{what} has type {a.type}, not bool", stm)

    def i64(self, a, stm, what: str):
        if a.type != I64:
            self.fail(f"{what} has type {a.type}, not i64", stm)

    def results(self, body: S.Body, types: tuple, stm, what: str):
        if len(body.result) != len(types):
            self.fail(f"the {what} branch gives {len(body.result)} results for {len(types)} variables", stm)

    def soac(self, e, stm: S.Stm):
        """The width and the arrays of a SOAC (its functions are checked by its rule)."""
        self.i64(e.width, stm, "the width")
        for a in e.arrs:
            if not isinstance(a.type, Array):
                self.fail(f"{a.name} of type {a.type} is not an array", stm)

    def post_map(self, e: S.Scanomap, stm):
        if len(e.map_lam.ret) != len(e.neutral):
            self.fail(f"a scan with a post-map whose function gives {len(e.map_lam.ret)} results for "
                      f"{len(e.neutral)} neutral elements", stm)
        if tuple(p.type for p in e.post.params) != tuple(a.type for a in e.neutral):
            self.fail("a post-map whose parameters do not take the scan's prefixes", stm)

    def operator(self, op: S.Lambda, neutral: tuple, stm):
        if len(op.params) != 2 * len(neutral) or len(op.body.result) != len(neutral):
            self.fail(f"an operator of {len(op.params)} parameters and {len(op.body.result)} results for "
                      f"{len(neutral)} neutral elements", stm)

    def elements(self, params: tuple, arrs: tuple, stm):
        if len(params) != len(arrs):
            self.fail(f"{len(params)} parameters for {len(arrs)} arrays", stm)
        for p, a in zip(params, arrs):
            if isinstance(a.type, Array) and not same_shape(p.type, a.type.row()):
                self.fail(f"{p.name} of type {p.type} binds the rows of {a.name} of type {a.type}", stm)

    def segop(self, e, stm: S.Stm, where: str, operator, produced: int):
        """A segop's level, context and body; `operator` (a segred's or segscan's, else None) combines the
        `produced` values of its body."""
        if e.level not in (0, 1):
            self.fail(f"a segop at level {e.level}", stm)
        if e.level == 1 and where != HOST:
            self.fail("a level-1 segop inside a kernel", stm)
        if e.level == 0 and where != KERNEL:
            self.fail(f"a level-0 segop at the {where} level (only a level-1 segmap's body holds them)", stm)
        if not e.ctx:
            self.fail("a segop without a context", stm)
        for b in e.ctx:
            self.i64(b.width, stm, "a context's width")
            self.elements(b.params, b.arrs, stm)
        if operator is not None:
            self.operator(operator, e.neutral, stm)
        if len(e.body.result) != produced:
            self.fail(f"a segop body with {len(e.body.result)} results for {produced} values", stm)

    def guard(self, e: T.Guard, stm: S.Stm, types: tuple, where: str):
        if where != HOST:
            self.fail(f"a guard at the {where} level", stm)
        if e.kind not in ("outer", "intra"):
            self.fail(f"a guard of kind {e.kind!r}", stm)
        parsed = parse_threshold_name(e.threshold)
        if parsed is None or parsed[:2] != (self.function, e.kind):
            self.fail(f"guard {e.threshold!r} of kind {e.kind} in entry {self.function} "
                      f"(expected {threshold_name(self.function, e.kind, 0)[:-1]}<k>)", stm)
        k = parsed[2]
        if k in self.thresholds:
            self.fail(f"threshold number {k} is used twice ({self.thresholds[k]} and {e.threshold})", stm)
        self.thresholds[k] = e.threshold
        if not e.par:
            self.fail("a guard without a degree of parallelism", stm)
        for a in e.par:
            self.i64(a, stm, "a factor of the degree of parallelism")
        self.results(e.then, types, stm, "then")
        self.results(e.else_, types, stm, "else")


# Every class of the target IR has its rule: the verifier checks source and target programs alike (which
# classes each may hold is checked before, in `stm`).
TABLE = nodes.Table(f"{__name__}.TABLE", "target", {
    # no check of their own: their atoms, pattern and types are checked for every statement
    **dict.fromkeys((S.AtomExp, S.UnOp, S.PrimCall, S.Index, S.Update, S.ArrayLit, S.Concat, S.Rotate, S.Reshape,
                     S.Scatter, S.Iota, S.Replicate, S.Rearrange), _Verifier.no_check),
    S.BinOp: _Verifier.binop, S.If: _Verifier.if_, S.TuningParam: _Verifier.tuning_param,
    S.Assert: _Verifier.assertion, S.Apply: _Verifier.apply, S.Loop: _Verifier.loop,
    S.Map: _Verifier.map_or_filter, S.Filter: _Verifier.map_or_filter,
    S.Reduce: _Verifier.reduce_or_scan, S.Scan: _Verifier.reduce_or_scan,
    S.Redomap: _Verifier.redomap, S.Scanomap: _Verifier.scanomap, S.Hist: _Verifier.hist,
    T.SegMap: _Verifier.segmap, T.SegRed: _Verifier.segred, T.SegScan: _Verifier.segscan, T.Guard: _Verifier.guard,
})


def same_shape(a, b) -> bool:
    """The same kind of type, element type and rank: sizes may differ (they are names, renamed apart)."""
    if isinstance(a, Array) and isinstance(b, Array):
        return a.elem == b.elem and a.rank == b.rank
    return type(a) is type(b) and a == b


__all__ = ["IRError", "verify_source", "verify_target"]
