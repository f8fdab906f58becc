"""Exact conversion of tensors between PyTorch and Eclipse Aidge (0.10.1).

Public API
----------
``torch_tensor_to_aidge(tensor, *, copy=None)``
    ``torch.Tensor`` -> ``aidge_core.Tensor``.
``aidge_tensor_to_torch(tensor, *, copy=None)``
    ``aidge_core.Tensor`` -> ``torch.Tensor``.
``convert_tensor(t, *, copy=None)``
    Either direction, chosen from the type of ``t``.
``DTYPE_TABLE``
    The single torch dtype <-> ``aidge_core.dtype`` mapping of the suite (read-only).
``aidge_dtype(torch_dtype)`` / ``torch_dtype(aidge_dtype)``
    Look-ups in that table; ``TypeError`` naming the dtype when it is not in it.

The CUDA probe it relies on, ``cuda_available() -> (bool, reason)`` / ``require_cuda()``,
is in :mod:`interop.bridge.cuda`.

``copy`` follows NumPy's convention: ``None`` shares memory when possible and copies
otherwise, ``True`` always copies, ``False`` never copies and raises ``ValueError`` when a
copy would be needed.

Supported dtypes
----------------
float32, float64, float16, int8, int16, int32, int64, uint8 and bool (``aidge_core.dtype``
``boolean``). All nine exist in Aidge 0.10.1 and survive a NumPy -> Aidge -> NumPy round
trip bit for bit (checked, bool included). Every other dtype (bfloat16, complex*, uint16,
uint32, uint64, quantized, float8 ...) raises ``TypeError`` naming the dtype, in both
directions, even where Aidge itself has an enum member for it.

Facts about Aidge 0.10.1 this module relies on (measured, see ``tests/test_tensor.py``)
-------------------------------------------------------------------------------------
* ``Tensor.from_data_ptr`` wraps foreign memory but leaves an N-d tensor with strides
  ``[1]``: a padded convolution then computes wrong values. ``resize(dims)`` afterwards
  sets row-major strides and keeps the memory shared.
* The buffer protocol of ``aidge_core.Tensor`` is writable and shares memory, but it
  *ignores* the tensor's strides and storage offset (an ``extract``-ed row reads as the
  first row). Only a "plain" tensor (row-major strides, storage exactly as large as the
  tensor) is therefore exported without a copy; views go through ``Tensor.clone()``, which
  honours strides and offset.
* A 0-d NumPy array becomes an Aidge tensor with ``dims == []`` (strides ``[1]``); the
  buffer reads back with shape ``()``. Empty shapes such as ``(2, 0, 3)`` are kept, but
  Aidge logs a WARNING ("will make it 'Undefined'") when it creates one; this module
  silences Aidge's console for that single call.
* ``aidge_core.Tensor`` objects accept weak references (not attributes): the torch
  storage behind a zero-copy Aidge tensor is held through a weak reference to it (``_keep_alive``).
"""

from __future__ import annotations

import types
import weakref
from typing import Any, Mapping

import aidge_core
import numpy as np
import torch

from .cuda import require_cuda
from .runtime import quiet_aidge

__all__ = [
    "DTYPE_TABLE",
    "aidge_dtype",
    "torch_dtype",
    "torch_tensor_to_aidge",
    "aidge_tensor_to_torch",
    "convert_tensor",
]

#: torch dtype -> aidge_core.dtype; the only place where that correspondence is written.
DTYPE_TABLE: Mapping[torch.dtype, aidge_core.dtype] = types.MappingProxyType(
    {
        torch.float32: aidge_core.dtype.float32,
        torch.float64: aidge_core.dtype.float64,
        torch.float16: aidge_core.dtype.float16,
        torch.int8: aidge_core.dtype.int8,
        torch.int16: aidge_core.dtype.int16,
        torch.int32: aidge_core.dtype.int32,
        torch.int64: aidge_core.dtype.int64,
        torch.uint8: aidge_core.dtype.uint8,
        torch.bool: aidge_core.dtype.boolean,
    }
)
_AIDGE_TO_TORCH: Mapping[aidge_core.dtype, torch.dtype] = types.MappingProxyType(
    {a: t for t, a in DTYPE_TABLE.items()}
)


