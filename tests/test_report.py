"""futhark_examples/report.py render: the table and chart of docs/benchmarks.md redrawn from the committed raw
results, as that page says they can be; it replaces no file it was not told to."""

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "benchmark-results" / "report-h200-2026-11-27-8465bfa" / "run1"


@pytest.fixture(scope="module")
def report():
    spec = importlib.util.spec_from_file_location("report", ROOT / "futhark_examples" / "report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_results_render_as_the_documented_table(report, tmp_path):
    table, chart = tmp_path / "TABLE.md", tmp_path / "CHART.png"
    assert report.main(["render", "--out", str(RESULTS), "--markdown", str(table), "--chart", str(chart)]) == 0
    rows = table.read_text().splitlines()
    assert rows[0].startswith("| program | dataset | Futhark default (H200) | MF | IF | AIF |")
    assert len(rows) == 2 + len(report.FUTHARK)  # every paper dataset of the suite
    (small,) = [r for r in rows if r.startswith("| locvolcalib | small |")]
    assert "36,441 ± 574" in small  # run 1's AIF, as docs/benchmarks.md shows it
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    documented = (ROOT / "docs" / "benchmarks.md").read_text()
    assert all(row in documented for row in rows[2:]), "docs/benchmarks.md's table is run 1's"


def test_render_replaces_no_file_unless_told(report, tmp_path):
    table = tmp_path / "TABLE.md"
    table.write_text("mine")
    with pytest.raises(SystemExit, match="exists"):
        report.main(["render", "--out", str(RESULTS), "--markdown", str(table)])
    assert table.read_text() == "mine"
    report.main(["render", "--out", str(RESULTS), "--markdown", str(table), "--force"])
    assert table.read_text().startswith("| program |")


def test_render_of_a_folder_without_results_says_so(report, tmp_path):
    with pytest.raises(SystemExit, match="no results in"):
        report.main(["render", "--out", str(tmp_path / "nothing")])
