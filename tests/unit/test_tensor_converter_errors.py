"""Error paths and corner cases of ``interop.bridge.tensors`` (fast, CPU only)."""
from __future__ import annotations

import aidge_core
import numpy as np
import pytest
import torch

from interop.bridge.tensors import (
    aidge_tensor_to_torch,
    convert_tensor,
    torch_tensor_to_aidge,
)


@pytest.mark.parametrize("copy", ["yes", 0, 1])
def test_copy_must_be_none_or_bool(copy):
    with pytest.raises(TypeError, match="copy"):
        torch_tensor_to_aidge(torch.zeros(2), copy=copy)
    with pytest.raises(TypeError, match="copy"):
        aidge_tensor_to_torch(aidge_core.Tensor(np.zeros(2, np.float32)), copy=copy)


@pytest.mark.parametrize("bad", [np.zeros(3), [1.0, 2.0], 3.0, None], ids=lambda b: type(b).__name__)
def test_wrong_input_types(bad):
    with pytest.raises(TypeError, match="torch.Tensor"):
        torch_tensor_to_aidge(bad)
    with pytest.raises(TypeError, match="aidge_core.Tensor"):
        aidge_tensor_to_torch(bad)
    with pytest.raises(TypeError, match=type(bad).__name__):
        convert_tensor(bad)


def test_meta_device_is_refused_by_name():
    with pytest.raises(RuntimeError, match="meta"):
        torch_tensor_to_aidge(torch.empty(2, 3, device="meta"))


def test_sparse_layout_is_refused_by_name():
    with pytest.raises(TypeError, match="sparse_coo"):
        torch_tensor_to_aidge(torch.eye(3).to_sparse())


def test_undefined_aidge_tensor_is_refused():
    with pytest.raises(ValueError, match="no data"):
        aidge_tensor_to_torch(aidge_core.Tensor())


def test_requires_grad_tensor_is_shared_and_kept():
    p = torch.nn.Parameter(torch.arange(6.0).reshape(2, 3))
    at = torch_tensor_to_aidge(p, copy=False)
    assert np.asarray(at).ctypes.data == p.data_ptr()
    with torch.no_grad():
        p.add_(1)
    assert np.asarray(at)[1, 2] == 6.0
    assert torch.equal(aidge_tensor_to_torch(torch_tensor_to_aidge(p, copy=True)), p.detach())


def test_negative_bit_view_is_resolved():
    x = torch.arange(6.0).reshape(2, 3)
    neg = torch._neg_view(x)
    assert neg.is_neg()
    assert torch.equal(aidge_tensor_to_torch(torch_tensor_to_aidge(neg)), -x)
    assert torch.equal(aidge_tensor_to_torch(torch_tensor_to_aidge(neg, copy=True)), -x)
    with pytest.raises(ValueError, match="negative-bit"):
        torch_tensor_to_aidge(neg, copy=False)


def test_raw_from_data_ptr_tensor_reads_back_right():
    """An N-d from_data_ptr tensor left with strides [1] is not 'plain': it is cloned."""
    x = torch.arange(24, dtype=torch.int32).reshape(2, 3, 4)
    raw = aidge_core.Tensor.from_data_ptr([2, 3, 4], x.data_ptr(), aidge_core.dtype.int32)
    assert list(raw.strides) == [1]
    assert torch.equal(aidge_tensor_to_torch(raw), x)
    with pytest.raises(ValueError):
        aidge_tensor_to_torch(raw, copy=False)


@pytest.mark.parametrize("copy", [None, True, False])
def test_empty_tensors_need_no_copy(copy):
    x = torch.empty(3, 0, dtype=torch.int8)
    at = torch_tensor_to_aidge(x, copy=copy)
    assert list(at.dims) == [3, 0]
    back = aidge_tensor_to_torch(at, copy=copy)
    assert back.shape == (3, 0) and back.dtype == torch.int8


def test_empty_conversion_does_not_leak_aidge_log_level():
    level = aidge_core.Log.get_console_level()
    torch_tensor_to_aidge(torch.empty(0))
    assert aidge_core.Log.get_console_level() == level
