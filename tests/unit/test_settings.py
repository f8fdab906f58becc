"""One settings registry (issue 62 item 3): each ``INTEROP_*`` variable declared once in
:data:`interop.env.VARIABLES` feeds the replay command, ``session.json`` and docs/settings.md."""
from __future__ import annotations

import json
from pathlib import Path

from interop.env import VARIABLES, replay_variables, settings, variables_table

ROOT = Path(__file__).resolve().parents[2]
pytest_plugins = ["pytester"]


def test_docs_settings_is_the_declaration():
    text = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert text.endswith(variables_table()), "docs/settings.md: regenerate its table (see the page's first lines)"
    assert all(f"`{name}`" in text for name in VARIABLES)


def test_the_replay_carries_every_case_selecting_variable(monkeypatch):
    """Before 2026-12-07 the replay's hand-kept list had 8 names: INTEROP_OPINFO_SAMPLES=all (which
    decides whether a sample exists at all) was dropped from a failing case's replay command."""
    from interop.equivalence.tester import replay_command

    monkeypatch.setenv("INTEROP_OPINFO_SAMPLES", "all")
    monkeypatch.setenv("INTEROP_ONNX_GROUPS", "node")
    command = replay_command(3, "tests/test_opinfo.py::test_opinfo[x]")
    assert "INTEROP_OPINFO_SAMPLES=all" in command and "INTEROP_ONNX_GROUPS=node" in command
    assert {"INTEROP_BACKEND", "INTEROP_OPINFO_DTYPES", "INTEROP_EXPECTED_FAILURES"} <= set(replay_variables())
    assert "INTEROP_RESULTS_DIR" not in replay_variables()  # where results go selects no case


def test_session_json_records_the_settings(pytester):
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    out = pytester.path / "records"
    with __import__("pytest").MonkeyPatch.context() as mp:
        mp.setenv("INTEROP_OPINFO_SAMPLES", "3")
        pytester.runpytest_subprocess("-p", "no:cacheprovider", "--records", str(out))
    session = json.loads((out / "session.json").read_text())
    # what the session ran under: the variable set here, and those its caller set (nox sets INTEROP_CONFIG_DIR)
    assert session["settings"]["INTEROP_OPINFO_SAMPLES"] == "3"
    assert set(session["settings"]) <= set(replay_variables())
    assert settings({"INTEROP_SEED": "1", "INTEROP_CASE_TIMEOUT": " 60 "}) == {"INTEROP_CASE_TIMEOUT": "60"}
