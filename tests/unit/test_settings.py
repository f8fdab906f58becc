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
    from interop.equivalence.tester_replay import replay_command

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


#: the one module that reads INTEROP_* variables beside interop/env.py, with its reason: asv loads the
#: benchmark harness beside an earlier commit's interop (a release or commit matrix), whose env module
#: may not declare the variables the harness reads
_RAW_READERS_ALLOWED = {"interop/reporting/bench_harness.py"}


def _env_constants() -> set[str]:
    """The module-level names bound to an ``INTEROP_*`` string anywhere in interop/ (``SESSION_ENV``...)."""
    import ast

    names = set()
    for path in (ROOT / "interop").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, str) and node.value.value.startswith("INTEROP_"):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _direct_reads(path: Path, constants: set[str]) -> list[str]:
    """``os.environ.get(X)`` / ``os.environ[X]`` (a load) / ``os.getenv(X)`` where X is an INTEROP_*
    literal or a constant bound to one: the places that read such a variable without the registry."""
    import ast

    def interop_key(node) -> bool:
        return (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("INTEROP_")) \
            or (isinstance(node, ast.Name) and node.id in constants) \
            or (isinstance(node, ast.Attribute) and node.attr in constants)

    def is_environ(node) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "environ"

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and node.args and interop_key(node.args[0]):
            func = node.func
            if (isinstance(func, ast.Attribute) and func.attr == "get" and is_environ(func.value)) \
                    or (isinstance(func, ast.Attribute) and func.attr == "getenv"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and is_environ(node.value) \
                and interop_key(node.slice):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_module_outside_the_registry_reads_an_interop_variable():
    """Issue 62 item 3: every INTEROP_* variable is read through interop.env (its declaration:
    parse, default, validation), never with os.environ directly."""
    constants = _env_constants()
    reads = [where for path in sorted((ROOT / "interop").rglob("*.py"))
             if str(path.relative_to(ROOT)) not in {"interop/env.py", *_RAW_READERS_ALLOWED}
             for where in _direct_reads(path, constants)]
    assert reads == [], f"read INTEROP_* through interop.env (given / Variable.read): {reads}"


def test_the_direct_read_check_can_fail(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('import os\nMY_ENV = "INTEROP_X"\na = os.environ.get("INTEROP_Y")\nb = os.environ[MY_ENV]\n'
                      'c = os.getenv("INTEROP_Z")\nos.environ["INTEROP_W"] = "1"\n', encoding="utf-8")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert _direct_reads(module, {"MY_ENV"}) == ["m.py:3", "m.py:4", "m.py:5"]
    finally:
        ROOT = saved
