"""Issue 44, ``wrap`` on unusual callables: a forward that updates its buffers is refused at ``wrap``
(its exported graph would freeze them: right on the first call, silently wrong after), whatever the
route; an export that fails prints nothing (what the exporter printed rides on the error)."""
from __future__ import annotations

import pytest
import torch

import interop
from interop.errors import ExportError, StatefulModelError


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(1))

    def forward(self, x):
        self.calls += 1
        return x * self.calls


class BranchOnValue(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


def test_a_forward_that_updates_its_buffers_is_refused_naming_them_and_the_model_is_left_as_it_was():
    model = Counter()
    with pytest.raises(StatefulModelError, match="changes its buffer\\(s\\) calls") as caught:
        interop.wrap(model, [(2, 3)])
    assert caught.value.buffers == ["calls"] and float(model.calls) == 0.0


def test_a_training_batchnorm_s_running_statistics_are_not_such_state():
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3)).train()
    before = model[1].running_mean.clone()
    interop.wrap(model, [(4, 3)])
    assert torch.equal(model[1].running_mean, before)


def test_an_export_that_fails_prints_nothing_and_keeps_what_the_exporter_printed(capfd):
    with pytest.raises(ExportError) as caught:
        interop.wrap(BranchOnValue(), [(3, 3)], exporter="dynamo")
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert "what the exporter printed" in notes and "def forward" in notes


class Sleepy(torch.nn.Module):
    def forward(self, x):
        import time

        time.sleep(60)
        return x * 2


def test_a_hang_in_the_callable_s_own_code_is_not_blamed_on_aidge():
    verdict = interop.verify(Sleepy(), torch.randn(2, 3), timeout=5)
    assert verdict.outcome == "crash" and verdict.category == "hang"
    # the hung child's stack (dumped before it is killed, since 5cd33bf) places it: torch's exporter
    # was running the callable's forward, so the export's, with the callable's frame named
    # (before, with no stack: "outside the bridge's phases", unknown)
    assert verdict.attribution == "export" and verdict.phase == "export"
    assert "during export" in verdict.summary and "test_wrap_callables.py:forward" in verdict.summary
