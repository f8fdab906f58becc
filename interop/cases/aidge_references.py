"""The torch reference of each Aidge operation of the benchmark configurations
(:mod:`interop.cases.aidge_operations` names them): ``ref(x, a)`` where ``x`` is the list
of the case's inputs as torch tensors in input-spec order (``None`` for a left-out input)
and ``a`` the case's Aidge attributes; returns a tensor or a tuple of tensors.

Attribute defaults are Aidge 0.10.1's factory defaults (``help(aidge_core.<Op>)``), which
follow ONNX. The semantics behind each translation (pads order, Gemm's transB, ...) are in
``docs/aidge-notes.md#aidge-benchmark-configs``. A few references are numpy compositions
where torch has no operator with ONNX's semantics (Slice's negative steps, Pad's modes):
they are still computed without Aidge.
"""
from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["REFERENCES", "reference"]


def _ints(t: Any) -> list[int]:
    if t is None:
        return []
    if isinstance(t, torch.Tensor):
        return [int(v) for v in t.reshape(-1).tolist()]
    return [int(v) for v in (t if isinstance(t, (list, tuple)) else [t])]


def _pair(v: Any, default: int) -> tuple[int, ...]:
    return tuple(_ints(v)) if v is not None else (default, default)


def _unary(fn):
    return lambda x, a: fn(x[0])


def _fold(fn):
    return lambda x, a: functools.reduce(fn, [t for t in x if t is not None])


def _div(x, a):
    if x[0].is_floating_point():
        return x[0] / x[1]
    return torch.div(x[0], x[1], rounding_mode="trunc")


def _round(x, a):
    t, mode = x[0], a.get("rounding_mode", "half_away_from_zero")
    s, m = torch.sign(t), t.abs()
    fl = torch.floor(t)
    frac = t - fl
    modes = {
        "half_to_even": lambda: torch.round(t), "down": lambda: fl, "up": lambda: torch.ceil(t),
        "toward_zero": lambda: torch.trunc(t), "away_from_zero": lambda: s * torch.ceil(m),
        "half_down": lambda: torch.ceil(t - 0.5), "half_up": lambda: torch.floor(t + 0.5),
        "half_toward_zero": lambda: s * torch.ceil(m - 0.5), "half_away_from_zero": lambda: s * torch.floor(m + 0.5),
        "half_to_odd": lambda: torch.where(frac < 0.5, fl, torch.where(frac > 0.5, fl + 1,
                                                                          torch.where(fl % 2 == 0, fl + 1, fl))),
    }
    return modes[mode]()


def _bitshift(x, a, bits: int = 32):
    """On the uint32 values (held in int64): a shift by the bit width or more gives 0."""
    v, s = x[0].to(torch.int64), x[1].to(torch.int64)
    big = s >= bits
    s = torch.clamp(s, max=bits)
    if a["direction"] == "left":
        out = (v << s) & ((1 << bits) - 1)
    elif a.get("rounding"):
        out = torch.where(s > 0, (v + (1 << torch.clamp(s - 1, min=0))) >> s, v)
    else:
        out = v >> s
    return torch.where(big & (a["direction"] == "left" or not a.get("rounding")), torch.zeros_like(out), out)


def _reduce(fn):
    def ref(x, a):
        t = x[0]
        axes = _ints(x[1]) if len(x) > 1 and x[1] is not None else _ints(a.get("axes", []))
        keep = bool(a.get("keep_dims", True))
        if not axes:
            if a.get("noop_with_empty_axes", False):
                return t
            axes = list(range(t.dim()))
        return fn(t, dim=tuple(axes), keepdim=keep)
    return ref


def _argmax(x, a):
    t, axis, keep = x[0], int(a.get("axis", 0)), bool(a.get("keep_dims", True))
    if a.get("select_last_index"):
        n = t.shape[axis]
        return (n - 1 - torch.argmax(torch.flip(t, [axis]), dim=axis, keepdim=keep)).to(torch.int64)
    return torch.argmax(t, dim=axis, keepdim=keep)


def _hardmax(x, a):
    t, axis = x[0], int(a.get("axis", -1))
    return F.one_hot(t.argmax(axis), t.shape[axis]).movedim(-1, axis).to(t.dtype)


