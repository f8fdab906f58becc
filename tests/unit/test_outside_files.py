"""Files outside the folders the tools own (issue 44): a run directory's ``records.d/<session>``
link, a ``records.jsonl`` link, a FIFO in place of a file. Before: ``--merge`` and ``python -m
interop.records check`` read and then deleted every ``*.jsonl`` of the folder a session link
pointed to, copied an outside ``records.jsonl`` into the merged run, and hung on a FIFO. Now
each is a named problem (path and why); nothing outside is read, written or deleted."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interop.reading import UnsafeInputError, confined, confined_json_lines

ROOT = Path(__file__).resolve().parents[2]


def _record(nodeid: str, outcome: str = "passed") -> dict:
    return {"schema": 1, "event": "record", "nodeid": nodeid, "outcome": outcome, "time": "2026-01-01T00:00:00",
            "reports": [{"when": "call", "status": outcome, "duration": 0.0}]}


def _session(passed: int, **extra) -> dict:
    counts = {"passed": passed, "failed": 0, "error": 0, "skipped": 0, "xfailed": 0, "xpassed": 0}
    return {"schema": 1, "complete": True, "ended": "ran to its end", "pytest_counts": counts,
            "versions": {"torch": "2.13.0", "aidge_core": "0.10.1"}, "shard": None, "backend": "cpu", **extra}


def _run_dir(path: Path, nodeids: list[str], **session) -> Path:
    path.mkdir(parents=True)
    (path / "records.jsonl").write_text("".join(json.dumps(_record(n)) + "\n" for n in nodeids))
    (path / "session.json").write_text(json.dumps(_session(len(nodeids), **session)))
    return path


def _outside_parts(tmp_path: Path) -> tuple[Path, str]:
    """A folder outside every run, holding a ``*.jsonl`` that looks like a part file."""
    outside = tmp_path / "precious"
    outside.mkdir()
    text = json.dumps(_record("outside.py::test_not_yours")) + "\n"
    (outside / "notes.jsonl").write_text(text)
    return outside, text


def _check(directory: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "interop.records", "check", str(directory)], env=env,
                          capture_output=True, text=True, timeout=timeout)


# ---------------------------------------------------------------------------------------
# the rule
# ---------------------------------------------------------------------------------------
def test_the_rule_refuses_links_out_links_as_files_fifos_folders_and_dot_dot(tmp_path):
    run = tmp_path / "run"
    (run / "sub").mkdir(parents=True)
    (run / "sub" / "a.jsonl").write_text("{}\n")
    outside, _ = _outside_parts(tmp_path)
    (run / "inner").symlink_to(run / "sub")  # a folder link that stays inside: allowed
    assert confined(run / "inner" / "a.jsonl", run) == run / "inner" / "a.jsonl"
    (run / "out").symlink_to(outside)
    (run / "link.jsonl").symlink_to(run / "sub" / "a.jsonl")
    os.mkfifo(run / "pipe.jsonl")
    refused = {
        run / "out" / "notes.jsonl": "out is a symbolic link to",
        run / "link.jsonl": "a symbolic link (to",
        run / "pipe.jsonl": "a FIFO (named pipe), not a regular file",
        run / "sub": "a directory, not a regular file",
        run / ".." / "precious" / "notes.jsonl": "outside",
    }
    for path, why in refused.items():
        with pytest.raises(UnsafeInputError) as err:
            confined(path, run)
        assert why in str(err.value) and str(err.value).startswith(str(path)), str(err.value)
    # the root itself may be a link (results/latest): the caller's choice
    (tmp_path / "latest").symlink_to(run)
    assert confined(tmp_path / "latest" / "sub" / "a.jsonl", tmp_path / "latest")


def test_jsonl_is_read_a_bounded_line_at_a_time(tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_bytes(b'{"a": 1}\n' + b'{"b": "' + b"x" * 5000 + b'"}\n' + b'{"c": 3}\n')
    problems: list[str] = []
    got = list(confined_json_lines(path, tmp_path, problems, max_line_bytes=1000))
    assert got == [(1, {"a": 1}), (3, {"c": 3})]
    assert problems == [f"{path}:2: longer than 1,000 bytes: skipped"]


# ---------------------------------------------------------------------------------------
# python -m interop.records check
# ---------------------------------------------------------------------------------------
def test_check_neither_reads_nor_deletes_the_folder_a_session_link_points_to(tmp_path):
    run = _run_dir(tmp_path / "run", ["t.py::test_one"])
    outside, text = _outside_parts(tmp_path)
    (run / "records.d").mkdir()
    (run / "records.d" / "s-1").symlink_to(outside)
    proc = _check(run)
    assert (outside / "notes.jsonl").read_text() == text  # before: read, then deleted
    assert "test_not_yours" not in (run / "records.jsonl").read_text()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"PROBLEM {run / 'records.d' / 's-1' / 'notes.jsonl'}: records.d/s-1 is a symbolic link to" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_check_names_a_records_d_that_is_a_link_out(tmp_path):
    run = _run_dir(tmp_path / "run", ["t.py::test_one"])
    outside, text = _outside_parts(tmp_path)
    (outside / "s-1").mkdir()
    (outside / "s-1" / "gw0-1.jsonl").write_text(text)
    (run / "records.d").symlink_to(outside)
    proc = _check(run)
    assert (outside / "notes.jsonl").read_text() == text and (outside / "s-1" / "gw0-1.jsonl").read_text() == text
    assert proc.returncode == 1 and f"PROBLEM {run / 'records.d'}: a symbolic link (to {outside})" in proc.stdout


def test_check_of_a_fifo_records_file_is_a_named_problem_not_a_hang(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / "records.jsonl")
    (run / "session.json").write_text(json.dumps(_session(0)))
    proc = _check(run, timeout=60)  # before: it waited for a writer forever
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{run / 'records.jsonl'}: a FIFO (named pipe), not a regular file" in proc.stdout


def test_a_records_file_that_is_a_link_out_is_not_read(tmp_path):
    from interop.records.store import load_run

    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(json.dumps(_record("outside.py::test_not_yours")) + "\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "records.jsonl").symlink_to(outside)
    (run / "session.json").write_text(json.dumps(_session(1)))
    loaded = load_run(run)
    assert loaded.records == [] and not loaded.complete
    assert any(p.startswith(f"{run / 'records.jsonl'}: a symbolic link (to {outside})") for p in loaded.problems)


def test_combining_writes_no_file_through_a_planted_link(tmp_path):
    from interop.records.store import write_atomically

    run = tmp_path / "run"
    run.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    (run / f".records.jsonl.{os.getpid()}.partial").symlink_to(victim)  # the temporary's name, planted
    write_atomically(run / "records.jsonl", "new\n", root=run)
    assert victim.read_text() == "keep" and (run / "records.jsonl").read_text() == "new\n"
    with pytest.raises(UnsafeInputError):
        write_atomically(run / ".." / "victim.txt", "x", root=run)
    assert victim.read_text() == "keep"