def _aidge_dtype_name(dtype: Any) -> str:
    return f"aidge_core.dtype.{getattr(dtype, 'name', dtype)}"


def aidge_dtype(torch_dtype: torch.dtype) -> aidge_core.dtype:
    """Return the ``aidge_core.dtype`` matching ``torch_dtype``.

    Raises ``TypeError`` naming the dtype when it is not in :data:`DTYPE_TABLE`.
    """
    try:
        return DTYPE_TABLE[torch_dtype]
    except (KeyError, TypeError):
        raise TypeError(
            f"unsupported torch dtype {torch_dtype}: the torch<->Aidge converter handles "
            f"{', '.join(str(d) for d in DTYPE_TABLE)}"
        ) from None


def torch_dtype(aidge_dtype: aidge_core.dtype) -> torch.dtype:
    """Return the ``torch.dtype`` matching ``aidge_dtype``.

    Raises ``TypeError`` naming the dtype when it is not in :data:`DTYPE_TABLE`.
    """
    try:
        return _AIDGE_TO_TORCH[aidge_dtype]
    except (KeyError, TypeError):
        raise TypeError(
            f"unsupported Aidge dtype {_aidge_dtype_name(aidge_dtype)}: the torch<->Aidge "
            f"converter handles {', '.join(_aidge_dtype_name(d) for d in _AIDGE_TO_TORCH)}"
        ) from None


# --------------------------------------------------------------------------------------
# helpers


#: id(weak reference to an Aidge tensor) -> (that weak reference, what it keeps alive)
_HELD: dict[int, tuple[weakref.ref, Any]] = {}


def _keep_alive(owner: aidge_core.Tensor, ref: Any) -> None:
    """Keep ``ref`` alive exactly as long as the Python object ``owner`` lives.

    A weak reference with a callback, held in :data:`_HELD` until the callback drops it
    (``weakref.finalize`` does the same with a registry and atexit bookkeeping: 1.6-1.9 us more
    per conversion, paid by every shared input of the bridge; docs/bridge-speed.md). The entry keeps its weak
    reference alive, so its id is not reused while the entry exists; dict operations are
    atomic under the GIL."""
    held = weakref.ref(owner, _release)
    _HELD[id(held)] = (held, ref)


def _release(held: weakref.ref) -> None:
    """Callback of the owner's weak reference: dropping the entry releases what it held."""
    _HELD.pop(id(held), None)


def _row_major_strides(dims: list[int]) -> list[int]:
    strides, step = [], 1
    for d in reversed(dims):
        strides.append(step)
        step *= d
    return strides[::-1]


def _is_plain(t: aidge_core.Tensor) -> bool:
    """True when the buffer protocol of ``t`` reads the right elements (see module doc)."""
    dims = list(t.dims)
    if t.capacity != t.size:  # offset view, or storage larger than the tensor
        return False
    if len(dims) <= 1:
        return list(t.strides) == [1]
    return list(t.strides) == _row_major_strides(dims)


def _check_copy(copy: bool | None) -> None:
    if not (copy is None or copy is True or copy is False):
        raise TypeError(f"copy must be None, True or False, not {copy!r}")


# --------------------------------------------------------------------------------------
# torch -> Aidge


