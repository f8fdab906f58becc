"""The bridge's events (interop.bridge.events): what ``wrap`` and its module tell whoever listens,
and the suite's instruments (reproducer capture, stage timings, crash phases) as listeners from
outside; the bridge's own modules call none of them."""
from __future__ import annotations

import ast
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch

import interop.equivalence.isolation  # noqa: F401 - the suite side: wires the stage collectors to the bridge
from interop.bridge import capture, events
from interop.stages import stage_times, while_collecting

BRIDGE = Path(__file__).resolve().parents[2] / "interop" / "bridge"
#: the parts of wrap that were stages before the events (their names and timings keys stay)
WRAP_PHASES = ["export", "export: value check", "torch", "import", "import: known defects", "compile",
               "module setup"]


@pytest.fixture(autouse=True)
def nobody_listening(monkeypatch):
    """Each test starts in a process where nobody listens and no capture is on, whatever the session
    does: a findings run (``nox -s report``, reproducers on) captures every test, so the capture's
    listener was subscribed while these tests ran and six of them failed there (2026-12-07). The
    session's capture and listeners are back after the test (monkeypatch restores them), and what a
    failing test left subscribed goes with it."""
    monkeypatch.setattr(capture, "_STATE", None)
    monkeypatch.setattr(capture, "_SUBSCRIPTION", None)
    monkeypatch.setattr(events, "listening", ())


@pytest.fixture
def recorded():
    seen: list = []
    handle = events.subscribe(seen.append)
    try:
        yield seen
    finally:
        events.unsubscribe(handle)


def _small_wrap():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    from interop import wrap

    return model, wrap(model, (2, 4))


def test_subscribers_are_called_in_order_and_a_failing_one_is_dropped():
    calls = []

    def broken(event):
        raise RuntimeError("an instrument's bug")

    handles = [events.subscribe(lambda e: calls.append(("a", e))), events.subscribe(broken),
               events.subscribe(lambda e: calls.append(("b", e)))]
    try:
        events.emit(events.PhaseEntered("x"))
    finally:
        for h in handles:
            events.unsubscribe(h)
    assert calls == [("a", events.PhaseEntered("x")), ("b", events.PhaseEntered("x"))]
    assert events.listening == ()
    events.unsubscribe(handles[0])  # twice: nothing


def test_subscribing_from_many_threads_loses_nobody():
    handles, lock = [], threading.Lock()

    def worker():
        for _ in range(200):
            h = events.subscribe(lambda e: None)
            with lock:
                handles.append(h)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(events.listening) == 800
    for h in handles:
        h.close()
    assert events.listening == ()


def test_a_phase_says_nothing_when_nobody_listens_and_never_ends_unheard():
    recorded: list = []
    with events.phase("export"):
        handle = events.subscribe(recorded.append)  # listening from inside the phase
    events.unsubscribe(handle)
    assert recorded == []  # its start was not heard: its end is not said
    handle = events.subscribe(recorded.append)
    try:
        with events.phase("import"):
            pass
    finally:
        events.unsubscribe(handle)
    assert recorded == [events.PhaseEntered("import"), events.PhaseLeft("import")]


def test_wrap_forward_backward_emit_their_events_in_order(recorded):
    _, module = _small_wrap()
    x = torch.randn(2, 4, requires_grad=True)
    module(x).sum().backward()
    kinds = [(type(e).__name__, getattr(e, "name", getattr(e, "kind", None))) for e in recorded]
    phases = [n for k, n in kinds if k == "PhaseEntered"]
    assert phases == WRAP_PHASES
    assert [n for k, n in kinds if k == "PhaseLeft"] == ["export", "export: value check", "torch", "import",
                                                         "import: known defects", "compile", "module setup"]
    order = [k for k, _ in kinds if not k.startswith("Phase")]
    assert order[:2] == ["GraphExported", "RunnerMade"] and set(order[2:]) == {"CallMade"}
    exported = next(e for e in recorded if isinstance(e, events.GraphExported))
    made = next(e for e in recorded if isinstance(e, events.RunnerMade))
    calls = [e for e in recorded if isinstance(e, events.CallMade)]
    assert made.exported is exported.exported and exported.backend == "cpu"
    # the module's runner: the call and its backward (the first-call value check runs a runner of its own)
    assert [c.kind for c in calls if c.runner is made.runner] == ["forward", "backward"]
    assert calls[-1].kind == "backward" and {c.kind for c in calls[:-1]} == {"forward"}
    assert len(made.param_producers) == 4  # two Linear layers: weight and bias each
    assert kinds.index(("GraphExported", None)) == kinds.index(("PhaseLeft", "export")) + 1