def _topk(x, a):
    k = _ints(x[1])[0] if len(x) > 1 and x[1] is not None else int(a.get("k", 0))
    values, indices = torch.topk(x[0], k, dim=int(a.get("axis", -1)), largest=bool(a.get("largest", True)),
                                 sorted=True)
    return values, indices


def _pad(x, a):
    data = x[0].numpy()
    pads = _ints(x[1]) if len(x) > 1 else _ints(a.get("pads"))
    value = x[2].reshape(-1)[0].item() if len(x) > 2 and x[2] is not None else 0
    axes = _ints(x[3]) if len(x) > 3 and x[3] is not None else list(range(data.ndim))
    axes = [ax % data.ndim for ax in axes]
    n = len(axes)
    width = [[0, 0] for _ in range(data.ndim)]
    for i, ax in enumerate(axes):
        width[ax] = [pads[i], pads[i + n]]
    # negative pads crop (ONNX): crop first, then pad the positive amounts
    crop = tuple(slice(-b if b < 0 else None, e if e < 0 else None) for b, e in width)
    data = data[crop]
    width = [(max(b, 0), max(e, 0)) for b, e in width]
    mode = {"constant": "constant", "reflect": "reflect", "edge": "edge", "wrap": "wrap"}[a.get("mode", "constant")]
    kwargs = {"constant_values": value} if mode == "constant" else {}
    return torch.from_numpy(np.ascontiguousarray(np.pad(data, width, mode=mode, **kwargs)))


def _slice(x, a):
    data = x[0].numpy()
    starts = _ints(x[1]) if len(x) > 1 and x[1] is not None else _ints(a.get("starts"))
    ends = _ints(x[2]) if len(x) > 2 and x[2] is not None else _ints(a.get("ends"))
    axes = _ints(x[3]) if len(x) > 3 and x[3] is not None else (_ints(a.get("axes")) or list(range(len(starts))))
    steps = _ints(x[4]) if len(x) > 4 and x[4] is not None else (_ints(a.get("steps")) or [1] * len(starts))
    index = [slice(None)] * data.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        index[ax % data.ndim] = slice(s, e, st)  # python slicing clamps as ONNX Slice does
    return torch.from_numpy(np.ascontiguousarray(data[tuple(index)]))


def _scatter(x, a):
    data, idx, upd = x[0], x[1].to(torch.int64), x[2]
    axis = int(a.get("axis", 0))
    idx = torch.where(idx < 0, idx + data.shape[axis], idx)
    reduction = a.get("reduction", "none")
    if reduction == "none":
        return data.scatter(axis, idx, upd)
    reduce = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}[reduction]
    return data.scatter_reduce(axis, idx, upd, reduce=reduce, include_self=True)


def _resize(x, a):
    data = x[0]
    scales = x[2] if len(x) > 2 else None
    sizes = x[3] if len(x) > 3 else None
    mode, ctm = a.get("interpolation_mode", "round_prefer_floor"), a.get("coordinate_transformation_mode", "half_pixel")
    kwargs: dict[str, Any] = {}
    if sizes is not None:
        kwargs["size"] = tuple(_ints(sizes)[2:])
    else:
        kwargs["scale_factor"] = tuple(float(s) for s in scales.reshape(-1).tolist()[2:])
        kwargs["recompute_scale_factor"] = False
    if mode == "linear":
        kwargs.update(mode="bilinear" if data.dim() == 4 else "linear", align_corners=ctm == "align_corners",
                      antialias=bool(a.get("antialias", False)))
    elif mode == "cubic":
        kwargs.update(mode="bicubic", align_corners=ctm == "align_corners", antialias=bool(a.get("antialias", False)))
    else:
        kwargs.update(mode="nearest")
    return F.interpolate(data, **kwargs)


def _conv(dim):
    conv = {1: F.conv1d, 2: F.conv2d}[dim]

    def ref(x, a, groups=1, padding=None):
        t = x[0]
        if padding:
            t = F.pad(t, _torch_pads(padding))
        return conv(t, x[1], x[2] if len(x) > 2 else None, stride=_pair(a.get("stride_dims"), 1)[-dim:],
                    dilation=_pair(a.get("dilation_dims"), 1)[-dim:], groups=groups)
    return ref


