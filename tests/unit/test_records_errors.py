"""Issue 44: the records plugin (interop/records/) never ends in a traceback. A records folder it
may not write (``records.d`` a link out: :class:`~interop.reading.UnsafeInputError` from
:class:`~interop.records.store.PartWriter`) is one clear error before any test runs (exit 4),
and nothing is made outside; a part file that cannot be written mid-session (a full disk) is
said once, naming the file, and the session ends incomplete (exit 3), never INTERNALERROR."""
from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from interop.reading import UnsafeInputError
from interop.records.store import PartWriter

ROOT = Path(__file__).resolve().parents[2]


def _env(records: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), INTEROP_RECORDS_DIR=str(records))
    for name in ("INTEROP_RESULTS_DIR", "INTEROP_SHARD", "INTEROP_RECORDS_SESSION", "PYTEST_CURRENT_TEST",
                 "PYTEST_XDIST_WORKER", "INTEROP_REPRODUCERS"):
        env.pop(name, None)
    return env


def _project(tmp_path: Path, n: int = 2) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_sample.py").write_text(
        f"import pytest\n\n@pytest.mark.parametrize('i', range({n}))\ndef test_x(i):\n    pass\n")
    return project


def test_part_writer_refuses_a_records_folder_linking_out_before_making_anything(tmp_path):
    # before: the session's folder was made through the link (outside), then refused
    run, outside = tmp_path / "run", tmp_path / "outside"
    run.mkdir()
    outside.mkdir()
    (run / "records.d").symlink_to(outside)
    with pytest.raises(UnsafeInputError, match="records.d"):
        PartWriter(run, "main", "1234-session")
    assert list(outside.iterdir()) == []


def test_a_records_folder_linking_out_is_one_clear_error_before_any_test(tmp_path):
    # before: INTERNALERROR with UnsafeInputError's traceback, and a folder made outside
    project = _project(tmp_path)
    run, outside = tmp_path / "run", tmp_path / "outside"
    run.mkdir()
    outside.mkdir()
    (run / "records.d").symlink_to(outside)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_sample.py"], cwd=project,
                          env=_env(run), capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode == 4, out
    assert "ERROR: interop records:" in out and "records.d" in out and "symbolic link" in out
    assert "INTERNALERROR" not in out and "Traceback" not in out
    assert list(outside.iterdir()) == []


def _small_files():
    resource.setrlimit(resource.RLIMIT_FSIZE, (1500, 1500))  # a disk that fills up after 1,500 bytes a file
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def test_a_part_file_that_cannot_be_written_is_said_once_and_the_session_is_incomplete(tmp_path):
    # before: an OSError traceback inside a hook (INTERNALERROR), the session called complete
    project = _project(tmp_path, 30)
    run = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_sample.py"], cwd=project,
                          env=_env(run), capture_output=True, text=True, timeout=120, preexec_fn=_small_files)
    out = done.stdout + done.stderr
    assert done.returncode == 3, out
    assert "INTERNALERROR" not in out and "Traceback" not in out, out
    errors = [line for line in out.splitlines() if line.startswith("ERROR: interop records: cannot write")]
    assert errors and "records.d" in errors[0] and errors[0].endswith("File too large"), out
    assert len([e for e in errors if "not combined" not in e]) == 1  # said once, not once per test
    if (run / "session.json").exists():
        session = json.loads((run / "session.json").read_text())
        assert session["complete"] is False and "could not be written" in session["ended"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs: POSIX")
def test_the_progress_line_never_hangs_on_a_fifo_nor_dies_on_a_line_that_is_no_object(tmp_path):
    # before: a FIFO among the part files hung the report process; a line such as [1] (a test's
    # doing) ended it in AttributeError
    from interop.records.progress import Progress

    parts = tmp_path / "records.d" / "1-session"
    parts.mkdir(parents=True)
    os.mkfifo(parts / "gw0-1.jsonl")
    (parts / "gw1-2.jsonl").write_text('[1]\n"text"\n{"event": "collected", "count": 4}\n'
                                       '{"event": "record", "outcome": "passed"}\n')
    outside = tmp_path.parent / f"{tmp_path.name}-outside.jsonl"
    outside.write_text('{"event": "record", "outcome": "failed"}\n')
    (parts / "gw2-3.jsonl").symlink_to(outside)
    progress = Progress(tmp_path)
    progress.poll()
    assert progress.collected == 4 and dict(progress.outcomes) == {"passed": 1}
    assert progress.line().startswith("1 / 4 tests (25%)")