def test_nobody_listening_no_event_is_built(monkeypatch):
    assert events.listening == ()

    def no_event(*args, **kwargs):
        raise AssertionError("an event was built while nobody listened")

    for name in ("PhaseEntered", "PhaseLeft", "GraphExported", "RunnerMade", "CallMade", "CallFailed", "emit"):
        monkeypatch.setattr(events, name, no_event)
    model, module = _small_wrap()
    x = torch.randn(2, 4, requires_grad=True)
    module(x).sum().backward()
    assert torch.allclose(module(x), model(x), atol=1e-5)


def test_stage_times_time_wraps_phases_under_the_same_names_and_stop_listening():
    assert events.listening == ()
    with stage_times() as times:
        assert len(events.listening) == 1
        with stage_times() as inner:  # nested collectors: one listener
            assert len(events.listening) == 1
            _small_wrap()
    assert events.listening == ()
    assert times == {}  # the inner collector saw the block
    assert set(inner) == set(WRAP_PHASES)
    assert all(v >= 0 for v in inner.values())


def test_a_source_registered_while_a_collector_is_open_starts_at_once_and_stops_with_the_last():
    log = []

    def start():
        log.append("start")
        return lambda: log.append("stop")

    import interop.stages as stages

    with stage_times():
        while_collecting(start)
        assert log == ["start"]
        with stage_times():
            pass
        assert log == ["start"]
    assert log == ["start", "stop"]
    stages._SOURCES.remove(start)


def test_a_stage_collector_in_another_thread_does_not_take_this_threads_phases():
    box = {}
    go, done = threading.Event(), threading.Event()

    def other():
        with stage_times() as times:
            go.set()
            done.wait(60)
        box["times"] = times

    t = threading.Thread(target=other)
    t.start()
    go.wait(60)
    try:
        _small_wrap()  # this thread collects nothing
    finally:
        done.set()
        t.join()
    assert box["times"] == {}


def test_capture_listens_only_while_it_is_on(tmp_path):
    assert events.listening == ()
    capture.start(tmp_path / "bundle", "t::case", None, None)
    try:
        assert len(events.listening) == 1
        model, module = _small_wrap()
        x = torch.randn(2, 4, requires_grad=True)
        module(x).sum().backward()
        state = capture.current()
        (entry,) = state.entries
        assert entry.forward_calls >= 1 and entry.backward_calls == 1 and len(entry.param_producers) == 4
        assert state.runners[id(module._runner)] is entry
    finally:
        capture.stop()
    assert events.listening == ()


def test_the_crash_phases_the_bridge_marks_are_the_table_isolation_had():
    """The table isolation had before the events, and ``run_forward`` since 2026-12-07: the scheduler's
    forward itself, the innermost frame of a crash in an Aidge kernel. A findings run's
    moduleinfo_AvgPool1d_eval died by SIGSEGV with its stack dump cut after that one frame (another
    thread's fault ended the process while faulthandler wrote), and the crash read "outside the
    bridge's phases" where its row quotes "during forward"."""
    assert events.crash_phase_frames() == {
        ("bridge/runner.py", "run_forward"): "forward",
        ("bridge/onnx_export.py", "export_to_onnx"): "export",
        ("bridge/onnx_export.py", "_export_to_onnx"): "export",
        ("bridge/graph.py", "_import_graph"): "import",
        ("bridge/graph.py", "_compile"): "compile",
        ("bridge/runner.py", "forward"): "forward",
        ("bridge/runner.py", "_forward"): "forward",
        ("bridge/runner.py", "backward"): "backward",
        ("bridge/module.py", "forward"): "forward",
        ("bridge/module.py", "backward"): "backward",
        ("bridge/module.py", "_backward"): "backward",
        ("bridge/module.py", "step"): "step",
        ("bridge/single_node.py", "build_node"): "import",
        ("bridge/single_node.py", "compile_node"): "compile",
        ("bridge/single_node.py", "run_node"): "forward",
        ("bridge/onnx_backend.py", "import_model"): "import",
        ("bridge/onnx_backend.py", "_compile"): "compile",
        ("bridge/onnx_backend.py", "_forward"): "forward",
    }


def _imported_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


@pytest.mark.parametrize("path", sorted(p.name for p in BRIDGE.glob("*.py") if p.name != "capture.py"))
def test_the_bridge_calls_no_suite_instrument(path):
    """No bridge module imports the capture, the stages, the suite or the case table."""
    names = _imported_names(BRIDGE / path)
    assert not names & {"capture", "..stages", "stages"}, names
    text = (BRIDGE / path).read_text()
    assert "capture.note_" not in text and "sys.modules[\"interop." not in text


def test_the_instruments_modules_are_light():
    code = ("import sys\nimport interop.bridge.capture, interop.bridge.events, interop.stages\n"
            "assert 'torch' not in sys.modules and 'aidge_core' not in sys.modules, sorted(sys.modules)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
