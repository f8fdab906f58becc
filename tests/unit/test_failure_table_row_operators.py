"""A table row's ``operator`` is the Aidge operator, or the ONNX op of an import gap; never a torch
name: the torch function belongs to the case (issue 42, item 5).

The rule this file holds a row to: its ``operator`` names a torch function when it is

- the name of an OpInfo entry of the suite (``interop.cases._opinfo_ops.OPINFO_OPS``, with its
  variant: ``nn.functional.conv1d``, ``masked.std``, ``round.decimals_3``), or
- written as a torch path (``aten::...``, ``torch....``, ``nn.functional....``), or
- a lower-case name that resolves to a callable of ``torch``, ``torch.nn.functional`` or
  ``torch.Tensor`` (``exp``, ``sum``, ``bfloat16``).

Aidge's operators and the ONNX ops are CamelCase (``ReduceSum``, ``PaddedConv2D``), so none of
them is caught. Rows of the ``export`` phase are exempt: there torch's exporter failed,
neither Aidge nor an ONNX op was reached, and the operator the row names is the one torch could
not export.
"""
from __future__ import annotations

import glob
import json
import re
from pathlib import Path

import pytest

from interop.cases import failure_table as ft

TABLE = Path(ft.__file__).resolve().parent / "expected"
_TORCH_PATH = re.compile(r"^(aten::|torch\.|nn\.functional\.)")

