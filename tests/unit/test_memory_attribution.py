"""Who a memory-bound failure belongs to. A case child that reaches its memory bound
(``INTEROP_CASE_MEMORY``: a MemoryError, torch's "can't allocate memory", a SIGABRT of a child
that died at its bound) is Aidge's only when the stack at the moment of failure is in Aidge's code
(a bridge phase: import, compile, forward, backward, step); otherwise it is the case's own,
category ``case_memory (test strategy)``, and no ledger entry is made from it
(:func:`interop.categories.case_memory`, asked by ``failure_facts`` and ``categorize``).

Before (2026-12-05): a case whose own body leaked past the bound was a ``crash`` attributed
``unknown``, a "memory-unsafe" ledger entry with an ISSUE.md ready to paste; and the text of a
memory failure inside Aidge's forward (``crash: process ran out of memory during forward``), as the
console reader sees it, was no crash: "ran out of memory" was no crash message (``aidge_error`` from the
"Aidge forward failed" it quotes, ``unknown`` without it)."""
from __future__ import annotations

import os

import pytest

from interop.categories import CASE_MEMORY, case_memory, categorize, failure_facts
from interop.equivalence import isolation
from interop.equivalence.isolation import run_isolated
from interop.errors import AidgeCrash
from interop.records.classify import finding_of
from interop.records.sources import attribution_of
from interop.reporting.ledger import is_aidge_finding

pytestmark = pytest.mark.skipif(not (isolation.fork_available() and os.path.exists("/proc/self/status")),
                                reason="fork and /proc (Linux)")

NODEID = "tests/test_operators.py::Case_memory_x"  # a case's record (the framework's own unit tests are never findings)


@pytest.fixture
def bound_256m(monkeypatch):
    monkeypatch.setenv("INTEROP_CASE_MEMORY", "256M")


def _record(exc: BaseException) -> dict:
    return {"outcome": "failed", "nodeid": NODEID, **finding_of(exc)}


def _failure_of(fn, *args) -> BaseException:
    try:
        run_isolated(fn, *args, timeout=60)
    except BaseException as exc:  # noqa: BLE001 - what the case's record would be made of
        return exc
    raise AssertionError("the case did not fail")


# -- the case's own code ---------------------------------------------------------------
def _leak_in_the_case_body():
    keep = []
    while True:
        keep.append(b"x" * (16 << 20))  # touched memory, as a real leak's


def _leak_then_abort_in_the_case_body():
    keep = []
    try:
        while True:
            keep.append(b"x" * (16 << 20))
    except MemoryError:
        os.abort()  # a library aborting on a failed allocation: SIGABRT at the bound


def _torch_tensors_in_the_case_body():
    import torch

    keep = []
    while True:
        keep.append(torch.ones(4 << 20))  # 16 MiB each: torch's "DefaultCPUAllocator: can't allocate memory"


@pytest.mark.parametrize("body", [_leak_in_the_case_body, _leak_then_abort_in_the_case_body,
                                  _torch_tensors_in_the_case_body], ids=["MemoryError", "SIGABRT", "torch"])
def test_the_case_s_own_memory_is_not_aidge_s_and_makes_no_ledger_entry(bound_256m, body):
    exc = _failure_of(body)
    assert isinstance(exc, AidgeCrash) and exc.memory_bound_hit is True
    record = _record(exc)
    assert not is_aidge_finding(record)  # before: a "memory-unsafe" ledger entry (crash, attribution unknown)
    assert record["category"] == CASE_MEMORY and record["attribution"] is None
    facts = failure_facts(exc)
    assert (facts.category, facts.attribution) == (CASE_MEMORY, None)
    assert "no Aidge phase was running: the case's own memory, not Aidge's" in str(exc)
    # the same failure read from its text (the console reader, a record read back)
    category = categorize(str(exc))[0]
    assert category == CASE_MEMORY and attribution_of(str(exc), category) is None
    from interop.equivalence.verdict import verdict_from

    assert verdict_from(exc).category == CASE_MEMORY


def test_one_allocation_too_large_in_the_case_body_is_no_finding_either(bound_256m):
    # not a memory-bound failure (the child never grew to its bound): the MemoryError it is, unclassified
    exc = _failure_of(lambda: bytearray(2 ** 40))
    assert type(exc) is MemoryError
    assert not is_aidge_finding(_record(exc))


