"""torch's two routes to ONNX through the bridge: ``wrap(exporter=...)``, ``verify(exporter=...)``,
``--exporter`` and the records' route fields (interop/exporters.py, interop/bridge/onnx_export.py)."""
from __future__ import annotations

import logging
import warnings

import pytest
import torch

import interop
from interop.bridge.onnx_export import export_to_onnx
from interop.bridge.onnx_export_dynamo import lower_castlike
from interop.errors import ExportError
from interop.exporters import AUTO_ORDER, EXPORTER_ENV, default_exporter, export_routes

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.filterwarnings("error")  # the bridge leaves the caller's warnings alone


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(8, 16), torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)) + 1.0)  # "+ 1.0": a CastLike on the dynamo route


class NoRoute(torch.nn.Module):
    def forward(self, x):  # aten::histc has no ONNX export on either route
        return torch.histc(x, 4)


def _encoder_layer():
    torch.manual_seed(0)
    return torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0).eval()


@pytest.mark.parametrize("route", ["torchscript", "dynamo"])
def test_each_route_wraps_and_matches_torch(route):
    torch.manual_seed(0)
    model, x = MLP().eval(), torch.randn(3, 8)
    am = interop.wrap(model, (3, 8), exporter=route)
    assert am.exporter == route
    torch.testing.assert_close(am(x), model(x), rtol=1e-5, atol=1e-6)
    assert not am.unmapped_state  # every parameter has its Aidge Producer on both routes


def test_the_dynamo_route_keeps_its_route_at_a_new_batch_size():
    torch.manual_seed(0)
    model = MLP().eval()
    am = interop.wrap(model, (3, 8), exporter="dynamo")
    x = torch.randn(5, 8)
    torch.testing.assert_close(am(x), model(x), rtol=1e-5, atol=1e-6)


def test_auto_takes_torchscript_first():
    assert AUTO_ORDER == ("torchscript", "dynamo")
    assert interop.wrap(MLP().eval(), (2, 8), exporter="auto").exporter == "torchscript"


def test_the_default_route_is_auto_or_the_environment(monkeypatch):
    monkeypatch.delenv(EXPORTER_ENV, raising=False)
    assert default_exporter() == "auto"
    monkeypatch.setenv(EXPORTER_ENV, "dynamo")
    assert default_exporter() == "dynamo"
    assert interop.wrap(MLP().eval(), (2, 8)).exporter == "dynamo"
    monkeypatch.setenv(EXPORTER_ENV, "jit")
    with pytest.raises(ValueError, match="INTEROP_EXPORTER='jit'"):
        interop.wrap(MLP().eval(), (2, 8))


def test_an_unknown_route_is_refused_by_name():
    with pytest.raises(ValueError, match="exporter must be one of"):
        interop.wrap(MLP(), (2, 8), exporter="onnxscript")
    with pytest.raises(ValueError, match="exporter must be one of"):
        interop.verify(torch.relu, torch.randn(3), exporter="jit")


def test_a_model_no_route_exports_names_both_routes_and_prints_nothing(capfd):
    with pytest.raises(ExportError) as info:
        interop.wrap(NoRoute(), (2, 16), exporter="auto")
    text = str(info.value)
    assert "every route (torchscript, dynamo)" in text and "aten::histc" in text
    assert set(info.value.failed_routes) == {"torchscript", "dynamo"}
    assert "\x1b[" not in text  # the dynamo exporter's colour codes are stripped
    assert capfd.readouterr() == ("", "")


def test_one_route_failing_names_that_route():
    with pytest.raises(ExportError, match=r"failed for NoRoute \(torchscript route\): ") as info:
        interop.wrap(NoRoute(), (2, 16), exporter="torchscript")
    assert info.value.exporter == "torchscript"


def test_the_dynamo_route_prints_nothing_and_leaves_logging_alone(capfd):
    levels = {name: logging.getLogger(name).level for name in ("torch.onnx", "torch.export", "onnxscript")}
    interop.wrap(MLP().eval(), (2, 8), exporter="dynamo")
    assert capfd.readouterr() == ("", "")
    assert {name: logging.getLogger(name).level for name in levels} == levels


def test_the_encoder_layer_goes_through_dynamo_when_asked():
    # the row: TorchScript fails on scaled_dot_product_attention (is_causal a Tensor) when
    # the layer is exported directly; the dynamo route exports it and Aidge either matches or
    # fails with an attributed Aidge error (docs/exporters.md)
    layer, x = _encoder_layer(), torch.randn(1, 5, 16)
    try:
        am = interop.wrap(layer, (1, 5, 16), exporter="dynamo")
        out = am(x)
    except interop.InteropError as exc:
        assert exc.phase in ("import", "compile", "forward") and getattr(exc, "operator", None), exc
        return
    assert am.exporter == "dynamo"
    torch.testing.assert_close(out, layer(x), rtol=1e-4, atol=1e-5)