#: rows that still name the torch function, because no record of the runs of 2026-12-04 named an Aidge
#: operator for every case they hold (docs/reproducers-table-operators.md): each with why. A row that gets
#: its operator leaves this list (the test fails while it is still listed)
STILL_TORCH_NAMED = {
    "0.10.1/opinfo-2-samples.aidge_error.json: nn.functional.relu6 nn.functional.relu6:s*_1x0x3":
        "the full graph does not reproduce in a fresh process",
    "0.10.1/opinfo-2-samples.aidge_error.json: nn.functional.softplus nn.functional.softplus:s*_1x0x3_beta3_threshold0_2":
        "the reduction crashed (SIGSEGV) before it found the node",
    "0.10.1/opinfo-2-samples.aidge_error.json: round.decimals_3 round.decimals_3:s*_1x0x3_decimals3":
        "the reduction crashed (SIGSEGV) before it found the node",
    "0.10.1/opinfo-2-samples.aidge_error.json: round.decimals_neg_3 round.decimals_neg_3:s*_1x0x3_decimals-3":
        "the reduction crashed (SIGSEGV) before it found the node",
    "0.10.1/opinfo-2-samples.crash.json: any any:s*_0d_dim0_keepdimTrue":
        "a crash in a multi-node graph, not reduced",
    "0.10.1/opinfo-2-samples.crash.json: nonzero nonzero:s*_0d_astupleTrue":
        "a crash in a multi-node graph, not reduced",
    "0.10.1/opinfo-2-samples.outputs_differ.json: log_softmax.with_dtype log_softmax.with_dtype:s*_5x5_0_dtypefloat64":
        "the full graph does not reproduce in a fresh process",
    "0.10.1/opinfo-shard-1-of-15.aidge_error.json: all all:s*_0d_dim-1_keepdimFalse":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo-shard-1-of-15.aidge_error.json: bucketize bucketize:s*_5x0x5_5_outint32False_rightFalse_float16":
        "a case whose record names no Aidge operator",
    "0.10.1/opinfo-shard-1-of-15.aidge_error.json: floor_divide floor_divide:s*_0x1x3_0x10x3":
        "the reduction crashed (SIGSEGV) before it found the node",
    "0.10.1/opinfo-shard-1-of-15.aidge_error.json: linalg.norm linalg.norm:s*_0_keepdimFalse_float64":
        "the full graph does not reproduce in a fresh process",
    "0.10.1/opinfo-shard-1-of-15.aidge_error.json: masked.argmax masked.argmax:s*_int640d_maskNone_dim-1_keepdimFalse_int64":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo-shard-1-of-15.aidge_error.json: masked.log_softmax masked.log_softmax:s*_5x0x0_-1_maskbool5x1x0_float64":
        "no node differs from onnxruntime on the first call: not reduced",
    "0.10.1/opinfo-shard-1-of-15.aidge_error.json: masked.norm masked.norm:s*_0d_-inf_maskNone_dim-1_keepdimFalse_float16":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo-shard-1-of-15.aidge_error.json: masked.softmin masked.softmin:s*_5x0x0_-1_maskbool5x0x1":
        "no node differs from onnxruntime on the first call: not reduced",
    "0.10.1/opinfo-shard-1-of-15.aidge_error.json: max.reduction_with_dim max.reduction_with_dim:s*_0d_0":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo-shard-1-of-15.aidge_error.json: ne ne:s*_0x1x3_0x10x3":
        "the reduction crashed (SIGSEGV) before it found the node",
    "0.10.1/opinfo-shard-1-of-15.aidge_error.json: nn.functional.pixel_unshuffle nn.functional.pixel_unshuffle:s*_1x1x1x0_downscalefactor1_float64":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo-shard-1-of-15.aidge_error.json: round.decimals_3 round.decimals_3:s*_1x0x3_decimals3_float64":
        "the reduction crashed (SIGSEGV) before it found the node",
    "0.10.1/opinfo-shard-1-of-15.aidge_error.json: unflatten unflatten:s*_4x0_1_2_0_0_0":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo-shard-1-of-15.compile_error.json: all all:s*_2_dim0_keepdimFalse_float16":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo-shard-1-of-15.compile_error.json: all all:s*_3x2x1x2_dim-1_keepdimFalse":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo-shard-1-of-15.crash.json: aminmax aminmax:s*_0d_dim0_keepdimTrue_float64":
        "a crash in a multi-node graph, not reduced",
    "0.10.1/opinfo-shard-1-of-15.crash.json: any any:s*_0d_dim0_keepdimTrue_float16":
        "a crash in a multi-node graph, not reduced",
    "0.10.1/opinfo-shard-1-of-15.crash.json: linalg.vector_norm linalg.vector_norm:s*_0d_ord1_dim0_keepdimTrue":
        "a crash in a multi-node graph, not reduced",
    "0.10.1/opinfo-shard-1-of-15.crash.json: linspace.tensor_overload linspace.tensor_overload:s*_0d_0_0_dtypefloat16_devicecpu_float16":
        "a crash in a multi-node graph, not reduced",
    "0.10.1/opinfo-shard-1-of-15.crash.json: masked.normalize masked.normalize:s*_5x10x5_-inf_2":
        "a crash in a multi-node graph, not reduced",
    "0.10.1/opinfo-shard-1-of-15.crash.json: masked.std masked.std:s*_5x5x5_maskNone_dim1_correction1_3":
        "a crash in a multi-node graph, not reduced",
    "0.10.1/opinfo-shard-1-of-15.crash.json: norm norm:s*_0d_3_0_True_float64":
        "a crash in a multi-node graph, not reduced",
    "0.10.1/opinfo-shard-1-of-15.import_error.json: nn.functional.max_pool2d nn.functional.max_pool2d:s*_2x2x6x6_kernelsize3_stride2_ceilmodeTrue_padding1_dilat_766d6936_float64":
        "no node differs from onnxruntime on the first call: not reduced",
    "0.10.1/opinfo-shard-1-of-15.output_shape_differs.json: masked.norm masked.norm:s*_0d_0_maskNone_dim0_keepdimTrue_float64":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo-shard-1-of-15.output_shape_differs.json: nn.functional.conv3d nn.functional.conv3d:s*_1x10x11x12_1x1x4x4x4_None_paddingsame_dilation3_float16":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo-shard-1-of-15.output_shape_differs.json: nn.functional.max_pool1d nn.functional.max_pool1d:s*_2x3_kernelsize3_stride2_ceilmodeTrue_padding0_dilation1_50f67052_float64":
        "the named run's cases fail otherwise now (std::bad_alloc, memory-unsafe): no record of this row",
    "0.10.1/opinfo-shard-1-of-15.outputs_differ.json: bucketize bucketize:s*_5x5x5_5_outint32True_rightTrue_float64":
        "the full graph does not reproduce in a fresh process",
    "0.10.1/opinfo-shard-1-of-15.outputs_differ.json: linspace.tensor_overload linspace.tensor_overload:s*_4_3_int640d_1_dtypefloat16_devicecpu_float16":
        "the full graph does not reproduce in a fresh process",
    "0.10.1/opinfo-shard-1-of-15.outputs_differ.json: nn.functional.conv2d nn.functional.conv2d:s*_4x5x5_1x4x2x3_1_stride2_padding1_groups1_dilation23_float16":
        "the full graph does not reproduce in a fresh process",
    "0.10.1/opinfo-shard-1-of-15.outputs_differ.json: nn.functional.conv_transpose1d nn.functional.conv_transpose1d:s*_int641x4_int641x2x3_None_stride2_padding1_outputpadding1_groups1_int64":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo-shard-1-of-15.outputs_differ.json: nn.functional.instance_norm nn.functional.instance_norm:s*_3x2x4_runningmean2_runningvar2_weight2_bias2_momentum-1_2":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo-shard-1-of-15.outputs_differ.json: nn.functional.interpolate.bilinear nn.functional.interpolate.bilinear:s*_2x3x4x4_3_3_scalefactorNone_modebilinear_aligncornersNone_float64":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo-shard-1-of-15.outputs_differ.json: nn.functional.interpolate.trilinear nn.functional.interpolate.trilinear:s*_2x3x4x4x4_sizeNone_scalefactor1_7_modetrilinear_alignco_a2b7ccbc_float64":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo-shard-1-of-15.outputs_differ.json: nn.functional.upsample_bilinear nn.functional.upsample_bilinear:s*_2x3x4x4_scalefactor1_7_float64":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo.aidge_error.json: all all:s*_0d":
        "onnxruntime cannot run the export: no intermediate values to find the node",
    "0.10.1/opinfo.crash.json: linspace.tensor_overload linspace.tensor_overload:s*_0d_int640d_0_dtypefloat32_devicecpu":
        "a crash in a multi-node graph, not reduced",
    "0.10.1/opinfo.crash.json: masked.normalize masked.normalize:s*_5_2_0":
        "a crash in a multi-node graph, not reduced",
    "0.10.1/opinfo.outputs_differ.json: nn.functional.instance_norm nn.functional.instance_norm:s*_5x5x5_runningmean5_runningvar5_weight5_bias5_momentum0_5_eps0_6":
        "onnxruntime cannot run the export: no intermediate values to find the node",
}


