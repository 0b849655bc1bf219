"""The tables of rules over expression classes (ir/nodes.py): every table that incflat's modules make covers its IR,
and the check names each table that a new expression class lacks, and what is wrong with a table as it is made."""

import dataclasses
import importlib
import pkgutil

import pytest

import incflat

from incflat.ir import nodes
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.types import I64

# Every module of incflat, loaded: a table registers itself in nodes.TABLES as its module loads.
for module in pkgutil.walk_packages(incflat.__path__, "incflat."):
    if not module.name.endswith("__main__"):
        importlib.import_module(module.name)

@dataclasses.dataclass(frozen=True)
class Planted:
    """An expression form that no table knows."""
    x: S.Atom


@pytest.fixture
def registry():
    """The tables and IRs as they were before the test."""
    tables, irs = list(nodes.TABLES), {name: list(classes) for name, classes in nodes.IRS.items()}
    yield
    nodes.TABLES[:] = tables
    assert nodes.IRS == irs


def rules_for(ir: str, leave_out=()) -> dict:
    return {cls: (lambda e: e) for cls in nodes.IRS[ir] if cls not in leave_out}


def test_every_table_is_complete():
    assert nodes.TABLES  # the traversal, the analyses, the printer and the renamer at least
    assert nodes.problems() == []


def test_tables_cover_what_the_ir_modules_list():
    assert set(nodes.IRS["source"]) == set(S.Exp.__args__)
    assert set(nodes.IRS["target"]) == set(S.Exp.__args__) | set(T.EXPS)


@pytest.mark.parametrize("ir", ["source", "target"])
def test_a_planted_class_is_named_by_every_table_of_its_ir(ir):
    before = {name: list(classes) for name, classes in nodes.IRS.items()}
    covering = [t for t in nodes.TABLES if t.ir == ir or (ir == "source" and t.ir == "target")]
    assert covering
    with nodes.planted(Planted, ir):
        problems = nodes.problems()
        for table in covering:
            assert table.missing() == [Planted]
            assert table.problem() == f"{table.name} has no rule for Planted"
            assert table.problem() in problems
        assert len(problems) == len(covering)  # one sentence a table, and none for the other IR's tables
    assert nodes.IRS == before
    assert nodes.problems() == []


def test_a_table_that_lacks_a_class_is_refused(registry):
    with pytest.raises(nodes.IncompleteTable) as refused:
        nodes.Table("test.lacking", "source", rules_for("source", leave_out=(S.Map, S.Loop)))
    assert str(refused.value) == "test.lacking has no rule for Loop, Map"  # in the IR's order
    with pytest.raises(nodes.IncompleteTable, match="^test.source_only has no rule for SegMap, SegRed, SegScan, "
                                                    "Guard$"):
        nodes.Table("test.source_only", "target", rules_for("source"))


def test_a_class_with_a_rule_and_a_reason_for_none_is_refused(registry):
    with pytest.raises(nodes.IncompleteTable) as refused:
        nodes.Table("test.both", "source", rules_for("source"), absent={S.Apply: "inlined"})
    assert str(refused.value) == "test.both has a rule for Apply, listed as absent too"


def test_an_entry_for_a_class_outside_the_ir_is_refused(registry):
    with pytest.raises(nodes.IncompleteTable) as refused:
        nodes.Table("test.foreign_rule", "source", {**rules_for("source"), T.SegMap: lambda e: e})
    assert str(refused.value) == "test.foreign_rule has entries for SegMap, which are not expressions of the source IR"
    with pytest.raises(nodes.IncompleteTable) as refused:
        nodes.Table("test.foreign_absent", "source", rules_for("source"), absent={Planted: "never made"})
    assert str(refused.value) == ("test.foreign_absent has entries for Planted, which are not expressions of the "
                                  "source IR")


def test_a_rule_is_looked_up_by_class_and_a_missing_one_names_the_table(registry):
    table = nodes.Table("test.lookup", "source", rules_for("source", leave_out=(S.Apply,)),
                        absent={S.Apply: "inlined before this table is used"})
    atom = S.AtomExp(S.Const(1, I64))
    assert table.rule(atom)(atom) is atom
    with pytest.raises(TypeError, match=r"^test.lookup: no rule for Apply \(inlined before this table is used\)$"):
        table.rule(S.Apply("f", (), ()))
    with pytest.raises(TypeError, match=r"^test.lookup: no rule for Planted \(not an expression of the source IR\)$"):
        table.rule(Planted(S.Const(1, I64)))
