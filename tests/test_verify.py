"""The IR verifiers (ir/verify.py, codegen.program.verify_generated) and the pipeline that runs them after every
stage: they accept what the compiler makes, and catch IR broken on purpose, naming the stage."""

import dataclasses
import pathlib

import pytest

from conftest import UNSUPPORTED
from incflat import pipeline
from incflat.cli import main
from incflat.codegen.program import verify_generated
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.errors import Unsupported
from incflat.ir.types import BOOL, I64
from incflat.ir.verify import IRError, verify_source, verify_target

ROOT = pathlib.Path(__file__).resolve().parent.parent
MATMUL = (ROOT / "futhark_examples" / "matmul.fut").read_text()
EXAMPLES = [*sorted((ROOT / "tests" / "programs").glob("*.fut")), *sorted((ROOT / "futhark_examples").glob("*.fut"))]
ROWS = "entry main [n][m] (xss: [n][m]f32): [n]f32 = map (\\xs -> reduce (+) 0 xs) xss\n"
LOOP = "entry main [n] (xs: [n]i64) (k: i64): [n]i64 = loop ys = xs for i < k do map (+ i) ys\n"


def with_body(prog, body):
    (f,) = prog.funs
    return dataclasses.replace(prog, funs=(dataclasses.replace(f, body=body),))


def target(source=ROWS):
    return pipeline.target_program(source, "t.fut")


def stages_reached(text: str, filename: str) -> tuple[list, Unsupported | None]:
    """Runs the pipeline one stage at a time, verifying each stage's IR: the stages that ran, and the Unsupported
    error that stopped the next one (None where every stage ran)."""
    first, *rest = pipeline.STAGE_NAMES
    ir, ran = pipeline.compile(text, filename, until=first, verify_stages=True), [first]
    for stage in rest:
        try:
            ir = pipeline.run(ir, after=ran[-1], until=stage, verify_stages=True)
        except Unsupported as e:
            return ran, e
        ran.append(stage)
    return ran, None


def test_every_stage_of_every_example_verifies():
    """Every stage that a program reaches: all of them, or, for the programs the backend cannot compile yet, every
    one before the stage that raises the expected Unsupported (prune_unsupported where no version is left,
    generate where the program has one)."""
    for path in EXAMPLES:
        ran, error = stages_reached(path.read_text(), str(path))
        if path.stem not in UNSUPPORTED:
            assert error is None, f"{path.name}: {error}"
            continue
        assert error is not None and error.what == UNSUPPORTED[path.stem], f"{path.name}: {error}"
        failed = pipeline.STAGE_NAMES[len(ran)]
        assert failed in ("prune_unsupported", "generate"), f"{path.name}: {failed} raised {error}"


# ---- the source IR ----

def test_an_unbound_variable_is_caught():
    prog = pipeline.source_program(LOOP, "t.fut")
    (f,) = prog.funs
    ghost = S.Var("ghost_99", I64)
    stm = S.Stm((S.Var("extra_98", I64),), S.BinOp("+", ghost, ghost, I64))
    with pytest.raises(IRError, match="ghost_99 is used but not bound"):
        verify_source(with_body(prog, S.Body((stm,) + f.body.stms, f.body.result)), "test")


def test_a_name_bound_twice_is_caught():
    prog = pipeline.source_program(LOOP, "t.fut")
    (f,) = prog.funs
    k = f.params[1]
    stm = S.Stm((k,), S.AtomExp(k))
    with pytest.raises(IRError, match=f"{k.name} is bound twice"):
        verify_source(with_body(prog, S.Body((stm,) + f.body.stms, f.body.result)))


def test_a_pattern_of_the_wrong_shape_is_caught():
    prog = pipeline.source_program(LOOP, "t.fut")
    (f,) = prog.funs
    k = f.params[1]
    stm = S.Stm((S.Var("b_97", BOOL),), S.AtomExp(k))
    with pytest.raises(IRError, match="b_97 has type bool, but its value has type i64"):
        verify_source(with_body(prog, S.Body((stm,) + f.body.stms, f.body.result)))


def test_target_constructs_in_the_source_ir_are_caught():
    with pytest.raises(IRError, match="expected a source program"):
        verify_source(target())
    with pytest.raises(IRError, match="a Guard in the source IR"):
        verify_source(S.Program(target().funs, "t.fut"))


# ---- the target IR ----

def test_the_compilers_target_ir_verifies():
    verify_target(target(MATMUL))
    verify_target(target(LOOP))


def guard_of(prog) -> tuple:
    (f,) = prog.funs
    (stm,) = [s for s in f.body.stms if isinstance(s.exp, T.Guard)]
    return f, stm


def replace_guard(prog, **changes):
    f, stm = guard_of(prog)
    new = S.Stm(stm.pat, dataclasses.replace(stm.exp, **changes), stm.loc)
    return with_body(prog, S.Body(tuple(new if s is stm else s for s in f.body.stms), f.body.result))