def _torch_pads(padding_dims) -> tuple[int, ...]:
    """Aidge ``[d1_begin, d2_begin, ..., d1_end, d2_end]`` -> torch ``(last_b, last_e, ...)``."""
    p = _ints(padding_dims)
    n = len(p) // 2
    out: list[int] = []
    for i in reversed(range(n)):
        out += [p[i], p[i + n]]
    return tuple(out)


def _conv_transpose(dim):
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d}[dim]

    def ref(x, a):
        y = fn(x[0], x[1], x[2] if len(x) > 2 else None, stride=_pair(a.get("stride_dims"), 1)[-dim:],
               dilation=_pair(a.get("dilation_dims"), 1)[-dim:])
        return F.pad(y, _torch_pads(a["padding_dims"])) if a.get("padding_dims") else y
    return ref


def _avg_pool(x, a, padded=False):
    t, k = x[0], _pair(a.get("kernel_dims"), 1)
    stride, dil = _pair(a.get("stride_dims"), 1), _pair(a.get("dilations"), 1)
    if padded and a.get("padding_dims"):
        pads = _torch_pads(a["padding_dims"])
        if not a.get("count_include_pad", True):  # the mean over the real (unpadded) elements only
            ones = F.pad(torch.ones_like(t[:1, :1]), pads)
            total = F.avg_pool2d(F.pad(t, pads), k, stride, 0, ceil_mode=bool(a.get("ceil_mode", False)))
            return total / F.avg_pool2d(ones, k, stride, 0, ceil_mode=bool(a.get("ceil_mode", False)))
        t = F.pad(t, pads)
    if dil != (1, 1):  # torch's avg_pool2d has no dilation: the mean of the dilated windows
        n, c, h, w = t.shape
        cols = F.unfold(t, k, dilation=dil, stride=stride)
        oh = (h - dil[0] * (k[0] - 1) - 1) // stride[0] + 1
        ow = (w - dil[1] * (k[1] - 1) - 1) // stride[1] + 1
        return cols.view(n, c, k[0] * k[1], oh * ow).mean(2).view(n, c, oh, ow)
    return F.avg_pool2d(t, k, stride, 0, ceil_mode=bool(a.get("ceil_mode", False)))


def _max_pool(x, a):
    return F.max_pool2d(x[0], _pair(a.get("kernel_dims"), 1), _pair(a.get("stride_dims"), 1), 0,
                        _pair(a.get("dilations"), 1), ceil_mode=bool(a.get("ceil_mode", False)))


def _batch_norm(x, a):
    # ONNX BatchNormalization: training_mode=1 normalises with the batch statistics
    return F.batch_norm(x[0], x[3], x[4], x[1], x[2], training=bool(a.get("training_mode", False)),
                        momentum=0.0, eps=float(a.get("epsilon", 1e-5)))


def _layer_norm(x, a):
    t, axis, eps = x[0], int(a["axis"]), float(a.get("epsilon", 1e-5))
    dims = tuple(range(axis % t.dim(), t.dim()))
    mean = t.mean(dims, keepdim=True)
    var = ((t - mean) ** 2).mean(dims, keepdim=True)
    y = (t - mean) / torch.sqrt(var + eps)
    if len(x) > 1 and x[1] is not None:
        y = y * x[1]
    if len(x) > 2 and x[2] is not None:
        y = y + x[2]
    return y


def _fc(x, a):
    t = x[0].flatten(1) if x[0].dim() > 1 else x[0].reshape(1, -1)
    w, b = x[1], x[2] if len(x) > 2 else None
    if not (t.is_floating_point() and w.is_floating_point()):  # integer FC: exact, in int64
        y = t.to(torch.int64) @ w.to(torch.int64).T
        return y + b.to(torch.int64) if b is not None else y
    return F.linear(t, w, b)


def _gemm(x, a):
    # Aidge's GemmOp is an FC meta-operator: transB=0 takes B in weight layout [N, K] (A @ B^T)
    A = x[0].T if a.get("transA") else x[0]
    B = x[1] if a.get("transB") else x[1].T
    y = float(a.get("alpha", 1.0)) * (A @ B)
    if len(x) > 2 and x[2] is not None:
        y = y + float(a.get("beta", 1.0)) * x[2]
    return y


