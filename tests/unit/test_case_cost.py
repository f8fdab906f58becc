"""Unit tests of what the suite's cost profile rests on and of the costs it cut: the stage
timer (:mod:`interop.stages`, on a fake clock: no assertion here depends on elapsed time),
stages coming back from a forked child, the samples kept for the children
(:mod:`interop.cases.kept_samples`), the traceback text of expected failures made only when
shown, and the profile script's own arithmetic (``tools/case_cost.py``)."""
from __future__ import annotations

import os
import textwrap

import pytest

from interop import stages
from interop.stages import add_stage_times, collecting, stage, stage_times

pytest_plugins = ["pytester"]


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(stages, "perf_counter", fake)
    return fake


def test_stages_are_exclusive_and_add_up(clock):
    with stage_times() as times:
        with stage("export"):
            clock.now += 2.0
            with stage("torch"):
                clock.now += 3.0
            clock.now += 1.0
        with stage("torch"):
            clock.now += 0.5
    assert times == {"export": 3.0, "torch": 3.5}  # the nested torch time is not the export's


def test_nothing_is_collected_without_a_collector(clock):
    assert not collecting()
    with stage("export"):
        clock.now += 1.0
    with stage_times() as times:
        assert collecting()
    assert times == {} and not collecting()


def test_nested_collectors_each_see_their_block(clock):
    with stage_times() as outer:
        with stage("a"):
            clock.now += 1.0
        with stage_times() as inner:
            with stage("b"):
                clock.now += 2.0
        with stage("c"):
            clock.now += 4.0
    assert inner == {"b": 2.0} and outer == {"a": 1.0, "c": 4.0}


def test_times_added_from_elsewhere_are_not_counted_twice_by_the_open_stage(clock):
    with stage_times() as times:
        with stage("fork"):
            clock.now += 5.0
            add_stage_times({"export": 4.0})  # a child's 4 s inside this stage's 5 s
    assert times == {"fork": 1.0, "export": 4.0}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_sends_its_stages_back_and_the_parent_adds_the_fork():
    from interop.equivalence.isolation import run_isolated

    def work():
        with stage("export"):
            pass
        return 7

    with stage_times() as times:
        assert run_isolated(work) == 7
    assert set(times) == {"export", "fork", "case code, unnamed"} and all(v >= 0 for v in times.values())
    assert run_isolated(work) == 7  # no collector: nothing to send


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_kept_samples_reach_forked_children_only():
    from interop.cases import kept_samples
    from interop.equivalence.isolation import run_isolated

    sample = ["a", "sample"]
    kept_samples.keep("unit", ("op", "float32"), 3, sample)
    try:
        assert kept_samples.kept("unit", ("op", "float32"), 3) is None  # in-process: generated again

        def child():
            got = kept_samples.kept("unit", ("op", "float32"), 3)
            got.append("changed in the child")
            return got, kept_samples.kept("unit", ("op", "float32"), 4)

        got, other = run_isolated(child)
        assert got == ["a", "sample", "changed in the child"] and other is None
        assert sample == ["a", "sample"]  # the parent's copy is untouched
    finally:
        kept_samples.forget("unit")
    assert kept_samples._KEPT == {} or all(k[0] != "unit" for k in kept_samples._KEPT)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_an_opinfo_case_takes_its_kept_sample_and_still_checks_it():
    pytest.importorskip("expecttest")
    from interop.cases import kept_samples
    from interop.cases.opinfo import opinfo_cases, opinfo_sample
    from interop.equivalence.isolation import run_isolated

    case = opinfo_cases(["abs"], cap=1)[0]
    key = ("abs", "float32")

    def shape_in_child():
        fn, args, _ = opinfo_sample(case)
        return tuple(args[0].shape), kept_samples.kept("opinfo", key, 0) is not None

    try:
        assert run_isolated(shape_in_child) == ((20, 20), True)
        import torch
        from torch.testing._internal.opinfo.core import SampleInput

        kept_samples.keep("opinfo", key, 0, SampleInput(torch.zeros(3)))
        with pytest.raises(RuntimeError, match="no longer describes it"):
            run_isolated(opinfo_sample, case)  # a kept sample that is not the case's is refused
    finally:
        kept_samples.forget("opinfo")


XFAIL_SUITE = textwrap.dedent('''
    import pytest

    def helper():
        raise ValueError("boom\\nsecond line")

    @pytest.mark.xfail(strict=True, raises=ValueError)
    def test_expected():
        helper()

    @pytest.mark.xfail(strict=True, raises=TypeError)
    def test_other_error():
        helper()

    def test_plain_failure():
        helper()
''')


