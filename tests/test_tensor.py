"""The tensor suite: exact torch <-> Aidge tensor conversion (``interop.bridge.tensors``).

Round trips must be bit-exact (NaN payloads, infinities and -0.0 included), keep dtype and
shape (``()`` for scalars, empty shapes too), and share memory exactly where the converter
claims it does.
"""
from __future__ import annotations

import gc
import weakref

import aidge_core
import numpy as np
import pytest
import torch

from interop.bridge.cuda import cuda_available, require_cuda
from interop.bridge.tensors import (
    DTYPE_TABLE,
    aidge_dtype,
    aidge_tensor_to_torch,
    convert_tensor,
    torch_dtype,
    torch_tensor_to_aidge,
)

CUDA_OK, CUDA_REASON = cuda_available()

DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint8,
    torch.bool,
]
SHAPES = [(), (0,), (2, 0, 3), (1,), (7,), (2, 3), (2, 3, 4, 5)]
DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param("cuda", id="cuda", marks=pytest.mark.skipif(not CUDA_OK, reason=CUDA_REASON)),
]
UNSUPPORTED_TORCH = [
    d
    for d in (
        torch.bfloat16,
        torch.complex64,
        torch.complex128,
        getattr(torch, "uint16", None),
        getattr(torch, "uint32", None),
        getattr(torch, "uint64", None),
        getattr(torch, "float8_e4m3fn", None),
    )
    if d is not None
]


def dtype_id(d: torch.dtype) -> str:
    return str(d).removeprefix("torch.")


def shape_id(s: tuple[int, ...]) -> str:
    return "scalar" if s == () else "x".join(map(str, s))


# -- samples and comparison ------------------------------------------------------------

_NAN_PAYLOAD = {  # quiet NaNs with a non-default payload, negative sign for one of them
    torch.float16: (torch.int16, [0x7E01, -0x01FF]),
    torch.float32: (torch.int32, [0x7FC12345, -0x003EDCBB]),
    torch.float64: (torch.int64, [0x7FF8000000000123, -0x7FFFFFFFFFEDCBA]),
}


def sample(dtype: torch.dtype, shape: tuple[int, ...], seed: int = 0) -> torch.Tensor:
    """Deterministic values exercising the edge cases of ``dtype`` (NaN, inf, -0.0, min/max)."""
    g = torch.Generator().manual_seed(seed)
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == torch.bool:
        flat = torch.randint(0, 2, (n,), generator=g).bool()
    elif dtype.is_floating_point:
        flat = (torch.randn(n, generator=g, dtype=torch.float64) * 100).to(dtype)
        info = torch.finfo(dtype)
        int_dtype, payloads = _NAN_PAYLOAD[dtype]
        special = torch.cat(
            [
                torch.tensor(payloads, dtype=int_dtype).view(dtype),
                torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, info.max,
                              info.min, info.tiny, info.tiny / 4], dtype=dtype),
            ]
        )
        k = min(n, special.numel())
        flat[:k] = special[:k]
    else:
        info = torch.iinfo(dtype)
        flat = torch.randint(info.min, info.max, (n,), generator=g, dtype=dtype)
        flat[: min(n, 2)] = torch.tensor([info.min, info.max], dtype=dtype)[: min(n, 2)]
    return flat.reshape(shape)


def assert_same(actual: torch.Tensor, expected: torch.Tensor) -> None:
    """Same dtype, shape, device and bits."""
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    assert actual.device == expected.device
    if expected.dtype.is_floating_point:
        torch.testing.assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)
        bits = {2: torch.int16, 4: torch.int32, 8: torch.int64}[expected.element_size()]
        assert torch.equal(actual.view(bits), expected.view(bits)), "bit patterns differ"
    else:
        assert torch.equal(actual, expected)


def aidge_bytes(t: aidge_core.Tensor) -> bytes:
    return np.array(t, copy=True).tobytes()


def new_aidge(array: np.ndarray) -> aidge_core.Tensor:
    """An Aidge-owned tensor (the constructor copies); quiet about empty shapes."""
    level = aidge_core.Log.get_console_level()
    aidge_core.Log.set_console_level(aidge_core.Level.Error)
    try:
        return aidge_core.Tensor(array)
    finally:
        aidge_core.Log.set_console_level(level)


def data_ptr(t: aidge_core.Tensor) -> int:
    return np.asarray(t).ctypes.data


# -- dtype table -----------------------------------------------------------------------