def _torch_function(name: str) -> bool:
    import torch

    from interop.cases._opinfo_ops import OPINFO_OPS

    if name in OPINFO_OPS or _TORCH_PATH.match(name):
        return True
    if not name[:1].islower():
        return False
    for base in (torch, torch.nn.functional, torch.Tensor):
        obj = base
        for part in name.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if obj is not None and (callable(obj) or isinstance(obj, torch.dtype)):
            return True
    return False


@pytest.mark.parametrize("name", ["nn.functional.conv1d", "masked.std", "exp", "sum", "bfloat16",
                                  "aten::diff", "torch.export decomposition", "linalg.vector_norm",
                                  "round.decimals_3", "__rmatmul__"])
def test_the_rule_catches_torch_names(name):
    assert _torch_function(name)


@pytest.mark.parametrize("name", ["ReduceSum", "PaddedConv2D", "MaxPooling3D", "Ln", "FC", "ConstantOfShape",
                                  "LayerNormalization", "Sin"])
def test_the_rule_leaves_aidge_and_onnx_operators(name):
    assert not _torch_function(name)


def test_no_row_of_any_table_file_names_a_torch_function_as_its_operator():
    files = sorted(glob.glob(str(TABLE / "*" / "*.json")))
    assert files
    torch_named = set()
    for path in files:
        rows = json.loads(Path(path).read_text(encoding="utf-8"))["rows"]
        for row in rows:
            if row["phase"] != "export" and _torch_function(row["operator"]):
                torch_named.add(f"{Path(path).parent.name}/{Path(path).name}: {row['operator']} {row['cases'][0]}")
    new = sorted(torch_named - set(STILL_TORCH_NAMED))
    assert not new, f"{len(new)} rows name a torch function as their operator: {new[:20]}"
    named_now = sorted(set(STILL_TORCH_NAMED) - torch_named)
    assert not named_now, f"rows of STILL_TORCH_NAMED that no longer name a torch function (drop them): {named_now}"