def test_a_threshold_named_against_its_kind_or_entry_is_caught():
    prog = target()
    with pytest.raises(IRError, match="expected main.suff_intra_par_<k>"):
        verify_target(replace_guard(prog, kind="intra"))
    with pytest.raises(IRError, match="guard 'other.suff_outer_par_0' of kind outer in entry main"):
        verify_target(replace_guard(prog, threshold="other.suff_outer_par_0"))
    with pytest.raises(IRError, match="a guard of kind 'middle'"):
        verify_target(replace_guard(prog, kind="middle"))


def test_a_threshold_number_used_twice_is_caught():
    prog = target()
    f, stm = guard_of(prog)
    inner = [s for s in stm.exp.else_.stms if isinstance(s.exp, T.Guard)][0]
    renamed = S.Stm(inner.pat, dataclasses.replace(inner.exp, threshold="main.suff_intra_par_0"), inner.loc)
    else_ = S.Body(tuple(renamed if s is inner else s for s in stm.exp.else_.stms), stm.exp.else_.result)
    with pytest.raises(IRError, match="threshold number 0 is used twice"):
        verify_target(replace_guard(prog, else_=else_))


def test_a_guard_whose_branch_gives_too_few_results_is_caught():
    prog = target()
    _, stm = guard_of(prog)
    with pytest.raises(IRError, match="the then branch gives 0 results for 1 variables"):
        verify_target(replace_guard(prog, then=S.Body(stm.exp.then.stms, ())))


def test_segops_at_the_wrong_level_are_caught():
    prog = target()
    _, stm = guard_of(prog)
    (top,) = stm.exp.then.stms  # e_top: a level-1 segmap, a thread per row
    inside = dataclasses.replace(top.exp, body=S.Body(top.exp.body.stms + (top,), top.exp.body.result))
    with pytest.raises(IRError, match="a level-1 segop inside a kernel"):
        verify_target(replace_guard(prog, then=S.Body((S.Stm(top.pat, inside, top.loc),), stm.exp.then.result)))
    at_host = S.Stm(top.pat, dataclasses.replace(top.exp, level=0), top.loc)
    with pytest.raises(IRError, match="a level-0 segop at the host level"):
        verify_target(replace_guard(prog, then=S.Body((at_host,), stm.exp.then.result)))


def test_a_context_binding_rows_of_the_wrong_type_is_caught():
    prog = target()
    _, stm = guard_of(prog)
    (top,) = stm.exp.then.stms
    (binding,) = top.exp.ctx
    bad = T.Binding(binding.width, (S.Var("row_96", I64),), binding.arrs)
    broken = S.Stm(top.pat, dataclasses.replace(top.exp, ctx=(bad,)), top.loc)
    with pytest.raises(IRError, match="row_96 of type i64 binds the rows of"):
        verify_target(replace_guard(prog, then=S.Body((broken,), stm.exp.then.result)))


# ---- the generated program ----

def test_the_generated_program_verifies_and_a_duplicate_kernel_is_caught():
    generated = pipeline.compile(MATMUL, "matmul.fut", verify_stages=True)
    verify_generated(generated)
    twice = dataclasses.replace(generated, kernels=generated.kernels + generated.kernels[:1])
    with pytest.raises(IRError, match="kernel names used twice: segmap_0"):
        verify_generated(twice, "generate")
    with pytest.raises(IRError, match="the host code is not valid Python"):
        verify_generated(dataclasses.replace(generated, host_code="def entry_main(ctx:\n"))


# ---- the pipeline runs them after every stage ----

def breaking(stage: pipeline.Stage) -> pipeline.Stage:
    """The stage, followed by dropping the first statement of each function (whose result is then unbound)."""
    def run(ir, **options):
        ir = stage.run(ir, **options)
        funs = tuple(dataclasses.replace(f, body=S.Body(f.body.stms[1:], f.body.result)) for f in ir.funs)
        return dataclasses.replace(ir, funs=funs)
    return dataclasses.replace(stage, run=run)


def test_a_stage_that_breaks_the_ir_is_named(monkeypatch):
    stages = tuple(breaking(s) if s.name == "hoist_invariants" else s for s in pipeline.STAGES)
    monkeypatch.setattr(pipeline, "STAGES", stages)
    with pytest.raises(IRError, match="after stage hoist_invariants: in main: .* is used but not bound"):
        pipeline.compile(LOOP, "t.fut", verify_stages=True)


def test_the_command_line_reports_a_broken_stage_without_a_traceback(monkeypatch, tmp_path, capsys):
    path = tmp_path / "loop.fut"
    path.write_text(LOOP)
    stages = tuple(breaking(s) if s.name == "flatten" else s for s in pipeline.STAGES)
    monkeypatch.setattr(pipeline, "STAGES", stages)
    assert main(["compile", "--verify", str(path), "-o", str(tmp_path / "loop")]) == 70
    err = capsys.readouterr().err
    assert err.startswith("incflat: internal compiler error: after stage flatten: in main:") and "Traceback" not in err
    assert not (tmp_path / "loop").exists()


def test_the_stages_compose():
    for before, after in zip(pipeline.STAGES, pipeline.STAGES[1:]):
        assert before.gives is after.takes, (before.name, after.name)
    assert pipeline.STAGES[0].takes is pipeline.SourceText and pipeline.STAGES[-1].gives is pipeline.GeneratedProgram
    assert len(set(pipeline.STAGE_NAMES)) == len(pipeline.STAGES)
