"""Issue 46: ``verify``'s :class:`~interop.equivalence.verdict.Verdict` takes a failure's
category, phase and attribution from the one decider (:func:`interop.categories.failure_facts`,
:func:`interop.categories.attribution_rule`), the one the expected-failure guard, the records and
the console reader read. Before, ``verdict.py`` decided them by its own lines, and the two rules
disagreed:

- a crash or a hang that no bridge phase locates (the callable's own ``time.sleep``,
  ``os._exit``, a signal in torch's code; a timeout, whose stack is never read) was ``unknown``
  in the verdict and ``aidge`` in the record: now ``unknown`` in both (nothing says Aidge's code
  was running), and the verdict's phase is None, not ``"unknown"``, as the record's;
- a test-strategy failure other than the export's (``shape_mismatch``, ``config_error``) was
  ``aidge`` in the verdict and nobody's in the record: now nobody's (the verdict says
  ``unknown``, as it says for ``not_comparable`` and a process killed from outside);
- an error that carries its own attribution (the bridge's ``ValueMismatchError``, measured
  against onnxruntime) was ``aidge`` in the verdict whatever it said: now what it says.

Run as a script (``python tests/unit/test_verify_verdict.py``, from the repository root of any
commit) it prints ``(outcome, category, attribution, phase)`` of ``verify`` on a failing callable
of each branch: the before/after evidence of docs/journal.md (issue 46).
"""
from __future__ import annotations

import os
import signal
import sys
import time

import torch

import interop
from interop.errors import AidgeCrash
from interop.equivalence.isolation import run_isolated
from interop.equivalence.verdict import verdict_from


def _outside_the_export() -> bool:
    """Whether the callable runs in torch's own calls (not traced by torch.onnx's routes)."""
    return not (torch.jit.is_tracing() or torch.compiler.is_compiling()
                or isinstance(torch.empty(0), torch._subclasses.FakeTensor))


class _Dies(torch.nn.Module):
    """Kills its process (``how``) when torch calls it outside the export: the check's own torch calls."""

    def __init__(self, how: str):
        super().__init__()
        self.how = how

    def forward(self, x):
        if _outside_the_export() and not x.requires_grad:
            if self.how == "segv":
                os.kill(os.getpid(), signal.SIGSEGV)
            elif self.how == "exit":
                os._exit(3)
            elif self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            elif self.how == "sleep":
                time.sleep(60)
        return x * 2


def _segfault(x):
    os.kill(os.getpid(), signal.SIGSEGV)  # while torch.onnx traces it: during the export
    return x