def test_dtype_table_is_the_standard_nine_and_bijective():
    assert list(DTYPE_TABLE) == DTYPES
    assert len(set(DTYPE_TABLE.values())) == len(DTYPES)
    for td, ad in DTYPE_TABLE.items():
        assert aidge_dtype(td) == ad
        assert torch_dtype(ad) == td
    assert DTYPE_TABLE[torch.bool] == aidge_core.dtype.boolean
    with pytest.raises(TypeError):
        DTYPE_TABLE[torch.bfloat16] = aidge_core.dtype.bfloat16  # read-only


# -- round trips -------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_torch_aidge_torch_roundtrip(dtype, shape, device):
    x = sample(dtype, shape).to(device)
    expected = x.clone()
    at = torch_tensor_to_aidge(x)
    assert at.dtype == DTYPE_TABLE[dtype]
    assert list(at.dims) == list(shape)
    assert at.backend == device
    back = aidge_tensor_to_torch(at)
    assert_same(back, expected)
    assert_same(aidge_tensor_to_torch(torch_tensor_to_aidge(x, copy=True), copy=True), expected)


# The documented names (interop-api.md, "test_tensor.py": `pytest test_tensor.py -v -k
# "test_conversion_cpu"`): the documented converter module, the standard dtypes, shapes with
# empty and scalar tensors, on CPU and (skipped without CUDA) on the GPU.
_DOCUMENTED_DTYPES = [torch.float32, torch.float64, torch.int32, torch.int64]


def _conversion(dtype, shape, device):
    from interop import tensor_converter

    x = sample(dtype, shape).to(device)
    back = tensor_converter.aidge_tensor_to_torch(tensor_converter.torch_tensor_to_aidge(x))
    assert_same(back, x.clone())


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", _DOCUMENTED_DTYPES, ids=dtype_id)
def test_conversion_cpu(dtype, shape):
    _conversion(dtype, shape, "cpu")


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", _DOCUMENTED_DTYPES, ids=dtype_id)
def test_conversion_gpu(dtype, shape):
    ok, why = cuda_available()
    if not ok:
        pytest.skip(f"GPU conversion needs CUDA and aidge_backend_cuda: {why}")
    _conversion(dtype, shape, "cuda")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_aidge_torch_aidge_roundtrip(dtype, shape, device):
    reference = sample(dtype, shape, seed=1)
    at = new_aidge(reference.numpy())
    if device == "cuda":
        at.set_backend("cuda")
    t = aidge_tensor_to_torch(at)
    assert_same(t, reference.to(device))
    again = torch_tensor_to_aidge(t)
    assert again.dtype == at.dtype
    assert list(again.dims) == list(shape)
    assert again.backend == device
    if device == "cuda":
        again.set_backend("cpu")
    assert aidge_bytes(again) == reference.numpy().tobytes()


def test_scalar_keeps_shape_and_value():
    x = torch.tensor(-2.5, dtype=torch.float64)
    at = torch_tensor_to_aidge(x)
    assert list(at.dims) == []
    assert np.asarray(at).shape == ()
    back = aidge_tensor_to_torch(at)
    assert back.shape == () and back.item() == -2.5
    assert aidge_tensor_to_torch(new_aidge(np.array(7, dtype=np.int32))).shape == ()


# -- non-contiguous inputs ---------------------------------------------------------------

NON_CONTIGUOUS = {
    "transposed": lambda x: x.reshape(6, 20).t(),
    "permuted": lambda x: x.permute(2, 0, 1),
    "step-slice": lambda x: x[:, ::2, 1::3],
    "offset-slice": lambda x: x[1:, 1:, :-1],
    "expanded": lambda x: x[:, :1, :1].expand(4, 5, 6),
    "column": lambda x: x[:, 2, 3],
}


@pytest.mark.parametrize("view", NON_CONTIGUOUS.values(), ids=NON_CONTIGUOUS.keys())
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool], ids=dtype_id)
def test_non_contiguous_inputs(dtype, view):
    base = sample(dtype, (4, 5, 6), seed=2)
    x = view(base)
    assert not x.is_contiguous()
    at = torch_tensor_to_aidge(x)
    assert list(at.dims) == list(x.shape)
    assert_same(aidge_tensor_to_torch(at), x.contiguous())
    # the copy is a private buffer: later writes to the source do not reach Aidge
    before = aidge_bytes(at)
    base.zero_()
    assert aidge_bytes(at) == before
    with pytest.raises(ValueError, match="non-contiguous"):
        torch_tensor_to_aidge(view(sample(dtype, (4, 5, 6))), copy=False)


def test_contiguous_slice_with_storage_offset_is_shared():
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    x = base[1:3]  # contiguous, storage offset 6
    at = torch_tensor_to_aidge(x, copy=False)
    assert data_ptr(at) == x.data_ptr()
    assert_same(aidge_tensor_to_torch(at), x.clone())


