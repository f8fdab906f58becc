"""Issue 49: the summary grid of the published site draws with one benchmarked commit, and a
panel without any figure says so (tools/case_index.py mends asv's summarygrid.js);
check_site.py counts what each panel draws."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tools import case_index, check_site

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


def _git(repo, *args):
    import subprocess

    return subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def test_a_commit_benchmarked_on_a_branch_is_graphed_on_that_branch(tmp_path):
    """asv graphs the configured branches only ("Couldn't find <hash> in branches (main)"): the
    publish step adds the local branch that holds the commit; a commit on no branch is named."""
    import json

    from tools import publish_offline

    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "f").write_text("1\n")
    _git(repo, "add", "f")
    _git(repo, "commit", "-qm", "one")
    on_main = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-qb", "doc-blank")
    (repo / "f").write_text("1\n\n")
    _git(repo, "commit", "-qam", "a blank line")
    on_branch = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "main")
    results = repo / "results" / "asv" / "machine"
    results.mkdir(parents=True)
    for commit in (on_main, on_branch, "0123456789abcdef0123456789abcdef01234567"):
        (results / f"{commit[:8]}-env.json").write_text(json.dumps({"commit_hash": commit}))
    (results / "machine.json").write_text("{}")
    commits = publish_offline.benchmarked_commits(repo / "results" / "asv")
    assert on_branch in commits and len(commits) == 3
    extra, orphans = publish_offline.branches_to_graph(repo, commits, ["main"])
    assert extra == ["doc-blank"] and orphans == ["0123456789abcdef0123456789abcdef01234567"]
    (repo / "asv.conf.json").write_text('// a comment\n{"repo": ".", "branches": ["main"],\n'
                                        ' "project_url": "https://x//y", "results_dir": "results/asv"}\n')
    path = publish_offline.write_branch_config(repo)
    try:
        assert path.parent == repo and json.loads(path.read_text())["branches"] == ["main", "doc-blank"]
    finally:
        path.unlink()
    # every benchmarked commit on main: nothing to add
    _git(repo, "merge", "-q", "doc-blank")
    assert publish_offline.branches_to_graph(repo, {on_main, on_branch}, ["main"]) == ([], [])
