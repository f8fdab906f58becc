"""An Aidge error on an exported graph that onnx's own checker refuses is the export's, not Aidge's
(:mod:`interop.bridge.export_validity`), in ``wrap``, ``verify`` and the records; and a table row
that says (or, by the rule, means) Aidge disagrees with such a failure."""
from __future__ import annotations

import pytest
import torch

import interop
from interop.cases.expected_failures import disagreements
from interop.errors import AidgeError

pytest.importorskip("aidge_core")


def _all(t):
    return torch.all(t, dim=-1)


class _All(torch.nn.Module):
    def forward(self, t):
        return _all(t)


def test_aidge_refusing_an_invalid_export_is_the_export_s():
    """torch.all of a float tensor exports Not on the float input: onnx's checker and onnxruntime
    refuse it, so does Aidge. verify asked onnxruntime already; wrap and the suite (the records) did not before
    2026-12-07: the opinfo rows filed it as Aidge defects D-3f3b19bc and D-f702e4bf."""
    x = torch.randn(3, 2, 1, 2)
    verdict = interop.verify(_all, x, isolate=False)
    assert (verdict.outcome, verdict.category, verdict.attribution) == ("error", "compile_error", "export"), verdict
    with pytest.raises(AidgeError) as info:
        interop.wrap(_All(), example_inputs=[x], exporter="torchscript")
    assert info.value.attribution == "export"
    assert "the exported graph is invalid" in info.value.attribution_reason
    assert "tensor(float)" in info.value.attribution_reason


def test_a_valid_graph_s_aidge_error_stays_aidge_s():
    from interop.bridge.export_validity import blame_invalid_export

    class _Exported:  # a valid one-node graph
        from onnx import TensorProto, helper

        proto = helper.make_model(helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"])], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]),
            opset_imports=[helper.make_opsetid("", 18)])

    exc = blame_invalid_export(AidgeError("forward", "std::bad_alloc"), _Exported())
    assert exc.attribution is None and exc.attribution_reason is None


def test_a_row_meaning_aidge_disagrees_with_a_failure_saying_export():
    from interop.cases.failure_table import ExpectedFailure

    fields = {f.name for f in __import__("dataclasses").fields(ExpectedFailure)}
    row = ExpectedFailure(**{k: v for k, v in dict(operator="Not", cases=("Not:x",), phase="compile",
                                                     category="compile_error", error="Expected boolean").items()
                             if k in fields})
    assert row.attribution in (None, "")  # no attribution of its own: Aidge's, by the rule
    assert disagreements(row, "compile_error", "compile", "export") == ["attribution 'export' (entry: 'aidge')"]
    assert disagreements(row, "compile_error", "compile", None) == []


def test_an_operator_aidge_cannot_import_stays_aidge_s_on_an_invalid_graph_too():
    """logsumexp of a 0-d tensor: onnx's checker refuses the export, but Aidge has no importer for
    ReduceLogSumExp at all (the valid 5x5 graph is refused alike): Aidge's gap, not the export's."""
    from interop.errors import UnsupportedOperatorError

    class _LSE(torch.nn.Module):
        def forward(self, t):
            return torch.logsumexp(t, 0, True)

    with pytest.raises(UnsupportedOperatorError) as info:
        interop.wrap(_LSE(), example_inputs=[torch.randn(())], exporter="torchscript")
    assert info.value.attribution is None