AIDGE_VIEWS = {
    # (make the view, expected torch values)
    "extract-row": (lambda t: t.extract([1]), lambda r: r[1]),
    "extract-block": (lambda t: t.extract([1, 2], [2, 3]), lambda r: r[1:3, 2:5]),
    "strided": (lambda t: (t.resize([6, 4], [1, 6]), t)[1], lambda r: r.reshape(-1).as_strided((6, 4), (1, 6))),
    "shrunk": (lambda t: (t.resize([5]), t)[1], lambda r: r.reshape(-1)[:5]),
}


@pytest.mark.parametrize("case", AIDGE_VIEWS.values(), ids=AIDGE_VIEWS.keys())
def test_aidge_views_are_copied_correctly(case):
    make_view, expected_of = case
    reference = sample(torch.float32, (4, 6), seed=3)
    view = make_view(new_aidge(reference.numpy()))
    expected = expected_of(reference).contiguous()
    t = aidge_tensor_to_torch(view)
    assert_same(t, expected)
    with pytest.raises(ValueError, match="view"):
        aidge_tensor_to_torch(view, copy=False)


# -- large tensors -----------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_large_tensor(device):
    x = sample(torch.float32, (1 << 22,), seed=4).reshape(1 << 10, 1 << 12).to(device)
    expected = x.clone()
    at = torch_tensor_to_aidge(x)
    back = aidge_tensor_to_torch(at)
    assert_same(back, expected)
    if device == "cpu":
        assert data_ptr(at) == x.data_ptr() == back.data_ptr()  # no copy either way
    xt = x.t()  # large non-contiguous
    assert_same(aidge_tensor_to_torch(torch_tensor_to_aidge(xt)), xt.contiguous())


# -- memory sharing (where the docstrings claim it) -------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_torch_to_aidge_shares_contiguous_memory(dtype):
    x = sample(dtype, (3, 4), seed=5)
    at = torch_tensor_to_aidge(x, copy=False)
    assert data_ptr(at) == x.data_ptr()
    assert list(at.strides) == [4, 1]  # resize() fixed from_data_ptr's strides
    x[2, 3] = x[0, 0] if dtype != torch.bool else ~x[2, 3]
    assert aidge_bytes(at) == x.numpy().tobytes()  # torch writes show through
    np.asarray(at)[0, 1] = np.asarray(at)[1, 2]
    assert x[0, 1] == x[1, 2]  # Aidge-side writes show through
    copied = torch_tensor_to_aidge(x, copy=True)
    assert data_ptr(copied) != x.data_ptr()
    snapshot = aidge_bytes(copied)
    x.zero_()
    assert aidge_bytes(copied) == snapshot


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_aidge_to_torch_shares_plain_memory(dtype):
    at = new_aidge(sample(dtype, (3, 4), seed=6).numpy())
    t = aidge_tensor_to_torch(at, copy=False)
    assert t.data_ptr() == data_ptr(at)
    t[1, 1] = t[0, 0] if dtype != torch.bool else ~t[1, 1]
    assert aidge_bytes(at) == t.numpy().tobytes()
    copied = aidge_tensor_to_torch(at, copy=True)
    assert copied.data_ptr() != data_ptr(at)
    snapshot = copied.clone()
    np.asarray(at)[...] = 0
    assert_same(copied, snapshot)


def test_aidge_tensor_keeps_torch_memory_alive():
    x = sample(torch.float32, (256, 257), seed=7)
    expected = x.clone()
    watch = weakref.ref(x)
    at = torch_tensor_to_aidge(x)
    del x
    gc.collect()
    assert watch() is not None, "the Aidge tensor must hold the torch tensor"
    _churn = [torch.full((256, 257), 1.5) for _ in range(8)]
    assert_same(aidge_tensor_to_torch(at, copy=True), expected)
    del at, _churn
    gc.collect()
    assert watch() is None, "the torch tensor leaked after the Aidge tensor died"


def test_torch_tensor_keeps_aidge_memory_alive():
    reference = sample(torch.float64, (128, 129), seed=8)
    at = new_aidge(reference.numpy())
    watch = weakref.ref(at)
    t = aidge_tensor_to_torch(at)
    del at
    gc.collect()
    assert watch() is not None, "the torch tensor must hold the Aidge tensor"
    _churn = [new_aidge(np.full((128, 129), 2.5)) for _ in range(8)]
    assert_same(t, reference)
    del t, _churn
    gc.collect()
    assert watch() is None, "the Aidge tensor leaked after the torch tensor died"


