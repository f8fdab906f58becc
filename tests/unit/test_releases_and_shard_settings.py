"""Issue 46, item 5 (one of each): one list of Aidge releases, and two shard settings combined are an
error naming both, never an empty run."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_releases_are_listed_once_and_everything_reads_that_list():
    releases = tuple(json.loads((ROOT / "interop" / "aidge_releases.json").read_text())["releases"])
    from interop.reporting import triage_ranges

    sys.path.insert(0, str(ROOT))
    try:
        from tools import aidge_matrix
    finally:
        sys.path.remove(str(ROOT))
    assert triage_ranges.RELEASES == aidge_matrix.RELEASES == releases
    # the noxfile reads the data file (it cannot import the package): no literal list of releases left in it
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    lists = [n for n in ast.walk(tree) if isinstance(n, (ast.Tuple, ast.List))
             and sum(isinstance(e, ast.Constant) and e.value in releases for e in n.elts) >= 2]
    assert not lists, [ast.unparse(n) for n in lists]  # (the stack's own pin, one release, is another fact)
    assert "aidge_releases.json" in (ROOT / "noxfile.py").read_text()


def test_two_shard_settings_combined_are_an_error_naming_both(monkeypatch):
    from interop.cases import opinfo

    monkeypatch.setenv("INTEROP_OPINFO_SHARD", "1/15")
    monkeypatch.delenv("INTEROP_SHARD", raising=False)
    assert opinfo.shard() == (1, 15)
    monkeypatch.setenv("INTEROP_SHARD", "1/2")
    with pytest.raises(ValueError, match="INTEROP_OPINFO_SHARD='1/15' and INTEROP_SHARD='1/2' are both set"):
        opinfo.shard()


def test_a_session_with_both_settings_stops_at_collection_instead_of_running_nothing(tmp_path):
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("INTEROP_")}
    env.update(INTEROP_OPINFO_SHARD="1/15", INTEROP_SHARD="1/2")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co", "tests/test_opinfo.py"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode not in (0, 5), done.stdout[-2000:]
    assert "INTEROP_OPINFO_SHARD" in done.stdout and "INTEROP_SHARD" in done.stdout