def _rec(row_ref, torch_op, key, error, outcome="xfailed", **more):
    return {"expected": {"row": row_ref}, "outcome": outcome, "operator": torch_op, "case_key": key,
            "category": "aidge_error", "error": error, "backend": "cpu", **more}


def test_a_row_takes_the_operator_its_records_name_and_splits_only_where_each_selector_is_one_operator(tmp_path):
    from interop.reporting.triage_operators import apply_operator_changes, operator_changes, row_operators

    folder = tmp_path / "0.10.1"
    folder.mkdir()
    base = {"source": "opinfo", "phase": "forward", "category": "aidge_error", "quote": "q", "aidge": ">=0.10.1",
            "backends": ["cpu"]}
    rows = [dict(base, operator="sum", cases=["sum:s*_1", "sum:s*_2"]),
            dict(base, operator="cdist", cases=["cdist:s*_1_5", "cdist:s*_2"]),
            dict(base, operator="ne", cases=["ne:s*_1"]),
            dict(base, operator="ReduceMax", cases=["amax:s*_1"])]
    path = folder / "opinfo.aidge_error.json"
    ft.write_table_file(path, "0.10.1", rows)
    ref = "0.10.1/opinfo.aidge_error.json#"
    records = [_rec(ref + "0", "sum", "s0_1", "(operator ReduceSum, node 'x'): bad"),
               _rec(ref + "0", "sum", "s1_2", "(operator ReduceSum, node 'y'): bad"),
               _rec(ref + "1", "cdist", "s0_1.5", "(operator Pow, node 'p'): bad"),
               _rec(ref + "1", "cdist", "s3_2", "(operator Unsqueeze, node 'u'): bad"),
               _rec(ref + "2", "ne", "s0_1", "crash: process killed by SIGSEGV during forward"),
               _rec(ref + "3", "amax", "s0_1", "(operator ReduceMin, node 'm'): bad"),
               _rec(ref + "0", "sum", "s2_1", "(operator Add, node 'a'): bad", outcome="passed")]
    files, changes = operator_changes(row_operators(records), tmp_path)
    by_row = {c["row"]: c for c in changes}
    assert by_row[ref + "0"]["after"] == "ReduceSum"  # the passed record does not count
    assert by_row[ref + "1"]["split"] == {"Pow": ["cdist:s*_1_5"], "Unsqueeze": ["cdist:s*_2"]}
    assert by_row[ref + "2"]["after"] is None and "no record names" in by_row[ref + "2"]["why"]
    assert ref + "3" not in by_row  # already an Aidge operator: a run does not overrule it
    before = path.read_text(encoding="utf-8")
    apply_operator_changes(files, changes)
    after = json.loads(path.read_text(encoding="utf-8"))["rows"]
    assert [(r["operator"], r["cases"]) for r in after] == [
        ("ReduceSum", ["sum:s*_1", "sum:s*_2"]), ("Pow", ["cdist:s*_1_5"]), ("Unsqueeze", ["cdist:s*_2"]),
        ("ne", ["ne:s*_1"]), ("ReduceMax", ["amax:s*_1"])]
    assert path.read_text(encoding="utf-8") == ft.format_rows("0.10.1", after) != before