def test_shared_input_is_right_for_a_padded_convolution():
    """docs/aidge-notes.md (tensors and memory sharing): from_data_ptr's [1] strides break a padded conv; resize() must fix them."""
    aidge_backend_cpu = pytest.importorskip("aidge_backend_cpu")  # noqa: F841
    g = torch.Generator().manual_seed(9)
    n, c, h, w = 2, 3, 6, 7
    x = torch.randn(n, c, h, w, generator=g)
    weight = torch.randn(4, c, 3, 3, generator=g)
    bias = torch.randn(4, generator=g)
    expected = torch.nn.functional.conv2d(x, weight, bias, padding=1)

    node = aidge_core.PaddedConv2D(c, 4, [3, 3], name="conv", padding_dims=[1, 1, 1, 1])
    graph = aidge_core.GraphView()
    graph.add(node)
    node.get_parent(1).get_operator().set_output(0, torch_tensor_to_aidge(weight))
    node.get_parent(2).get_operator().set_output(0, torch_tensor_to_aidge(bias))
    level = aidge_core.Log.get_console_level()
    aidge_core.Log.set_console_level(aidge_core.Level.Error)
    try:
        graph.compile("cpu", aidge_core.dtype.float32, dims=[[n, c, h, w]])
        inp = torch_tensor_to_aidge(x, copy=False)
        aidge_core.SequentialScheduler(graph).forward(True, [inp])
    finally:
        aidge_core.Log.set_console_level(level)
    (out_node, index), = graph.get_ordered_outputs()
    out = aidge_tensor_to_torch(out_node.get_operator().get_output(index), copy=True)
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)


# -- unsupported dtypes and CUDA --------------------------------------------------------


@pytest.mark.parametrize("dtype", UNSUPPORTED_TORCH, ids=dtype_id)
def test_unsupported_torch_dtype_raises_naming_it(dtype):
    with pytest.raises(TypeError, match=str(dtype)):
        aidge_dtype(dtype)
    with pytest.raises(TypeError, match=str(dtype)):
        torch_tensor_to_aidge(torch.zeros(2, 3, dtype=dtype))


@pytest.mark.parametrize(
    "np_dtype", [np.uint16, np.uint32, np.uint64, np.complex64], ids=lambda d: np.dtype(d).name
)
def test_unsupported_aidge_dtype_raises_naming_it(np_dtype):
    at = aidge_core.Tensor(np.zeros((2, 3), dtype=np_dtype))
    name = np.dtype(np_dtype).name
    assert at.dtype.name == name  # Aidge has the type; the converter deliberately does not
    with pytest.raises(TypeError, match=f"dtype.{name}"):
        aidge_tensor_to_torch(at)
    with pytest.raises(TypeError, match=f"dtype.{name}"):
        torch_dtype(at.dtype)


@pytest.mark.parametrize("member", ["bfloat16", "int4", "uint2", "string"])
def test_unsupported_aidge_dtype_member_raises_naming_it(member):
    with pytest.raises(TypeError, match=f"dtype.{member}"):
        torch_dtype(getattr(aidge_core.dtype, member))


def test_cuda_probe_is_stable_and_explains_itself():
    ok, reason = cuda_available()
    assert isinstance(ok, bool) and isinstance(reason, str) and reason
    assert cuda_available() == (ok, reason)
    if not ok:
        assert "aidge_backend_cuda" in reason or "CUDA" in reason


class _FakeCudaTensor(torch.Tensor):
    """A CPU tensor that claims to live on cuda:0 (no GPU is needed to test the refusal)."""

    @property
    def device(self):
        return torch.device("cuda", 0)


@pytest.mark.skipif(CUDA_OK, reason="CUDA is available here: the error path cannot trigger")
def test_cuda_unavailable_raises_runtime_error_naming_what_is_missing():
    with pytest.raises(RuntimeError, match="CUDA") as info:
        require_cuda()
    assert CUDA_REASON in str(info.value)
    fake = torch.zeros(2, 3).as_subclass(_FakeCudaTensor)
    with pytest.raises(RuntimeError) as info:
        torch_tensor_to_aidge(fake)
    assert CUDA_REASON in str(info.value)


def test_convert_tensor_dispatches_on_type():
    x = sample(torch.int16, (3, 2), seed=10)
    at = convert_tensor(x)
    assert isinstance(at, aidge_core.Tensor)
    back = convert_tensor(at)
    assert isinstance(back, torch.Tensor)
    assert_same(back, x)
    with pytest.raises(TypeError, match="ndarray"):
        convert_tensor(np.zeros(3))