def _constant_of_shape(x, a):
    value = a.get("value", 0.0)
    dtype = torch.bool if isinstance(value, bool) else torch.int64 if isinstance(value, int) else torch.float32
    return torch.full(tuple(_ints(x[0])), value, dtype=dtype)


def _range(x, a):
    """ONNX Range: max(ceil((limit - start) / delta), 0) elements (an empty range is no error)."""
    start, limit, delta = (t.reshape(-1)[0].item() for t in x[:3])
    n = max(math.ceil((limit - start) / delta), 0)
    return (start + torch.arange(n, dtype=torch.float64) * delta).to(x[0].dtype)


def _hann(x, a):
    """ONNX HannWindow (torch.hann_window special-cases size 1 as [1.])."""
    size = _ints(x[0])[0]
    n = torch.arange(size, dtype=torch.float64)
    denominator = size if a.get("periodic", True) else size - 1
    return (0.5 - 0.5 * torch.cos(2 * math.pi * n / denominator)).to(torch.float32)


def _lrn(x, a):
    t = x[0] if x[0].dim() > 2 else x[0].unsqueeze(-1)  # ONNX LRN takes (N, C): torch wants a spatial dim
    y = F.local_response_norm(t, int(a["size"]), float(a.get("alpha", 1e-4)), float(a.get("beta", 0.75)),
                              float(a.get("bias", 1.0)))
    return y if x[0].dim() > 2 else y.squeeze(-1)


def _dropout(x, a):
    return x[0]  # inference mode (training_mode=False): the identity


REFERENCES: dict[str, Any] = {
    "AbsOp": _unary(torch.abs), "AsinOp": _unary(torch.asin), "AtanOp": _unary(torch.atan),
    "CeilOp": _unary(torch.ceil), "CosOp": _unary(torch.cos), "CoshOp": _unary(torch.cosh),
    "ErfOp": _unary(torch.erf), "ExpOp": _unary(torch.exp), "FloorOp": _unary(torch.floor),
    "LnOp": _unary(torch.log), "NegOp": _unary(torch.neg), "ReciprocalOp": _unary(torch.reciprocal),
    "ReLUOp": _unary(torch.relu), "SigmoidOp": _unary(torch.sigmoid), "SinOp": _unary(torch.sin),
    "SinhOp": _unary(torch.sinh), "SqrtOp": _unary(torch.sqrt), "TanOp": _unary(torch.tan),
    "TanhOp": _unary(torch.tanh), "SoftplusOp": _unary(F.softplus), "NotOp": _unary(torch.logical_not),
    "AddOp": _fold(torch.add), "SubOp": lambda x, a: x[0] - x[1], "MulOp": _fold(torch.mul),
    "PowOp": lambda x, a: torch.pow(x[0], x[1]), "DivOp": _div, "AndOp": lambda x, a: torch.logical_and(x[0], x[1]),
    "EqualOp": lambda x, a: torch.eq(x[0], x[1]), "GreaterOp": lambda x, a: torch.gt(x[0], x[1]),
    "LessOp": lambda x, a: torch.lt(x[0], x[1]), "WhereOp": lambda x, a: torch.where(x[0].bool(), x[1], x[2]),
    "SumOp": _fold(torch.add), "MaxOp": _fold(torch.maximum), "MinOp": _fold(torch.minimum),
    "ModOp": lambda x, a: (torch.fmod if a.get("fmod") else torch.remainder)(x[0], x[1]),
    "BitShiftOp": _bitshift,
    "HeavisideOp": lambda x, a: torch.heaviside(x[0], torch.tensor(float(a["value"]), dtype=x[0].dtype)),
    "LeakyReLUOp": lambda x, a: F.leaky_relu(x[0], float(a["negative_slope"])),
    "HardSigmoidOp": lambda x, a: torch.clamp(float(a.get("alpha", 0.2)) * x[0] + float(a.get("beta", 0.5)), 0, 1),
    "HardSwishOp": lambda x, a: x[0] * torch.clamp(float(a.get("alpha", 1 / 6)) * x[0] + float(a.get("beta", 0.5)),
                                                   0, 1),
    "ClipOp": lambda x, a: torch.clamp(x[0], *(t.reshape(()) if t is not None else None for t in
                                               (x[1:3] + [None, None])[:2])),
    "RoundOp": _round,
    "ReduceMeanOp": _reduce(torch.mean), "ReduceSumOp": _reduce(torch.sum), "ReduceMaxOp": _reduce(torch.amax),
    "ReduceMinOp": _reduce(torch.amin),
    "ArgMaxOp": _argmax, "HardmaxOp": _hardmax, "TopKOp": _topk,
    "SoftmaxOp": lambda x, a: torch.softmax(x[0], dim=int(a["axis"])),
    "NonZeroOp": lambda x, a: torch.nonzero(x[0]).T.contiguous(),
    "ExpandOp": lambda x, a: torch.broadcast_to(x[0], torch.broadcast_shapes(x[0].shape, tuple(_ints(x[1])))),
    "TileOp": lambda x, a: torch.tile(x[0], tuple(_ints(x[1]))),
    "SliceOp": _slice, "PadOp": _pad, "ConstantOfShapeOp": _constant_of_shape, "RangeOp": _range,
    "ScatterOp": _scatter, "ResizeOp": _resize,
    "Conv2DOp": _conv(2), "ConvDepthWise2DOp": lambda x, a: _conv(2)(x, a, groups=x[0].shape[1]),
    "PaddedConv2DOp": lambda x, a: _conv(2)(x, a, padding=a.get("padding_dims")),
    "PaddedConvDepthWise2DOp": lambda x, a: _conv(2)(x, a, groups=x[0].shape[1], padding=a.get("padding_dims")),
    "ConvTranspose1DOp": _conv_transpose(1), "ConvTranspose2DOp": _conv_transpose(2),
    "PaddedConvTranspose1DOp": _conv_transpose(1), "PaddedConvTranspose2DOp": _conv_transpose(2),
    "AvgPooling2DOp": _avg_pool, "PaddedAvgPooling2DOp": lambda x, a: _avg_pool(x, a, padded=True),
    "MaxPooling2DOp": _max_pool,
    "GlobalAveragePoolingOp": lambda x, a: x[0].mean(tuple(range(2, x[0].dim())), keepdim=True),
    "BatchNorm2DOp": _batch_norm,
    "InstanceNormOp": lambda x, a: F.instance_norm(x[0], weight=x[1], bias=x[2], eps=float(a.get("epsilon", 1e-5))),
    "LayerNormOp": _layer_norm,
    "LRNOp": lambda x, a: _lrn(x, a),
    "FCOp": _fc, "GemmOp": _gemm, "MatMulOp": lambda x, a: torch.matmul(x[0], x[1]),
    "HannWindowOp": _hann, "DropoutOp": _dropout,
}


