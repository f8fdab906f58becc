"""Issue 49: the summary grid of the published site draws with one benchmarked commit, and a
panel without any figure says so (benchmarks/case_index.py mends asv's summarygrid.js);
check_site.py counts what each panel draws."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmarks import case_index, check_site

asv = pytest.importorskip("asv")
ASV_GRID = Path(asv.__file__).parent / "www" / "summarygrid.js"


def test_asvs_grid_gets_a_dot_per_commit_and_a_note_where_no_figure(tmp_path):
    shutil.copy(ASV_GRID, tmp_path / "summarygrid.js")
    assert case_index.patch_summary_grid(tmp_path) is True
    text = (tmp_path / "summarygrid.js").read_text()
    assert "points: {show: true" in text  # one commit: a dot, not an empty box
    assert text.count("no measurement") == 2  # a 404 and an all-null summary both say so
    assert case_index.patch_summary_grid(tmp_path) is False  # idempotent
    assert (tmp_path / "summarygrid.js").read_text() == text


def test_an_unknown_grid_fails_loudly_and_no_grid_is_left_alone(tmp_path):
    assert case_index.patch_summary_grid(tmp_path) is False  # no asv site here: nothing to mend
    (tmp_path / "summarygrid.js").write_text("$(document).ready(function () {});\n")
    with pytest.raises(case_index.GridPatchError):
        case_index.patch_summary_grid(tmp_path)


def test_a_panel_has_a_figure_when_its_summary_has_a_value(tmp_path):
    summary = tmp_path / "graphs" / "summary"
    summary.mkdir(parents=True)
    (summary / "a.time.json").write_text("[[1, 0.5], [2, null]]")
    (summary / "b.time.json").write_text("[[1, null]]")
    assert check_site._summary_has_figure(tmp_path, "a.time") == 1
    assert check_site._summary_has_figure(tmp_path, "b.time") == 0
    assert check_site._summary_has_figure(tmp_path, "c.time") == 0