def test_an_expected_failure_keeps_one_line_and_any_other_failure_its_traceback(pytester):
    pytester.makepyfile(test_x=XFAIL_SUITE)
    pytester.makeconftest(textwrap.dedent('''
        import pytest

        REPORTS = {}

        @pytest.hookimpl(trylast=True)
        def pytest_runtest_logreport(report):
            if report.when == "call":
                REPORTS[report.nodeid.split("::")[-1]] = str(report.longrepr)

        def pytest_sessionfinish(session):
            import json, pathlib
            pathlib.Path("longrepr.json").write_text(json.dumps(REPORTS))
    '''))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--records", "none")
    result.assert_outcomes(xfailed=1, failed=2)
    import json

    reprs = json.loads((pytester.path / "longrepr.json").read_text())
    assert reprs["test_expected"] == "ValueError: boom"
    for name in ("test_other_error", "test_plain_failure"):  # pytest's own traceback, source lines included
        assert "def helper():" in reprs[name] and "second line" in reprs[name], reprs[name]
    result.stdout.fnmatch_lines(["*def helper():*"])


def test_the_profile_tables_add_up():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "tools" / "case_cost.py"
    spec = importlib.util.spec_from_file_location("case_cost_under_test", path)
    cost = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cost)
    result = {"source": "s", "wall_s": 10.0, "collection_s": 2.0, "collected": 100,
              "cases": [{"wall_s": 1.0, "stages": {"export": 0.5, "fork": 0.25}},
                        {"wall_s": 3.0, "stages": {"export": 1.5}}]}
    rows = {r["stage"]: r for r in cost.stage_table(result)}
    assert rows["export"]["cases"] == 2 and rows["export"]["mean_ms"] == 1000.0
    assert rows["fork"]["cases"] == 1 and rows["fork"]["mean_ms"] == 125.0  # per case, over all cases
    assert rows["other"]["median_ms"] == 875.0 and abs(sum(r["share"] for r in rows.values()) - 1) < 1e-9
    s = cost.summary(result)
    assert s["startup_s"] == 4.0 and s["mean_case_s"] == 2.0
    assert s["estimate_s"] == 2.0 + 4.0 + 100 * 2.0 / cost.WORKERS
    assert [cost._fmt(x) for x in (0.00123, 1.234, 12.34, 123.4, 12345.6)] == ["0.00123", "1.23", "12.3", "123", "12346"]


def test_opinfo_samples_are_the_same_through_torchs_own_iteration(monkeypatch):
    """The fast sample iteration (collection 65 s -> 9.6 s) gives torch's own samples, value for
    value, and leaves ``random``'s and numpy's global states as they were."""
    pytest.importorskip("expecttest")
    import contextlib
    import random

    import numpy as np
    import torch
    from torch.utils import _pytree as pytree

    from interop.cases import opinfo

    names = ["abs", "nn.functional.conv2d", "softmax", "cat", "nn.functional.embedding"]
    state, np_state = random.getstate(), np.random.get_state()[1].copy()
    fast = {n: opinfo._samples(n) for n in names}
    assert random.getstate() == state and (np.random.get_state()[1] == np_state).all()
    monkeypatch.setattr(opinfo, "_fast_sample_iteration", contextlib.nullcontext)
    for name in names:
        own = opinfo._samples(name)
        assert len(own) == len(fast[name]) > 0
        for a, b in zip(fast[name], own):
            la, sa = pytree.tree_flatten((a.input, a.args, a.kwargs))
            lb, sb = pytree.tree_flatten((b.input, b.args, b.kwargs))
            assert sa == sb
            for x, y in zip(la, lb):
                if isinstance(x, torch.Tensor):
                    assert x.dtype == y.dtype and x.requires_grad == y.requires_grad
                    torch.testing.assert_close(x, y, rtol=0, atol=0, equal_nan=True)
                else:
                    assert x == y


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_the_fork_leaves_the_callers_frozen_objects_frozen_and_freezes_nothing_for_good():
    import gc

    from interop.equivalence.isolation import run_isolated

    assert gc.get_freeze_count() == 0
    assert run_isolated(gc.get_freeze_count) > 0  # the child's GC never walks the parent's objects
    assert gc.get_freeze_count() == 0  # and the parent unfroze them
    kept = []  # a tracked container the caller froze and keeps alive
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert not any(o is kept for o in gc.get_objects())  # frozen: out of the collected generations
        run_isolated(int)
        # a caller's own freeze stays as it was: its objects still frozen, nothing frozen for good.
        # The count itself may fall by objects freed meanwhile (a frozen object whose last reference
        # goes leaves the permanent generation; another thread's garbage): CI saw 809,651 -> 809,649
        assert not any(o is kept for o in gc.get_objects())
        assert 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
    assert any(o is kept for o in gc.get_objects())