def reference(operation: str, inputs: list, attributes: dict) -> tuple[torch.Tensor, ...]:
    """The torch outputs of ``operation`` on ``inputs`` (a tuple, one entry per output),
    computed in float64 when the inputs are floating point and rounded back to their dtype:
    the reference is then the correctly rounded result, not one more float32 summation
    order (measured: on conv2d ``shape.[1]C_in.64`` Aidge's float32 result is closer to the
    float64 one than torch's float32 result is)."""
    floats = [t.dtype for t in inputs if t is not None and t.is_floating_point()]
    work = [t.to(torch.float64) if t is not None and t.is_floating_point() else t for t in inputs]
    out = REFERENCES[operation](work, dict(attributes))
    out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if floats:
        out = tuple(o.to(floats[0]) if o.dtype == torch.float64 else o for o in out)
    return out


def reconcile_ties(operation: str, inputs: list, attributes: dict, actual: list, expected: tuple) -> tuple:
    """TopK on tied values: any index of a tied value is right. Where Aidge's index (in
    range) points at the value torch's index points at, Aidge's index is the expected one."""
    if operation != "TopKOp" or len(actual) < 2 or len(expected) < 2:
        return expected
    values, indices = expected
    got = torch.from_numpy(np.asarray(actual[1]).astype(np.int64))
    if got.shape != indices.shape:
        return expected
    axis = int(attributes.get("axis", -1))
    n = inputs[0].shape[axis]
    safe = got.clamp(0, n - 1)
    same = (got == safe) & (torch.gather(inputs[0], axis, safe) == torch.gather(inputs[0], axis, indices))
    return values, torch.where(same, got, indices)
