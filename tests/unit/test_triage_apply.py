"""``python -m interop.triage apply`` (issue 44): a proposal is applied to its table folder only,
checked whole before anything is written, then every file or none. Before: it wrote or deleted
any path a proposal named, wrote before validating (invalid rows left the table unloadable, a
failure on the second file left the first written), and a deeply nested proposal was a
RecursionError traceback."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from interop.cases import failure_table as ft
from interop.triage import main

ROW = {"source": "operator", "operator": "Slice", "phase": "forward", "category": "aidge_error",
       "quote": "Slice: Step (-1) is negative, we must have End (", "attribution": None, "aidge": ">=0.10.0.post3",
       "backends": ["cpu"], "note": "a test row", "cases": ["Pad:*"]}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def table(tmp_path) -> Path:
    """A table of two files, each one row."""
    root = tmp_path / "table"
    (root / "0.10.1").mkdir(parents=True)
    ft.write_table_file(root / "0.10.1" / "operator.aidge_error.json", "0.10.1", [ROW])
    ft.write_table_file(root / "0.10.1" / "model.aidge_error.json", "0.10.1", [dict(ROW, source="model")])
    return root


def _texts(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _apply(tmp_path: Path, table: Path, files: dict, capsys, **extra) -> tuple[int, str]:
    proposal = tmp_path / "proposal.json"
    proposal.write_text(json.dumps({"table_dir": str(table), "files": files, **extra}))
    code = main(["apply", str(proposal), "--table", str(table)])
    err = capsys.readouterr().err
    return code, err


def _change(path: Path, rows: list[dict], release: str = "0.10.1") -> list[str]:
    old = path.read_text() if path.exists() else ""
    return [_sha(old), ft.format_rows(release, rows)]


def _one_line_naming(err: str, proposal: Path, key: str) -> None:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"error: {proposal}: files[{key!r}]"), err


def test_a_path_outside_the_table_is_never_written_nor_deleted(tmp_path, table, capsys):
    victim = tmp_path / "victim.json"
    code, err = _apply(tmp_path, table, {str(victim): [_sha(""), "{}"]}, capsys)
    assert code == 2 and not victim.exists()  # before: written
    _one_line_naming(err, tmp_path / "proposal.json", str(victim))
    assert "not a file of the table" in err
    victim.write_text("keep")
    dotdot = str(table / "0.10.1" / ".." / ".." / "victim.json")
    code, err = _apply(tmp_path, table, {dotdot: [_sha("keep"), ""]}, capsys)
    assert code == 2 and victim.read_text() == "keep"  # before: deleted
    _one_line_naming(err, tmp_path / "proposal.json", dotdot)


def test_a_release_folder_that_is_a_link_out_is_refused(tmp_path, table, capsys):
    outside = tmp_path / "outside"
    outside.mkdir()
    (table / "0.9.1").symlink_to(outside)
    target = table / "0.9.1" / "operator.aidge_error.json"
    code, err = _apply(tmp_path, table, {str(target): [_sha(""), ft.format_rows("0.9.1", [dict(ROW, aidge="==0.9.1")])]},
                       capsys)
    assert code == 2 and not list(outside.iterdir())
    _one_line_naming(err, tmp_path / "proposal.json", str(target))
    assert "0.9.1 is a symbolic link to" in err


def test_rows_the_table_refuses_are_refused_before_anything_is_written(tmp_path, table, capsys):
    before = _texts(table)
    first = table / "0.10.1" / "model.aidge_error.json"
    second = table / "0.10.1" / "operator.aidge_error.json"
    files = {str(first): _change(first, [dict(ROW, source="model", note="edited")]),
             str(second): _change(second, [dict(ROW, phase="sideways")])}
    code, err = _apply(tmp_path, table, files, capsys)
    assert code == 2 and _texts(table) == before  # before: the first file written, the table unloadable
    _one_line_naming(err, tmp_path / "proposal.json", str(second))
    assert "its rows do not load" in err and "row 0" in err
    ft.forget_loaded()
    assert len(ft.load_table(table)) == 2


def test_a_deeply_nested_proposal_or_file_is_one_line_not_a_traceback(tmp_path, table, capsys):
    deep = "[" * 50_000 + "]" * 50_000
    proposal = tmp_path / "proposal.json"
    proposal.write_text('{"table_dir": ' + json.dumps(str(table)) + ', "files": {}, "x": ' + deep + "}")
    assert main(["apply", str(proposal), "--table", str(table)]) == 2  # before: RecursionError
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nested" in err and str(proposal) in err
    target = table / "0.10.1" / "model.aidge_error.json"
    code, err = _apply(tmp_path, table, {str(target): [_sha(target.read_text()), deep]}, capsys)
    assert code == 2 and "nested" in err
    _one_line_naming(err, tmp_path / "proposal.json", str(target))


def test_bad_shapes_are_named_by_key(tmp_path, table, capsys):
    target = table / "0.10.1" / "model.aidge_error.json"
    code, err = _apply(tmp_path, table, {str(target): "not a pair"}, capsys)
    assert code == 2
    _one_line_naming(err, tmp_path / "proposal.json", str(target))
    other = tmp_path / "other_table"
    other.mkdir()
    proposal = tmp_path / "proposal.json"
    proposal.write_text(json.dumps({"table_dir": str(other), "files": {}}))
    assert main(["apply", str(proposal), "--table", str(table)]) == 2
    err = capsys.readouterr().err
    assert f"key 'table_dir': made against the table {other}, not {table}" in err and err.count("\n") == 1


def test_a_good_proposal_writes_every_file_and_the_table_loads(tmp_path, table, capsys):
    edited = table / "0.10.1" / "model.aidge_error.json"
    removed = table / "0.10.1" / "operator.aidge_error.json"
    added = table / "0.10.0.post3" / "operator.aidge_error.json"
    files = {str(edited): _change(edited, [dict(ROW, source="model", note="edited")]),
             str(removed): [_sha(removed.read_text()), ""],
             str(added): _change(added, [dict(ROW, aidge="==0.10.0.post3")], "0.10.0.post3")}
    code, err = _apply(tmp_path, table, files, capsys)
    assert code == 0, err
    assert not removed.exists() and json.loads(edited.read_text())["rows"][0]["note"] == "edited"
    ft.forget_loaded()
    assert sorted(e.aidge for e in ft.load_table(table)) == ["==0.10.0.post3", ">=0.10.0.post3"]
    assert not [p for p in table.rglob(".*")]  # no temporary left
