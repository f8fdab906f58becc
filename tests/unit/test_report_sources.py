"""The report per source (catalog JSON, OpInfo, ...) and per attribution: findings attributed
to the export or to precision get their own sections, not the Aidge bugs'."""
from __future__ import annotations

from interop.console import parse_pytest_output, text_run
from interop.reporting import build_report, format_report
from interop.records.sources import operator_of
from interop.records.sources import attribution_of, source_of

OUTPUT = """\
=========================== short test summary info ============================
PASSED tests/test_operators.py::test_ReLU_interop[ReLU_rank_2]
PASSED tests/test_opinfo.py::test_opinfo[opinfo_tanh_s0_20]
XFAIL tests/test_operators.py::test_Abs_interop[Abs_rank_2] - [backward_not_implemented] Abs backward: Backward not yet implemented for Abs_Op on backend cpu
XFAIL tests/test_opinfo.py::test_opinfo[opinfo_sin_s0_20x20] - [gradients_differ] sin backward: Tensors are not close at input grad [0]! [attribution aidge]
XFAIL tests/test_opinfo.py::test_opinfo[opinfo_nn.functional.softplus_s0_20_beta3] - [outputs_differ] nn.functional.softplus forward: Tensors are not close at output! [attribution export]
XFAIL tests/test_opinfo.py::test_opinfo[opinfo_asin_s0_20x20] - [gradients_differ] asin backward: Tensors are not close at input grad [0]! [attribution precision]
================= 2 passed, 4 xfailed in 1.00s =================
"""


def test_sources_and_attributions_are_read_from_the_run():
    assert source_of("tests/test_opinfo.py::test_opinfo[x]") == "OpInfo"
    assert source_of("tests/test_operators.py::test_ReLU_interop[x]") == "catalog JSON"
    assert source_of("tests/test_aidge_configs.py::test_aidge_config[aidge.relu_x]") == "Aidge configs (aidge-benchmark)"
    assert operator_of("opinfo_nn.functional.conv2d_s0_1x3x4x4") == "nn.functional.conv2d"
    assert attribution_of("...\nattribution: export (onnxruntime ...)", "outputs_differ") == "export"
    assert attribution_of("Aidge import failed: ...", "unsupported_operator") == "aidge"
    assert attribution_of("torch.onnx.export failed", "export_error (test strategy)") == "export"
    # a process that died inside torch.onnx.export died in torch's code
    assert attribution_of("crash: process killed by SIGFPE during export (innermost Python frame x)", "crash") == "export"
    assert attribution_of("crash: process killed by SIGSEGV during forward (innermost Python frame x)", "crash") == "aidge"


def test_report_counts_per_source_and_keeps_export_and_precision_apart():
    report = build_report(text_run(parse_pytest_output(OUTPUT)))
    opinfo = report["per_source"]["OpInfo"]
    assert opinfo["cases"] == 4 and opinfo["passed"] == 1 and opinfo["findings"] == 3
    assert opinfo["by_attribution"] == {"aidge": 1, "export": 1, "precision": 1}
    assert report["per_source"]["catalog JSON"]["by_category"] == {"backward_not_implemented": 1}
    aidge_ops = {g["operator"] for g in report["aidge_bugs"]}
    assert aidge_ops == {"Abs", "sin"}
    assert [g["operator"] for g in report["export_findings"]] == ["nn.functional.softplus"]
    assert [g["operator"] for g in report["precision_findings"]] == ["asin"]
    text = format_report(report)
    assert "== Per source" in text and "OpInfo: 4 case(s), 1 passed" in text
    assert "== Export findings" in text and "== Precision findings" in text
    assert "[attribution" not in text.split("== Export findings")[0].split("== Aidge bugs")[1]