def test_castlike_is_lowered_to_cast_with_the_type_of_its_second_input():
    # a convolution without bias: torchlib makes its zero bias with CastLike
    # (torch's unoptimised dynamo graph: the route's own optimiser now folds that zero bias away)
    conv = torch.nn.Conv2d(3, 4, 3, padding=1, bias=False).eval()
    with warnings.catch_warnings():  # torch 2.13's exporter warns of its own deprecated pytree use
        warnings.simplefilter("ignore")
        program = torch.onnx.export(conv, (torch.randn(2, 3, 8, 8),), dynamo=True, optimize=False, verbose=False,
                                    report=False, external_data=False)
    proto = program.model_proto
    assert "CastLike" in [n.op_type for n in proto.graph.node]
    ops = [n.op_type for n in lower_castlike(proto).graph.node]
    assert "CastLike" not in ops and "Cast" in ops
    assert lower_castlike(proto) is proto  # nothing left to lower: unchanged
    exported = export_to_onnx(conv, [torch.randn(2, 3, 8, 8)], exporter="dynamo")
    assert "CastLike" not in [n.op_type for n in exported.proto.graph.node]


def test_export_routes_collects_the_route_of_each_export_also_from_an_isolated_child():
    from interop.equivalence.isolation import run_isolated

    def wrap_in_child():
        return interop.wrap(MLP().eval(), (2, 8), exporter="dynamo").exporter

    with export_routes() as routes:
        interop.wrap(MLP().eval(), (2, 8), exporter="torchscript")
        assert run_isolated(wrap_in_child, timeout=120) == "dynamo"
        with pytest.raises(ExportError):
            interop.wrap(NoRoute(), (2, 16), exporter="auto")
    assert [r for r, _, _ in routes] == ["torchscript", "dynamo", None]
    assert routes[0][2] >= 4 and routes[2][2] is None  # Gemm, Relu, Add, Gemm (+ constants): the node count
    assert set(routes[2][1]) == {"torchscript", "dynamo"}


def test_the_verdict_says_which_route_made_the_graph():
    verdict = interop.verify(MLP().eval(), torch.randn(2, 8), exporter="dynamo")
    assert verdict.passed and verdict.exporter == "dynamo", verdict.message
    verdict = interop.verify(MLP().eval(), torch.randn(2, 8))
    assert verdict.passed and verdict.exporter == "torchscript"
    verdict = interop.verify(NoRoute(), torch.randn(2, 16))
    assert verdict.outcome == "error" and verdict.attribution == "export" and verdict.exporter is None
    assert "every route (torchscript, dynamo)" in verdict.message


def test_train_mode_batchnorm_on_the_dynamo_route_is_exported_in_train_mode():
    # measured until 2026-12-03: torchlib wrote train-mode BatchNorm as inference BatchNorm
    # (onnxruntime as far off as Aidge: attributed to the export). The route now writes
    # training_mode=1, onnxruntime agrees with torch, and what is left is Aidge's own BatchNorm2D
    # defect (it normalises with the running statistics), as on the TorchScript route
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)).train()
    with torch.no_grad():
        model[1].running_mean.uniform_(-1, 1)
    verdict = interop.verify(model, torch.randn(4, 3, 8, 8), exporter="dynamo", backward=False)
    assert verdict.outcome == "fail" and verdict.attribution == "aidge", verdict.summary


def test_the_records_say_which_route_each_case_took(pytester):
    pytester.makepyfile(test_routes="""
        import torch, interop

        def test_default():
            interop.wrap(torch.nn.Linear(4, 2).eval(), (1, 4))

        def test_no_export():
            pass
    """)
    result = pytester.runpytest_subprocess("--exporter=dynamo", "--records",
                                           str(pytester.path / "rec"), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    import json

    lines = (pytester.path / "rec" / "records.jsonl").read_text().splitlines()
    records = {json.loads(line)["case"]: json.loads(line) for line in lines}
    assert records["default"]["exporter"] == "dynamo" and records["default"]["export_route"] == "dynamo"
    assert records["default"]["onnx_nodes"] >= 1
    assert records["no_export"]["exporter"] == "dynamo" and "export_route" not in records["no_export"]


def test_wrap_in_dynamo_leaves_the_callers_warning_filters():
    before = list(warnings.filters)
    interop.wrap(MLP().eval(), (2, 8), exporter="dynamo")
    assert warnings.filters == before


def test_a_table_row_can_hold_for_some_routes_only(monkeypatch):
    from interop.cases.failure_table import ExpectedFailure, entry_of

    row = {"source": "opinfo", "operator": "Sign", "phase": "import", "category": "unsupported_operator",
           "quote": "(ONNX op Sign)", "aidge": ">=0.10.1", "exporters": ["auto", "dynamo"],
           "cases": ["nn.functional.adaptive_avg_pool2d:s*_8x8x8_5_7"]}
    entry = entry_of(row)
    covers = lambda: entry.covers("opinfo", "nn.functional.adaptive_avg_pool2d", "s0_8x8x8_5_7")  # noqa: E731
    monkeypatch.delenv(EXPORTER_ENV, raising=False)
    assert covers()  # auto
    monkeypatch.setenv(EXPORTER_ENV, "torchscript")
    assert not covers()
    monkeypatch.setenv(EXPORTER_ENV, "dynamo")
    assert covers()
    with pytest.raises(ValueError, match="key 'exporters'"):
        ExpectedFailure("Sign", "import", "unsupported_operator", "x", ("a:b",), kind="opinfo", exporters=("jit",))


def test_the_declared_exporter_choices_are_the_exporters_module_s():
    """interop.env declares INTEROP_EXPORTER's choices as a literal (interop.exporters reads the variable
    through interop.env.read: importing it back would make a cycle); they must stay the same."""
    from interop import env, exporters

    assert env._exporters() == exporters.EXPORTER_CHOICES