class _BranchOnValue(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


def _segv():
    os.kill(os.getpid(), signal.SIGSEGV)


def _crash_of(fn, *args, **kwargs) -> AidgeCrash:
    try:
        run_isolated(fn, *args, **kwargs)
    except AidgeCrash as exc:
        return exc
    raise AssertionError("the child did not die")


#: (name, thunk returning a Verdict): one failing callable per branch of the verdict
def branches():
    import torch.nn.functional as F

    return [
        ("crash in the callable during the export", lambda: interop.verify(_segfault, torch.randn(2))),
        ("crash (SIGSEGV) in the callable, outside the export",
         lambda: interop.verify(_Dies("segv"), torch.randn(2, 3), backward=False)),
        ("os._exit in the callable, outside the export",
         lambda: interop.verify(_Dies("exit"), torch.randn(2, 3), backward=False)),
        ("SIGKILL in the callable (killed from outside)",
         lambda: interop.verify(_Dies("kill"), torch.randn(2, 3), backward=False)),
        ("hang in the callable (timeout 3 s)",
         lambda: interop.verify(_Dies("sleep"), torch.randn(2, 3), backward=False, timeout=3)),
        ("Aidge crash in its forward, graph onnxruntime refuses (sum of a 0-d, keepdim)",
         lambda: interop.verify(torch.sum, torch.randn(()), 0, keepdim=True)),
        ("Aidge crash in its forward (index_select of a 0-d)",
         lambda: interop.verify(torch.index_select, torch.randn(()), 0, torch.tensor([0]), backward=False)),
        ("export error (dynamo, branch on a value)",
         lambda: interop.verify(_BranchOnValue(), torch.randn(3, 3), exporter="dynamo")),
        ("unsupported operator (elu)", lambda: interop.verify(F.elu, torch.randn(3))),
        ("Aidge error on a graph onnx refuses (Softmax of a 0-d)",
         lambda: interop.verify(torch.nn.Softmax(dim=0), torch.tensor(0.5))),
        ("forward mismatch, Aidge's (relu of NaN)",
         lambda: interop.verify(torch.relu, torch.tensor([1.0, float("nan"), -1.0]), backward=False)),
        ("forward mismatch, the export's (softplus threshold)",
         lambda: interop.verify(F.softplus, torch.linspace(-3, 3, 12).reshape(3, 4), beta=1, threshold=1)),
        ("gradient mismatch (leaky_relu)", lambda: interop.verify(F.leaky_relu, torch.linspace(-1, 1, 8), 0.2)),
        ("not comparable (dropout in training mode)",
         lambda: interop.verify(torch.nn.Dropout(0.5).train(), torch.randn(4, 8))),
        ("no tensor argument", lambda: interop.verify(lambda n: torch.zeros(n), 3, isolate=False)),
        # exceptions verify's check can raise, given to verdict_from (no Aidge run)
        ("a shape error of the test (text-decided)",
         lambda: _verdict_from(RuntimeError("shape '[2, 3]' is invalid for input of size 5"))),
        ("the bridge's value check, attributed to the export", lambda: _verdict_from(_value_mismatch("export"))),
        ("a child that died by a signal outside the bridge's phases", lambda: _verdict_from(_crash_of(_segv))),
    ]


def _verdict_from(exc):
    from interop.equivalence import verdict as verdict_module

    return verdict_module.verdict_from(exc)  # through the module: main() sees the exception


def _value_mismatch(who: str):
    from interop.bridge.value_check import ValueMismatchError

    return ValueMismatchError("Aidge's output [0] differs from torch's", phase="forward", what="output [0]",
                              attribution=who)


def main() -> None:
    """One line a branch: the verdict's (outcome, category, attribution, phase), then what a record
    of the same exception holds (``records.classify.finding_of``: category, attribution, phase)."""
    from interop.equivalence import verdict as verdict_module
    from interop.records.classify import finding_of

    seen = []
    real = verdict_module.verdict_from

    def capturing(exc):
        seen.append(exc)
        return real(exc)

    verdict_module.verdict_from = capturing  # verify's own call: the exception its verdict is made of
    try:
        for name, thunk in branches():
            seen.clear()
            started = time.perf_counter()
            v = thunk()
            rec = finding_of(seen[-1]) if seen else {}
            record = f"{rec.get('category')!s} / {rec.get('attribution')!s} / {rec.get('phase')!s}" if seen else "-"
            print(f"{name:80} | {v.outcome:5} | {v.category!s:31} | {v.attribution!s:7} | {v.phase!s:8} | "
                  f"record: {record:50} | {time.perf_counter() - started:5.1f} s", flush=True)
    finally:
        verdict_module.verdict_from = real


# ---------------------------------------------------------------------------------------
# the tests: the verdict and the record of one failure say the same (no Aidge run unless named)
# ---------------------------------------------------------------------------------------
def _same_as_the_record(exc):
    from interop.categories import failure_facts
    from interop.records.classify import finding_of

    verdict, record, facts = verdict_from(exc), finding_of(exc), failure_facts(exc)
    assert (verdict.category, verdict.phase) == (record["category"], record["phase"]) == (facts.category, facts.phase)
    assert verdict.attribution == (record["attribution"] or "unknown") == (facts.attribution or "unknown")
    return verdict, record


def test_a_crash_outside_the_bridge_s_phases_is_nobody_s_known_in_the_verdict_and_the_record():
    # a SIGSEGV in the case's own code: the faulting thread's stack names no bridge frame.
    # before: the verdict said unknown (phase "unknown"), the record aidge
    verdict, record = _same_as_the_record(_crash_of(_segv))
    assert (verdict.outcome, verdict.category, verdict.attribution, verdict.phase) == ("crash", "crash", "unknown", None)
    # a timeout: no stack is read (the child is killed), so no phase; before: record aidge
    verdict, record = _same_as_the_record(_crash_of(time.sleep, 30, timeout=0.5))
    assert (verdict.category, verdict.attribution, record["attribution"]) == ("hang", "unknown", "unknown")


def test_a_located_crash_is_aidge_s_or_the_export_s_in_both():
    for phase, who in (("forward", "aidge"), ("compile", "aidge"), ("export", "export")):
        exc = AidgeCrash(phase, f"crash: process killed by SIGSEGV during {phase} (innermost Python frame x.py:f)",
                         signal="SIGSEGV")
        verdict, record = _same_as_the_record(exc)
        assert (verdict.attribution, verdict.phase) == (who, phase)
    killed = AidgeCrash("forward", "crash: process killed by SIGKILL during forward", signal="SIGKILL")
    verdict, record = _same_as_the_record(killed)
    assert (verdict.category, verdict.attribution, record["attribution"]) == ("killed", "unknown", None)


def test_changed_verdicts_a_test_strategy_error_and_a_stated_attribution():
    # before: shape_mismatch (test strategy) [aidge]; the record said nobody
    verdict, record = _same_as_the_record(RuntimeError("shape '[2, 3]' is invalid for input of size 5"))
    assert (verdict.category, verdict.attribution, record["attribution"]) == (
        "shape_mismatch (test strategy)", "unknown", None)
    # before: [aidge] whatever the error said; it carries onnxruntime's answer
    verdict, _ = _same_as_the_record(_value_mismatch("export"))
    assert (verdict.outcome, verdict.category, verdict.attribution) == ("error", "outputs_differ", "export")


def test_the_console_reader_agrees_on_a_crash_without_a_phase():
    from interop.records.sources import attribution_of

    text = "crash: process timed out after 120 s outside the bridge's phases"
    assert attribution_of(text, "hang") == "unknown"  # before: aidge
    assert attribution_of("[crash] ReduceSum forward: crash: process killed by SIGSEGV", "crash") == "aidge"
    assert attribution_of("[crash] HannWindow export: boom", "crash") == "export"


def test_the_verdict_reads_the_one_decider(monkeypatch):
    from interop import categories

    calls = []
    real = categories.failure_facts
    monkeypatch.setattr(categories, "failure_facts", lambda exc: calls.append(exc) or real(exc))
    exc = RuntimeError("Aidge forward failed (operator Add): boom\nattribution: export (onnxruntime agrees)")
    verdict = verdict_from(exc)
    assert calls == [exc] and verdict.attribution == "export"
    source = (os.path.join(os.path.dirname(interop.__file__), "equivalence", "verdict.py"))
    with open(source, encoding="utf-8") as f:
        text = f.read()
    assert "categorize(" not in text and "kind_of(" not in text  # no second rule in verdict.py


def test_the_decider_is_re_exported_where_its_callers_found_it():
    from interop import categories
    from interop.cases import expected_failures

    for name in ("FailureFacts", "failure_facts", "attribution_rule"):
        assert getattr(expected_failures, name) is getattr(categories, name)


def test_verify_on_a_crash_and_a_hang_in_the_callable_s_own_code():
    # one real verify each (a fork, an export; about 10 s at load 5): the callable's own code dies
    v = interop.verify(_Dies("exit"), torch.randn(2, 3), backward=False)
    assert (v.outcome, v.category, v.attribution, v.phase) == ("crash", "crash", "unknown", None), v.summary
    v = interop.verify(_Dies("segv"), torch.randn(2, 3), backward=False)
    assert (v.outcome, v.category, v.attribution, v.phase) == ("crash", "crash", "unknown", None), v.summary


if __name__ == "__main__":
    sys.exit(main())