def torch_tensor_to_aidge(tensor: torch.Tensor, *, copy: bool | None = None) -> aidge_core.Tensor:
    """Convert a ``torch.Tensor`` into an ``aidge_core.Tensor`` with the same dtype, shape
    (``()`` for a 0-d tensor) and bit-identical values.

    When a copy is made (CPU tensors):

    * ``copy=None`` (default): a contiguous tensor is **shared, not copied**: the Aidge
      tensor points at the torch storage (``from_data_ptr`` + ``resize``), writes on either
      side are visible on the other, and the Aidge tensor keeps the torch tensor alive
      for as long as the Python Aidge object lives. A non-contiguous tensor (transposed,
      stepped slice, expanded, or a torch negative-bit view) is copied once into a
      contiguous torch buffer which the Aidge tensor then shares. An empty tensor has no
      data to share: a new empty Aidge tensor is returned.
    * ``copy=True``: always a copy, into memory owned by Aidge (no link to torch): one
      copy for a contiguous tensor, two (``contiguous()`` then Aidge's constructor) for a
      non-contiguous one.
    * ``copy=False``: as ``None`` but raises ``ValueError`` instead of copying.

    Caveat of sharing: the torch memory is only held by the *Python* Aidge object. If
    Aidge keeps the tensor on the C++ side (e.g. as a Producer output) after that Python
    object is gone, keep the torch tensor alive yourself or pass ``copy=True``.

    CUDA tensors (requires :func:`~interop.bridge.cuda.cuda_available`): shared the same way through a device
    pointer on Aidge's ``cuda`` backend (the current torch stream is synchronised first);
    ``copy=True`` makes one device-to-device copy (a torch ``clone``) that Aidge then
    shares. Raises ``RuntimeError`` naming what is missing when CUDA is unusable.

    ``requires_grad`` is ignored (the data is taken detached). Raises ``TypeError`` for a
    dtype outside :data:`DTYPE_TABLE` or a non-strided layout, ``RuntimeError`` for a
    device other than CPU/CUDA.
    """
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"expected a torch.Tensor, got {type(tensor).__name__}")
    _check_copy(copy)
    adt = aidge_dtype(tensor.dtype)
    if tensor.layout is not torch.strided:
        raise TypeError(f"unsupported torch layout {tensor.layout}: only torch.strided tensors")
    device = tensor.device
    if device.type == "cuda":
        require_cuda()
    elif device.type != "cpu":
        raise RuntimeError(f"unsupported torch device {device}: only cpu and cuda tensors")
    dims = list(tensor.shape)

    if tensor.numel() == 0:
        with quiet_aidge():
            out = aidge_core.Tensor(torch.empty(dims, dtype=tensor.dtype).numpy())
        if device.type == "cuda":
            out.set_backend("cuda", _cuda_index(device))
        return out

    if device.type == "cpu" and copy is True:
        # the Tensor(ndarray) constructor copies into Aidge-owned memory.
        return aidge_core.Tensor(tensor.detach().resolve_neg().contiguous().numpy())

    needs_copy = tensor.is_neg() or not tensor.is_contiguous()
    if copy is False and needs_copy:
        raise ValueError(
            f"copy=False, but a {'negative-bit view' if tensor.is_neg() else 'non-contiguous'} "
            "tensor cannot be shared with Aidge without a copy"
        )
    if device.type == "cuda" and copy is True:
        tensor = tensor.detach().resolve_neg().clone(memory_format=torch.contiguous_format)
    elif needs_copy:
        tensor = tensor.detach().resolve_neg().contiguous()
    # else: the caller's tensor object itself is shared and kept alive (data_ptr needs no detach)

    if device.type == "cuda":
        index = _cuda_index(device)
        torch.cuda.current_stream(index).synchronize()
        try:
            out = aidge_core.Tensor.from_data_ptr(dims, tensor.data_ptr(), adt, backend="cuda", device=index)
        except Exception as exc:
            raise RuntimeError(f"Aidge cannot wrap a CUDA {tensor.dtype} tensor: {exc}") from exc
    else:
        out = aidge_core.Tensor.from_data_ptr(dims, tensor.data_ptr(), adt)
    out.resize(dims)  # from_data_ptr leaves N-d strides at [1]; resize fixes them, still shared
    _keep_alive(out, tensor)
    return out


def _cuda_index(device: torch.device) -> int:
    return device.index if device.index is not None else torch.cuda.current_device()


# --------------------------------------------------------------------------------------
# Aidge -> torch


