"""Issue 42: a case whose torch output is bfloat16 gets a bundle that reproduces. numpy has no
bfloat16, so torch's expected values could not be written ("Got unsupported ScalarType BFloat16")
and the bundle of OpInfo `bfloat16` s0 0-d (Aidge 0.10.1: "missing or invalid registrar key:
("cpu", "bfloat16")" at compile) had no verdict. They are written as ml_dtypes' bfloat16, the type
onnx's numpy_helper reads and writes for a BFLOAT16 TensorProto."""
from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from interop import wrap

from bundle_case import captured_case

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


class _ToBfloat16(torch.nn.Module):
    def forward(self, x):
        return x.bfloat16()


def _bfloat16_output():
    wrap(_ToBfloat16(), [(3,)])


def test_a_bfloat16_output_is_written_and_the_bundle_reproduces(tmp_path):
    import onnx
    from onnx import TensorProto, numpy_helper

    folder = tmp_path / "bf16"
    meta, _ = captured_case(tmp_path, "bf16", _bfloat16_output)
    assert "expected_error" not in meta, meta["expected_error"]
    stored = onnx.load_tensor(str(folder / "test_data_set_0" / "output_0.pb"))
    assert stored.data_type == TensorProto.BFLOAT16
    x = numpy_helper.to_array(onnx.load_tensor(str(folder / "test_data_set_0" / "input_0.pb")))
    want = torch.from_numpy(x.copy()).bfloat16().float().numpy()
    assert np.array_equal(numpy_helper.to_array(stored).astype(np.float32), want)
    assert meta["reproduces"] is True and meta["repro"]["exit"] == 1, meta["repro"]
    assert meta["repro"]["line"].startswith("DEFECT PRESENT: compile"), meta["repro"]
