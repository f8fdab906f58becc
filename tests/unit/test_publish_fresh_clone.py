"""``nox -s publish`` in a fresh clone: it failed with ``results/asv/benchmarks.json missing!``
(asv publish needs the benchmark list, which only an asv run writes). Now the session runs asv's
benchmark discovery itself first (the .gitlab-ci.yml pages job's command, ``asv run -E existing:...
--bench just-discover``), and says that the grid needs a benchmarked commit when there is none.

The session function is called with a stand-in for nox's session that records the commands
(nothing is run); results/asv is a temporary folder. Measured on a real fresh clone
(INTEROP_NOX_ENV=.venv, 2026-12-07): before, exit 1 at asv publish; after, the discovery, the
warning, asv publish and the project's pages, exit 0 in 28 s."""
from __future__ import annotations

import functools
import importlib.util
import json
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=1)
def _noxfile():
    """noxfile.py, loaded once (each load registers its sessions with nox again). Without nox (the
    tests-cpu environment has none) each test is skipped, as a test: a module-level skip is no
    test, and the records' count check would find pytest's summary one skip ahead of them."""
    pytest.importorskip("nox")
    spec = importlib.util.spec_from_file_location("_noxfile_under_test", ROOT / "noxfile.py")
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():  # another test may have loaded it: nox says the sessions are registered again
        warnings.filterwarnings("ignore", "The session .* has already been registered", FutureWarning)
        spec.loader.exec_module(module)
    return module


class FakeSession:
    posargs: list[str] = []

    def __init__(self):
        self.calls: list[tuple] = []
        self.warnings: list[str] = []

    def run(self, *args, **kwargs):
        self.calls.append(args)
        if "-c" in args:  # cpu_stack's version check of INTEROP_NOX_ENV
            return json.dumps({"torch": "2.13.0", "aidge_core": "0.10.1", "aidge_backend_cpu": "0.10.1"})
        return ""

    def log(self, *args):
        pass

    def warn(self, message, *args):
        self.warnings.append(str(message))

    def error(self, message, *args):
        raise AssertionError(message)


def _publish(tmp_path, monkeypatch, results: dict[str, str]) -> FakeSession:
    noxfile = _noxfile()
    monkeypatch.setattr(noxfile, "ROOT", tmp_path)
    for name, text in results.items():
        (tmp_path / "results" / "asv" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "results" / "asv" / name).write_text(text)
    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").write_text("")
    monkeypatch.setenv("INTEROP_NOX_ENV", str(env))
    session = FakeSession()
    publish = getattr(noxfile.publish, "func", noxfile.publish)  # nox's decorator keeps the function
    publish(session)
    return session


def _asv_commands(session: FakeSession) -> list[tuple]:
    return [call[1:] for call in session.calls if call and str(call[0]).endswith("/asv")]


def test_a_fresh_clone_discovers_the_benchmarks_before_asv_publish(tmp_path, monkeypatch):
    session = _publish(tmp_path, monkeypatch, {})
    commands = _asv_commands(session)
    discover = ("run", "-E", f"existing:{tmp_path / 'env' / 'bin' / 'python'}", "--bench", "just-discover")
    assert discover in commands
    assert commands.index(discover) < next(i for i, c in enumerate(commands) if "publish" in c)
    assert any("no benchmarked commit" in w and "asv run" in w for w in session.warnings), session.warnings


def test_with_the_benchmark_list_and_a_benchmarked_commit_nothing_more(tmp_path, monkeypatch):
    session = _publish(tmp_path, monkeypatch, {"benchmarks.json": "{}", "vm/machine.json": "{}",
                                               "vm/0123abcd-existing-py.json": '{"commit_hash": "0123abcd"}'})
    assert not any("just-discover" in c for c in _asv_commands(session))
    assert not any("no benchmarked commit" in w for w in session.warnings)


def test_the_benchmark_list_without_a_benchmarked_commit_is_said(tmp_path, monkeypatch):
    session = _publish(tmp_path, monkeypatch, {"benchmarks.json": "{}", "vm/machine.json": "{}"})
    assert not any("just-discover" in c for c in _asv_commands(session))
    assert any("no benchmarked commit" in w for w in session.warnings)