def aidge_tensor_to_torch(tensor: aidge_core.Tensor, *, copy: bool | None = None) -> torch.Tensor:
    """Convert an ``aidge_core.Tensor`` into a ``torch.Tensor`` with the same dtype, shape
    (``()`` for a 0-d tensor) and bit-identical values.

    When a copy is made (``cpu`` backend):

    * ``copy=None`` (default): a plain tensor (row-major strides, storage exactly as large
      as the tensor) is **shared, not copied**: the torch tensor views Aidge's memory
      through the buffer protocol (``torch.from_numpy``), writes show through both ways,
      and the torch tensor keeps the Aidge tensor alive. Aidge may still reallocate its
      storage (e.g. a ``resize`` to a larger shape, or a graph recomputing its outputs):
      the torch tensor then keeps the old memory. Any other Aidge tensor (strided view,
      ``extract``-ed sub-tensor, over-allocated storage, N-d tensor from ``from_data_ptr``
      without ``resize``) is copied once with ``Tensor.clone()``, which honours strides
      and offsets, and the clone is shared. An empty tensor gives a new empty torch tensor.
    * ``copy=True``: always exactly one copy, into memory owned by torch/NumPy.
    * ``copy=False``: as ``None`` but raises ``ValueError`` instead of copying.

    ``cuda`` backend (requires :func:`~interop.bridge.cuda.cuda_available`): Aidge's Python API exposes no
    device pointer, so the data always goes through host memory: an Aidge ``clone`` on
    the device, a device-to-host copy, then a host-to-device copy into a new torch CUDA
    tensor on the same device index. ``copy=False`` raises ``ValueError`` there.

    Raises ``TypeError`` for a dtype outside :data:`DTYPE_TABLE`, ``ValueError`` for an
    Aidge tensor without data, ``RuntimeError`` for another backend or unusable CUDA.
    """
    if not isinstance(tensor, aidge_core.Tensor):
        raise TypeError(f"expected an aidge_core.Tensor, got {type(tensor).__name__}")
    _check_copy(copy)
    tdt = torch_dtype(tensor.dtype)
    dims = [int(d) for d in tensor.dims]
    backend = tensor.backend

    if 0 in dims:
        if backend == "cuda":
            require_cuda()
            return torch.empty(dims, dtype=tdt, device=f"cuda:{tensor.device}")
        return torch.empty(dims, dtype=tdt)
    if not tensor.has_impl():
        raise ValueError(f"the Aidge tensor (dims {dims}) has no data: it is undefined")

    if backend == "cuda":
        require_cuda()
        if copy is False:
            raise ValueError(
                "copy=False, but Aidge's Python API exposes no device pointer: a CUDA "
                "Aidge tensor can only be converted through host memory"
            )
        host = tensor.clone()
        host.set_backend("cpu", 0, True)
        return _cpu_to_torch(host, tdt, copy=None).to(f"cuda:{tensor.device}")
    if backend != "cpu":
        raise RuntimeError(f"unsupported Aidge backend {backend!r}: only 'cpu' and 'cuda'")
    return _cpu_to_torch(tensor, tdt, copy=copy)


def _cpu_to_torch(tensor: aidge_core.Tensor, tdt: torch.dtype, *, copy: bool | None) -> torch.Tensor:
    plain = _is_plain(tensor)
    if copy is False and not plain:
        raise ValueError(
            f"copy=False, but the Aidge tensor is a view (dims {list(tensor.dims)}, strides "
            f"{list(tensor.strides)}, {tensor.capacity} elements of storage for "
            f"{tensor.size}) whose buffer cannot be shared without a copy"
        )
    if copy is True and plain:
        array = np.array(tensor, copy=True)
    else:
        # np.asarray keeps a memoryview, which keeps the Python Aidge object alive.
        array = np.asarray(tensor if plain else tensor.clone())
    out = torch.from_numpy(array)
    if out.dtype != tdt or list(out.shape) != [int(d) for d in tensor.dims]:
        raise RuntimeError(  # defensive: the buffer protocol disagrees with dtype/dims
            f"Aidge buffer reads as {out.dtype}{tuple(out.shape)}, expected {tdt}{tuple(tensor.dims)}"
        )
    return out


# --------------------------------------------------------------------------------------


def convert_tensor(t: torch.Tensor | aidge_core.Tensor, *, copy: bool | None = None):
    """Convert ``t`` to the other framework: torch -> Aidge or Aidge -> torch.

    See :func:`torch_tensor_to_aidge` and :func:`aidge_tensor_to_torch` for when copies
    are made. Raises ``TypeError`` for any other type.
    """
    if isinstance(t, torch.Tensor):
        return torch_tensor_to_aidge(t, copy=copy)
    if isinstance(t, aidge_core.Tensor):
        return aidge_tensor_to_torch(t, copy=copy)
    raise TypeError(f"expected a torch.Tensor or an aidge_core.Tensor, got {type(t).__name__}")
