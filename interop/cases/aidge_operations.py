"""Aidge operation -> torch reference: one entry per ``operation`` of Aidge's benchmark
configurations (``Conv2DOp``, ``PaddedConvTranspose2DOp``, ...), the one place that says
whether an operation can be checked against torch, how its attributes translate (the
functions live in :mod:`interop.cases.aidge_references`), and, when it cannot, why.

An operation missing from the table (a new one in an Aidge checkout) is reported as
unmapped with that reason, never dropped. Some entries are mapped but leave out a case
whose attributes have no torch equivalent (``case_unmapped``): that case is reported
skipped with the reason.

Imports neither torch nor Aidge.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Mapping

__all__ = ["AidgeOperation", "OPERATIONS", "operation_entry", "unmapped_reason"]


@dataclasses.dataclass(frozen=True)
class AidgeOperation:
    operation: str
    #: the torch equivalent in words (what the CLI and the report show)
    torch: str
    #: why the operation has no torch reference (None: mapped)
    unmapped: str | None = None
    #: attributes -> why this case has no torch reference, or None
    case_unmapped: Callable[[Mapping], str | None] | None = None
    #: the inputs whose first dimension is the batch (the size policy reduces it)
    batch_inputs: tuple[int, ...] = (0,)
    #: how many of Aidge's outputs have a torch counterpart (None: all); the others are
    #: ONNX's optional outputs (MaxPool's Indices, Dropout's mask) that torch's function lacks
    compared_outputs: int | None = None
    #: Aidge resolves the output dims in the forward (they depend on input values)
    dims_from_data: bool = False


_TEMPLATE = ("a template, not an operator: aidge_core 0.10.1 has no {op} factory; aidge_benchmark substitutes a "
             "concrete operation (ReLU, Add, Sum...) at run time, so the file holds shape sweeps without an operator")
_RANDOM = "random by design ({what}): Aidge's and torch's random streams cannot be compared value by value"
_ONNX = ("an ONNX-format configuration (an ONNX {op} node, not an aidge_core factory); aidge_onnx 0.10.1 imports it "
         "as a generic {op}_ONNX node; this suite builds Aidge-format configurations only")


def _resize_unmapped(a: Mapping) -> str | None:
    mode = a.get("interpolation_mode", "round_prefer_floor")
    ctm = a.get("coordinate_transformation_mode", "half_pixel")
    if a.get("antialias"):
        return ("torch's antialias filter is not ONNX's (measured on linear downsampling by 2: onnxruntime and "
                "Aidge agree to 1.2e-7, torch differs from both by 0.038)")
    if mode in ("linear", "cubic") and ctm in ("half_pixel", "align_corners"):
        if mode == "cubic" and (a.get("cubic_coeff_a", -0.75) != -0.75 or a.get("exclude_outside")):
            return "torch's bicubic fixes cubic_coeff_a=-0.75 and has no exclude_outside"
        return None
    if mode == "floor" and ctm == "asymmetric":
        return None
    return (f"torch.nn.functional.interpolate has no interpolation with interpolation_mode={mode!r} and "
            f"coordinate_transformation_mode={ctm!r}")


def _avgpool_unmapped(a: Mapping) -> str | None:
    if list(a.get("dilations", [1, 1])) != [1, 1] and a.get("ceil_mode"):
        return "torch's avg_pool2d has no dilation; the unfold reference does not do ceil_mode"
    return None


def _dropout_unmapped(a: Mapping) -> str | None:
    return _RANDOM.format(what="a training-mode dropout mask") if a.get("training_mode", True) else None


def _e(operation: str, torch: str, **kw) -> AidgeOperation:
    return AidgeOperation(operation, torch, **kw)


_UNARY = {"AbsOp": "torch.abs", "AsinOp": "torch.asin", "AtanOp": "torch.atan", "CeilOp": "torch.ceil",
          "CosOp": "torch.cos", "CoshOp": "torch.cosh", "ErfOp": "torch.erf", "ExpOp": "torch.exp",
          "FloorOp": "torch.floor", "LnOp": "torch.log", "NegOp": "torch.neg", "ReciprocalOp": "torch.reciprocal",
          "ReLUOp": "torch.relu", "SigmoidOp": "torch.sigmoid", "SinOp": "torch.sin", "SinhOp": "torch.sinh",
          "SqrtOp": "torch.sqrt", "TanOp": "torch.tan", "TanhOp": "torch.tanh", "SoftplusOp": "F.softplus",
          "NotOp": "torch.logical_not"}
_BINARY = {"AddOp": "torch.add", "SubOp": "torch.sub", "MulOp": "torch.mul", "PowOp": "torch.pow",
           "DivOp": "torch.div (integers: rounding_mode='trunc')", "AndOp": "torch.logical_and",
           "EqualOp": "torch.eq", "GreaterOp": "torch.gt", "LessOp": "torch.lt"}

_ENTRIES: list[AidgeOperation] = [
    *[_e(op, fn) for op, fn in _UNARY.items()],
    *[_e(op, fn, batch_inputs=(0, 1)) for op, fn in _BINARY.items()],
    _e("WhereOp", "torch.where(cond, X, Y)", batch_inputs=(0, 1, 2)),
    _e("SumOp", "chained torch.add", batch_inputs=(0, 1, 2, 3, 4)),
    _e("MaxOp", "chained torch.maximum", batch_inputs=(0, 1, 2, 3, 4)),
    _e("MinOp", "chained torch.minimum", batch_inputs=(0, 1, 2, 3, 4)),
    _e("ModOp", "torch.remainder (fmod=True: torch.fmod)", batch_inputs=(0, 1)),
    _e("BitShiftOp", "<< / >> on int64 (rounding: (x + 2^(s-1)) >> s)", batch_inputs=(0, 1)),
    _e("HeavisideOp", "torch.heaviside(x, value)"),
    _e("LeakyReLUOp", "F.leaky_relu(negative_slope)"),
    _e("HardSigmoidOp", "clamp(alpha*x + beta, 0, 1) (F.hardsigmoid fixes alpha=1/6)"),
    _e("HardSwishOp", "x * clamp(alpha*x + beta, 0, 1) (F.hardswish fixes alpha=1/6)"),
    _e("ClipOp", "torch.clamp(x, min, max) (min/max are inputs)"),
    _e("RoundOp", "torch.round/floor/ceil/trunc compositions, one per rounding_mode"),
    _e("ReduceMeanOp", "torch.mean(dim=axes, keepdim) (an axes input overrides the attribute)"),
    _e("ReduceSumOp", "torch.sum(dim=axes, keepdim)"),
    _e("ReduceMaxOp", "torch.amax(dim=axes, keepdim)"),
    _e("ReduceMinOp", "torch.amin(dim=axes, keepdim)"),
    _e("ArgMaxOp", "torch.argmax(dim=axis, keepdim) (select_last_index: on the flipped tensor)"),
    _e("HardmaxOp", "F.one_hot(x.argmax(axis)) moved back to axis"),
    _e("TopKOp", "torch.topk(x, K, dim=axis, largest) (values, int64 indices; tied values: any of their indices)"),
    _e("SoftmaxOp", "torch.softmax(dim=axis)"),
    _e("NonZeroOp", "torch.nonzero(x).T ([rank, nnz], ONNX layout)", dims_from_data=True),
    _e("ExpandOp", "torch.broadcast_to(x, broadcast_shapes(x.shape, shape))"),
    _e("TileOp", "torch.tile(x, repeats)"),
    _e("SliceOp", "Python slicing (ONNX clamping, negative steps) of the data"),
    _e("PadOp", "numpy.pad (constant/reflect/edge/wrap; Aidge pads [b1, b2.., e1, e2..] over axes)"),
    _e("ConstantOfShapeOp", "torch.full(shape, value)"),
    _e("RangeOp", "torch.arange(start, limit, delta)"),
    _e("ScatterOp", "Tensor.scatter / scatter_reduce(include_self=True) (ONNX ScatterElements)"),
    _e("ResizeOp", "F.interpolate (bilinear/bicubic with half_pixel or align_corners; nearest = asymmetric+floor)",
       case_unmapped=_resize_unmapped),
    _e("Conv2DOp", "F.conv2d(stride, dilation)"),
    _e("ConvDepthWise2DOp", "F.conv2d(groups=C)"),
    _e("PaddedConv2DOp", "F.conv2d(F.pad(x, padding_dims [Hb, Wb, He, We]))"),
    _e("PaddedConvDepthWise2DOp", "F.conv2d(F.pad(x, padding_dims), groups=C)"),
    _e("ConvTranspose1DOp", "F.conv_transpose1d(stride, dilation)"),
    _e("ConvTranspose2DOp", "F.conv_transpose2d(stride, dilation)"),
    _e("PaddedConvTranspose1DOp", "F.pad(F.conv_transpose1d(...), padding_dims) (Aidge pads the output)"),
    _e("PaddedConvTranspose2DOp", "F.pad(F.conv_transpose2d(...), padding_dims) (Aidge pads the output)"),
    _e("AvgPooling2DOp", "F.avg_pool2d(kernel, stride (Aidge default 1), ceil_mode); dilations: mean of unfold",
       case_unmapped=_avgpool_unmapped),
    _e("PaddedAvgPooling2DOp", "F.avg_pool2d(F.pad(x, padding_dims), ...)"),
    _e("MaxPooling2DOp", "F.max_pool2d(kernel, stride, dilation, ceil_mode); output 0 (ONNX's Indices output "
                         "has no torch counterpart)", compared_outputs=1),
    _e("GlobalAveragePoolingOp", "x.mean(spatial dims, keepdim=True)"),
    _e("BatchNorm2DOp", "F.batch_norm(training=training_mode) (ONNX: training uses the batch statistics)"),
    _e("InstanceNormOp", "F.instance_norm(weight=scale, bias=B, eps)"),
    _e("LayerNormOp", "(x - mean) / sqrt(var + eps) * Scale + B over axes [axis, rank)"),
    _e("LRNOp", "F.local_response_norm(size, alpha, beta, k=bias)"),
    _e("FCOp", "F.linear(x.flatten(1), W, b)"),
    _e("GemmOp", "alpha * A' @ B' + beta * C; Aidge's transB=0 takes B as [N, K] (FC weight layout)"),
    _e("MatMulOp", "torch.matmul", batch_inputs=(0,)),
    _e("HannWindowOp", "0.5 - 0.5 cos(2 pi n / N), N = size (periodic) or size - 1 (ONNX; torch.hann_window "
                       "returns [1] for size 1)", dims_from_data=True),
    _e("DropoutOp", "identity in inference mode (training_mode=False); output 0 (not the mask)",
       case_unmapped=_dropout_unmapped, compared_outputs=1),
    _e("DropBlockOp", "-", unmapped=_RANDOM.format(what="DropBlock masks; torch core has no DropBlock either")),
    _e("RandomNormalLikeOp", "-", unmapped=_RANDOM.format(what="normal samples")),
    _e("CryptoHashOp", "-", unmapped="no torch equivalent: an Aidge-specific SHA256 of the tensor bytes"),
    _e("DFT", "-", unmapped=_ONNX.format(op="DFT")),
    _e("STFT", "-", unmapped=_ONNX.format(op="STFT")),
    _e("Padding", "-", unmapped="aidge_core 0.10.1 has no Padding factory (AttributeError); the file's labels "
                                "suggest [left, top, right, bottom] pads, which is not Aidge's [Hb, Wb, He, We]"),
    *[_e(op, "-", unmapped=_TEMPLATE.format(op=op)) for op in (
        "UnaryElementWiseOp", "BinaryElementWiseOp", "BroadcastOp", "ManyBroadcastOp", "MaryElementWiseOp")],
]

#: operation -> entry
OPERATIONS: dict[str, AidgeOperation] = {e.operation: e for e in _ENTRIES}


def operation_entry(operation: str) -> AidgeOperation:
    """The table's entry, or an unmapped one saying the table lacks the operation."""
    return OPERATIONS.get(operation) or AidgeOperation(
        operation, "-", unmapped=f"operation {operation!r} is not in interop/cases/aidge_operations.py: "
                                 "add an entry (torch reference and attribute translation)")


def unmapped_reason(operation: str, attributes: Mapping | None) -> str | None:
    """Why a case of ``operation`` with ``attributes`` has no torch reference, or None
    (``attributes`` None: whether the operation itself has one)."""
    entry = operation_entry(operation)
    if entry.unmapped:
        return f"{operation}: {entry.unmapped}"
    if entry.case_unmapped is not None and attributes is not None:
        reason = entry.case_unmapped(attributes)
        if reason:
            return f"{operation}: {reason}"
    return None
