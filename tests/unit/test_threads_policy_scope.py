"""threads_policy's scope around Aidge's calls (dynamic teams for the call, set back after): what it
leaves on each thread's OpenMP runtimes. Its cost per call is measured, not asserted here:
``tools/speed_bridge.py --openmp-scope``, docs/openmp-threads.md."""
from __future__ import annotations

import threading

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("aidge_backend_cpu")  # its bundled runtime mapped too

from interop import threads_policy  # noqa: E402


def _dyn() -> list[int]:
    return [int(get()) for get, _ in threads_policy._runtime_calls()]


def test_the_scope_switches_dynamic_teams_on_for_the_call_and_back_after():
    calls = threads_policy._runtime_calls()
    assert calls, threads_policy.loaded_openmp_runtimes()
    assert _dyn() == [0] * len(calls)
    with threads_policy._DynamicTeams():
        assert _dyn() == [1] * len(calls)
        with threads_policy._DynamicTeams():  # nested: already on, left alone
            assert _dyn() == [1] * len(calls)
        assert _dyn() == [1] * len(calls)
    assert _dyn() == [0] * len(calls)
    with pytest.raises(RuntimeError, match="inside"):
        with threads_policy._DynamicTeams():
            raise RuntimeError("inside")
    assert _dyn() == [0] * len(calls)


def test_a_runtime_already_dynamic_stays_so():
    get, set_ = threads_policy._runtime_calls()[0]
    set_(1)
    try:
        with threads_policy._DynamicTeams():
            assert get() == 1
        assert get() == 1
    finally:
        set_(0)


def test_the_setting_is_per_thread():
    seen: dict[str, list[int]] = {}
    inside, leave = threading.Event(), threading.Event()

    def in_scope():
        with threads_policy._DynamicTeams():
            seen["worker inside"] = _dyn()
            inside.set()
            leave.wait(30)
        seen["worker after"] = _dyn()

    worker = threading.Thread(target=in_scope)
    worker.start()
    assert inside.wait(30)
    seen["main meanwhile"] = _dyn()
    leave.set()
    worker.join(30)
    n = len(threads_policy._runtime_calls())
    assert seen == {"worker inside": [1] * n, "main meanwhile": [0] * n, "worker after": [0] * n}


def test_nothing_is_touched_where_the_default_is_not_in_force(monkeypatch):
    monkeypatch.setattr(threads_policy, "_SCOPED", False)
    scope = threads_policy.aidge_dynamic_teams()
    assert scope is threads_policy._NOTHING
    with scope:
        assert _dyn() == [0] * len(threads_policy._runtime_calls())
    monkeypatch.setattr(threads_policy, "_SCOPED", True)
    assert isinstance(threads_policy.aidge_dynamic_teams(), threads_policy._DynamicTeams)