# -- Aidge's code: the bridge's forward ------------------------------------------------
@pytest.fixture(scope="module")
def relu_module():
    torch = pytest.importorskip("torch")
    import interop

    return interop.wrap(torch.nn.ReLU(), [(2, 3)]), torch.randn(2, 3)


def _allocating_scheduler_forward(self, tensors):
    """In place of the scheduler's forward (``_GraphRunner.run_forward``, called by the bridge's
    ``forward``): Aidge's kernels allocating until the bound."""
    keep = []
    while True:
        keep.append(b"x" * (16 << 20))


def _allocating_then_abort(self, tensors):
    keep = []
    try:
        while True:
            keep.append(b"x" * (16 << 20))
    except MemoryError:
        os.abort()  # Aidge's uncaught std::bad_alloc


def _aidge_forward(module, x, scheduler_forward):
    from interop.bridge import runner

    runner._GraphRunner.run_forward = scheduler_forward  # in the forked child only
    return module(x)


def test_a_memory_failure_inside_aidge_s_forward_stays_aidge_s(bound_256m, relu_module):
    module, x = relu_module
    exc = _failure_of(_aidge_forward, module, x, _allocating_scheduler_forward)
    assert isinstance(exc, AidgeCrash) and exc.memory_bound_hit is True
    assert str(exc).startswith("crash: process ran out of memory during forward")
    record = _record(exc)
    assert (record["category"], record["phase"], record["attribution"]) == ("crash", "forward", "aidge")
    assert is_aidge_finding(record)
    # read from its text: before, "ran out of memory" was no crash message: aidge_error (its "Aidge forward failed")
    category = categorize(str(exc))[0]
    assert category == "crash" and attribution_of(str(exc), category) == "aidge"


def test_a_child_that_dies_at_its_bound_inside_aidge_s_forward_stays_aidge_s(bound_256m, relu_module):
    module, x = relu_module
    exc = _failure_of(_aidge_forward, module, x, _allocating_then_abort)
    assert isinstance(exc, AidgeCrash) and exc.signal == "SIGABRT" and exc.memory_bound_hit is True
    assert "during forward" in str(exc) and "the case's own memory" not in str(exc)
    record = _record(exc)
    assert (record["category"], record["phase"], record["attribution"]) == ("crash", "forward", "aidge")
    assert is_aidge_finding(record)
    assert categorize(str(exc))[0] == "crash"


# -- the rule on texts alone -----------------------------------------------------------
_PEAK = ("; memory: the case child grew by 270 MiB at its peak (resident), its bound is 256 MiB "
         "(INTEROP_CASE_MEMORY, 0 turns it off): it died at its memory bound, most likely of it")


@pytest.mark.parametrize("text, expected", [
    ("crash: process killed by SIGSEGV during compile (innermost Python frame graph.py:_compile)" + _PEAK, "crash"),
    ("crash: process killed by SIGSEGV outside the bridge's phases (innermost Python frame test_x.py:body)" + _PEAK,
     CASE_MEMORY),
    ("crash: process killed by SIGABRT during export" + _PEAK, CASE_MEMORY),  # torch's exporter was running
    ("crash: process killed by SIGKILL outside the bridge's phases" + _PEAK, CASE_MEMORY),
    ("crash: process killed by SIGKILL during backward" + _PEAK, "killed"),  # Aidge's code, killed from outside
    ("crash: process ran out of memory during backward: the case child reached its memory bound", "crash"),
    ("crash: process ran out of memory outside the bridge's phases: the case child reached its memory bound",
     CASE_MEMORY),
    ("crash: process killed by SIGSEGV outside the bridge's phases", "crash"),  # no memory: the crash rule, unchanged
], ids=["segv-compile", "segv-outside", "abort-export", "sigkill-outside", "sigkill-backward", "oom-backward",
        "oom-outside", "segv-no-memory"])
def test_the_rule_on_the_text(text, expected):
    assert categorize(text)[0] == expected
    assert case_memory(None, text) is (expected == CASE_MEMORY)
