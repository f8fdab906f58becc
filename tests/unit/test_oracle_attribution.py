"""The oracle's one attribution rule (:func:`interop.oracle.attribution.attribute_forward`) on
plain tensors: precision first, then onnxruntime, whose own difference from torch is judged by
the same float32-error rule."""
from __future__ import annotations

import torch

from interop.oracle.attribution import attribute_backward, attribute_forward

EXACT = torch.linspace(-3, 3, 64, dtype=torch.float64)
TORCH32 = (EXACT + 5e-5 * torch.sin(EXACT * 7)).float()  # torch float32 errs up to 5e-5 (a deep stack)


def _attribute(aidge, ort):
    return attribute_forward(aidge_out=[aidge], torch_out=[TORCH32], exact=lambda: [EXACT], onnx=lambda: [ort])


def test_aidge_within_float32_s_own_error_is_precision():
    assert _attribute((EXACT - 6e-5 * torch.cos(EXACT)).float(), TORCH32)[0] == "precision"


def test_onnxruntime_off_by_rounding_only_agrees_with_torch():
    """Before 2026-12-07 onnxruntime 6e-5 from torch (its own float32 rounding, beyond the tight
    table) made a real Aidge defect (1.39 off: a train-mode BatchNorm1d stack) the export's."""
    ort = (EXACT + 4e-5 * torch.cos(EXACT * 3)).float()
    aidge = TORCH32.clone()
    aidge[5] += 1.39
    attribution, why = _attribute(aidge, ort)
    assert attribution == "aidge" and "within float32 rounding" in why, why


def test_an_export_that_differs_beyond_rounding_is_the_export_s():
    ort = TORCH32 + 0.5
    attribution, why = _attribute(ort.clone(), ort)
    assert attribution == "export" and "Aidge agrees with onnxruntime" in why, why


def test_onnxruntime_refusing_the_model_is_the_export_s_and_no_onnxruntime_is_unknown():
    def refuse():
        raise RuntimeError("[ONNXRuntimeError] : 10 : INVALID_GRAPH")

    wrong = TORCH32 + 1
    assert attribute_forward(aidge_out=[wrong], torch_out=[TORCH32], exact=None, onnx=refuse)[0] == "export"
    assert attribute_forward(aidge_out=[wrong], torch_out=[TORCH32], exact=None, onnx=None)[0] == "unknown"


def test_a_gradient_is_judged_against_float64_alone():
    wrong = TORCH32 + 1
    assert attribute_backward(aidge_grad=wrong, torch_grad=TORCH32, exact_grad=EXACT)[0] == "aidge"
    assert attribute_backward(aidge_grad=TORCH32, torch_grad=TORCH32 + 1e-3, exact_grad=EXACT)[0] == "precision"
    assert attribute_backward(aidge_grad=wrong, torch_grad=TORCH32, exact_grad=None)[0] == "unknown"


def test_all_three_differing_blames_aidge_only_when_it_is_far_from_the_graph_s_values():
    """onnxruntime a little off torch beyond the float32 rule (3.6x torch's own error, as on a
    train-mode BatchNorm1d stack, Anomaly_train), Aidge 1.39 off both: Aidge's (before 2026-12-07:
    the export's). An export really wrong (onnxruntime 0.5 off) with Aidge 0.6 off it: still the export's."""
    ort = TORCH32.clone()
    ort[3] += 4e-4  # beyond 2 x torch's 5e-5 + rtol/atol: not rounding by the rule
    aidge = TORCH32.clone()
    aidge[5] += 1.39
    attribution, why = _attribute(aidge, ort)
    assert attribution == "aidge" and "does not compute what the graph says" in why, why
    wrong_export = TORCH32 + 0.5
    assert _attribute(TORCH32 + 1.1, wrong_export)[0] == "export"
