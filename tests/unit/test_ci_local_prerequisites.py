"""``nox -s ci-local`` as a CI maintainer meets it (issue 61): its prerequisites are named with their install
lines (the ones docs/ci.md gives: rsync, which gitlab-ci-local copies every job's folder, artifacts and caches
with, and gitlab-ci-local with Node's headers from the system, no web), a gitlab-ci-local that is there but
not executable is said so, and the scratch clone is made in $TMPDIR.

The session runs with a stand-in for nox's session (the git clone is a copy of .gitlab-ci.yml) and a
stand-in gitlab-ci-local on PATH that records where it ran."""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import stat
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=1)
def _noxfile():
    pytest.importorskip("nox")
    pytest.importorskip("yaml")
    spec = importlib.util.spec_from_file_location("_noxfile_ci_local_under_test", ROOT / "noxfile.py")
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The session .* has already been registered", FutureWarning)
        spec.loader.exec_module(module)
    return module


def _tool(folder: Path, name: str, script: str = "exit 0", executable: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755 if executable else 0o644)
    return path


def test_every_missing_tool_is_named_with_its_install_line(tmp_path, monkeypatch):
    noxfile = _noxfile()
    bin_dir = tmp_path / "bin"
    _tool(bin_dir, "git")
    monkeypatch.setenv("PATH", str(bin_dir))
    missing = noxfile.ci_local_missing()
    assert len(missing) == 2
    assert any(m.startswith("rsync: not found") and "apt-get install -y rsync" in m for m in missing), missing
    assert any(m.startswith("gitlab-ci-local: not found") and "npm_config_nodedir=/usr npm install -g "
               "gitlab-ci-local@4.56.0" in m for m in missing), missing


def test_a_gitlab_ci_local_that_is_not_executable_is_said_so(tmp_path, monkeypatch):
    """The newcomer's `Permission denied` until chmod +x on its index.js."""
    noxfile = _noxfile()
    bin_dir = tmp_path / "bin"
    for name in ("git", "rsync"):
        _tool(bin_dir, name)
    _tool(bin_dir, "gitlab-ci-local", executable=False)
    monkeypatch.setenv("PATH", str(bin_dir))
    [said] = noxfile.ci_local_missing()
    assert "not executable (Permission denied)" in said and "chmod +x" in said


def test_the_install_lines_are_docs_cis(tmp_path):
    """docs/ci.md gives the same install lines the session prints when a tool is missing."""
    noxfile = _noxfile()
    doc = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    for tool in ("rsync", "gitlab-ci-local"):
        assert noxfile.CI_LOCAL_TOOLS[tool] in doc, tool


def test_the_scratch_clone_is_in_tmpdir_created_when_missing(tmp_path, monkeypatch):
    """tempfile alone falls back to /tmp without a word when $TMPDIR does not exist."""
    noxfile = _noxfile()
    wanted = tmp_path / "not" / "yet" / "there"
    monkeypatch.setenv("TMPDIR", str(wanted))
    scratch = noxfile.ci_local_scratch()
    assert scratch.parent == wanted and scratch.is_dir() and scratch.name.startswith("interop-ci-local-")


class _Session:
    posargs: list[str] = []

    def __init__(self):
        self.logs: list[str] = []

    def run(self, *args, **kwargs):
        if args[:2] == ("git", "clone"):  # the clone: the committed pipeline is all the session reads
            repo = Path(args[-1])
            repo.mkdir(parents=True)
            (repo / ".gitlab-ci.yml").write_text((ROOT / ".gitlab-ci.yml").read_text(encoding="utf-8"))
        return ""

    def log(self, message, *args):
        self.logs.append(str(message))

    def error(self, message, *args):
        raise AssertionError(message)


def test_the_session_clones_into_tmpdir_and_removes_it(tmp_path, monkeypatch):
    noxfile = _noxfile()
    bin_dir, record = tmp_path / "bin", tmp_path / "ran.json"
    for name in ("git", "rsync"):
        _tool(bin_dir, name)
    _tool(bin_dir, "gitlab-ci-local",
          f'printf \'{{"cwd": "%s", "tmpdir": "%s"}}\' "$PWD" "$TMPDIR" > "{record}"\nexit 0')
    env = tmp_path / "env"
    _tool(env / "bin", "python")
    scratch_root = tmp_path / "scratch"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("INTEROP_NOX_ENV", str(env))
    monkeypatch.setenv("TMPDIR", str(scratch_root))
    session = _Session()
    getattr(noxfile.ci_local, "func", noxfile.ci_local)(session)
    ran = json.loads(record.read_text())
    assert Path(ran["cwd"]).parent.parent == scratch_root and Path(ran["cwd"]).name == "repo", ran
    assert list(scratch_root.iterdir()) == []  # removed after
    assert any(str(scratch_root) in line for line in session.logs)
