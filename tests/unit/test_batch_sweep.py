"""Issue 45: the batch sweep reaches the architectures (``python -m interop.diagnostics.batch_sweep
--architectures``): an architecture wrapped at its example call, called at the same batch, at
batch+1 and on a second input, each forward compared with torch's. Here on two small stand-ins
(the sweep of the 40 is a measurement: docs/fidelity.md)."""
from __future__ import annotations

import pytest
import torch

from interop.diagnostics.batch_sweep import LOUD, MATCH, SILENT, _grow_batch, _second_input, sweep_architecture
from interop.zoo.architectures import Architecture

pytest.importorskip("aidge_core")


class _Flatten(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(12, 3)

    def forward(self, x):
        return self.fc(x.view(2, -1))  # bakes the batch of 2 into the graph


def _arch(name, factory, shape):
    return Architecture(name, "test", "stand-in", factory, lambda: ((torch.randn(*shape),), {}))


def test_an_architecture_is_swept_at_the_same_batch_batch_plus_one_and_a_second_input():
    row = sweep_architecture(_arch("mlp", lambda: torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh()),
                                   (2, 4)), exporter="torchscript")
    assert [(b, f) for b, f, _, _ in row.calls] == [(2, MATCH), (3, MATCH), (2, MATCH)]
    assert not row.silent


def test_a_batch_baked_into_the_graph_is_loud_never_silent():
    row = sweep_architecture(_arch("flatten", _Flatten, (2, 3, 4)), exporter="torchscript")
    outcomes = {label.split(":")[0]: f for _, f, _, label in row.calls}
    assert outcomes["same"] == MATCH and outcomes["second input"] == MATCH
    assert outcomes["batch+1"] == LOUD and SILENT not in outcomes.values()


def test_the_inputs_grown_and_redrawn():
    ids = torch.tensor([[1, 5, 2], [3, 0, 4]])
    (grown,), kw = _grow_batch((ids,), {"mask": torch.ones(2, 3)}, 1)
    assert grown.shape == (3, 3) and torch.equal(grown[2], ids[0]) and kw["mask"].shape == (3, 3)
    (other,), _ = _second_input((ids,), {}, 0)
    assert other.shape == ids.shape and not torch.equal(other, ids) and int(other.max()) <= 5


def test_a_moduleinfo_case_of_the_default_selection_is_swept():
    from interop.cases.moduleinfo import ModuleInfoUnavailable, moduleinfo_cases
    from interop.diagnostics.batch_sweep import sweep_moduleinfo_case

    try:
        cases = [c for c in moduleinfo_cases(["nn.AdaptiveAvgPool1d"]) if not c.training]
    except ModuleInfoUnavailable:
        pytest.skip("torch's ModuleInfo database is not installed")
    row = sweep_moduleinfo_case(cases[0])
    assert [f for _, f, _, _ in row.calls] == [MATCH, MATCH, MATCH]
    assert row.calls[1][0] == row.wrapped_at + 1
