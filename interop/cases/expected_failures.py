"""THE table of expected failures (every known Aidge defect the suites run into) and the one
lookup that pytest, asv and the reports use.

The table is data, one entry per *reason*: the Aidge operator responsible, the phase
(``import`` / ``compile`` / ``forward`` / ``backward`` / ``step``), the category, Aidge's
error text (quoted; for a numerical mismatch the comparator's), a note, and the cases it
concerns as ``"<Operator>:<label pattern>"`` keys. A case's *label* is its name inside its
operator or model (:attr:`interop.cases.case.Case.label`: ``attributes_kernel_square``,
``train``); a pattern matches the whole label or its tail after an ``_`` (``no_bias``
matches ``attr_no_bias`` and ``attr_batch_8_no_bias``), so an entry does not depend on how
a JSON file groups its cases.

One lookup, :func:`expected_failure`, keyed by (case, phases, backend): among the entries
covering the case on the backend whose phase the run reaches, the one with the earliest
phase (the run stops there). A case that does not train never reaches ``backward``/``step``:
its forward stays verified.

Entries are strict: a covered case that passes is XPASS(strict), i.e. a failure, so a fixed
Aidge shows up. A failure that does not quote the entry's text is a real failure. A failure
that quotes it but that the categoriser (:func:`interop.reporting.categorize`, the one place
that decides a category) puts in another category or phase is a real failure too
(:class:`ExpectedFailureMismatch`): the entry must be corrected.
"""
from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import functools
from typing import Iterable, Iterator

from ..reporting.categories import ATTRIBUTIONS, CATEGORIES
from ._export_cpp_failures import EXPORT_CPP_FAILURES
from ._opinfo_dtype_failures import OPINFO_DTYPE_FAILURES
from ._opinfo_failures import OPINFO_FAILURES
from ._opinfo_shard_failures import OPINFO_SHARD_FAILURES, OPINFO_SHARD_MEMORY_UNSAFE
from .case import KINDS, PHASES, on_backend

__all__ = [
    "CATEGORIES",
    "PHASES",
    "ExpectedFailure",
    "ExpectedAidgeFailure",
    "ExpectedFailureMismatch",
    "EXPECTED_FAILURES",
    "expected_failure",
    "with_expected_failure",
    "expected_failure_guard",
    "xfail_marks",
    "phase_of",
]


@dataclasses.dataclass(frozen=True)
class ExpectedFailure:
    """One known defect and the cases it concerns."""

    #: the Aidge operator responsible (node type, e.g. ``BatchNorm2D``)
    operator: str
    phase: str
    category: str
    #: Aidge's error text, quoted; the failure message must contain it. Where Aidge fails on one
    #: of two nodes from run to run (measured), the two quotes joined by `` || `` (either matches)
    error: str
    #: ``"<Operator>:<label pattern>"`` (``"FC:no_bias"``, ``"Abs:*"``, ``"ResNet:train"``)
    cases: tuple[str, ...]
    #: the kind of the cases (:data:`interop.cases.case.KINDS`)
    kind: str = "operator"
    #: restrict to a backend ("cpu"/"cuda"/"export_cpp") or a tuple of them; None = every backend
    backend: str | tuple[str, ...] | None = None
    note: str = ""
    #: a ``crash`` entry whose defect reads or writes out of bounds, so that, depending on the
    #: heap, the process dies (crash), runs into the timeout (hang) or, for a negative case,
    #: finishes on garbage (accepts_invalid_input): any of the three, in any phase, matches (say
    #: why in the note)
    memory_unsafe: bool = False
    #: with ``memory_unsafe``: other categories the heap was measured to turn the defect into (a
    #: wrong shape, a failed allocation...), beyond crash / hang / accepts_invalid_input; each quoted
    other_categories: tuple[str, ...] = ()
    #: who is to blame (:data:`interop.reporting.categories.ATTRIBUTIONS`): ``export`` and
    #: ``precision`` entries are not Aidge bugs; None: Aidge (every entry before the OpInfo source)
    attribution: str | None = None

    def __post_init__(self):
        if self.phase not in PHASES:
            raise ValueError(f"expected failure {self.operator} {self.cases}: unknown phase {self.phase!r} "
                             f"(one of {PHASES})")
        if self.category not in CATEGORIES and not (self.attribution == "export" and self.category == EXPORT_CATEGORY):
            raise ValueError(f"expected failure {self.operator} {self.cases}: unknown category {self.category!r} "
                             f"(one of {sorted(CATEGORIES)})")
        if not self.error.strip():
            raise ValueError(f"expected failure {self.operator} {self.cases}: quote Aidge's error text")
        if self.other_categories and not (self.memory_unsafe and set(self.other_categories) <= set(CATEGORIES)):
            raise ValueError(f"expected failure {self.operator}: other_categories need memory_unsafe, known names")
        if self.attribution not in (None, *ATTRIBUTIONS):
            raise ValueError(f"expected failure {self.operator} {self.cases}: unknown attribution "
                             f"{self.attribution!r} (one of {sorted(ATTRIBUTIONS)})")
        if self.kind not in KINDS:
            raise ValueError(f"expected failure {self.operator} {self.cases}: unknown kind {self.kind!r}")
        if isinstance(self.cases, str) or not self.cases or not all(
                isinstance(c, str) and c.count(":") == 1 and all(c.split(":")) for c in self.cases):
            raise ValueError(f"expected failure {self.operator}: cases must be '<Operator>:<label pattern>' "
                             f"strings, got {self.cases!r}")

    @property
    def quotes(self) -> tuple[str, ...]:
        """The quoted error text(s): a failure matches when it contains one of them."""
        return tuple(q.strip() for q in self.error.split(" || "))

    @property
    def reason(self) -> str:
        who = f" [attribution {self.attribution}]" if self.attribution else ""
        return f"[{self.category}] {self.operator} {self.phase}: {self.error}{who}"

    def covers(self, kind: str, operator: str, label: str, backend: str = "cpu") -> bool:
        """Whether this entry concerns the case ``operator``/``label`` of ``kind`` on ``backend``."""
        if kind != self.kind or not (self.backend is None or backend == self.backend
                                     or (isinstance(self.backend, tuple) and backend in self.backend)):
            return False
        for pattern in self._patterns.get(operator, ()):
            if fnmatch.fnmatchcase(label, pattern) or fnmatch.fnmatchcase(label, "*_" + pattern):
                return True
        return False

    @functools.cached_property
    def _patterns(self) -> dict[str, tuple[str, ...]]:
        """operator -> its label patterns (an OpInfo row names hundreds of cases: the lookup
        then only matches the patterns of the case's own operator)."""
        out: dict[str, list[str]] = {}
        for key in self.cases:
            op, pattern = key.split(":")
            out.setdefault(op, []).append(pattern)
        return {op: tuple(patterns) for op, patterns in out.items()}


#: the one category that is not Aidge's an entry may name: a torch -> ONNX export that fails
#: (an entry attributed to ``export``; the OpInfo source has such samples)
EXPORT_CATEGORY = "export_error (test strategy)"


class ExpectedAidgeFailure(Exception):
    """Raised when a case fails exactly as its table entry says (turned into XFAIL)."""


class ExpectedFailureMismatch(AssertionError):
    """A failure quotes an entry's error text, but the categoriser puts it in another
    category or phase than the entry says: the entry is wrong, the test fails."""


# ---------------------------------------------------------------------------------------
# The table. Notes say what was measured; docs/aidge-notes.md has the background.
# ---------------------------------------------------------------------------------------
def _missing_backward(op_class: str, *cases: str, operator: str | None = None, note: str = "",
                      generic: bool = False) -> ExpectedFailure:
    """A backward kernel missing in aidge_backend_cpu 0.10.1 (two message forms exist)."""
    name = operator or op_class.split("_Op")[0]
    error = (f"backward() not implemented yet for operator of type {op_class}" if generic
             else f"Backward not yet implemented for {op_class} on backend cpu")
    return ExpectedFailure(name, "backward", "backward_not_implemented", error, cases, note=note)


def _not_imported(operator: str, onnx_op: str, *cases: str, note: str = "") -> ExpectedFailure:
    """An ONNX node that aidge_onnx 0.10.1 imports as a GenericOperator (no native operator)."""
    return ExpectedFailure(operator, "import", "unsupported_operator",
                           f"'{onnx_op}' (ONNX op {onnx_op}); they were imported as GenericOperator", cases, note=note)


#: Aidge's Python backends: entries measured on their kernels (the C++ export has its own
#: kernels; its entries say backend="export_cpp")
_PY = ("cpu", "cuda")

_REDUCTIONS = ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin")
_BN_TRAIN = ("Aidge BatchNorm2D (cpu) ignores training_mode=True: it normalises with the running statistics "
             "where torch uses the batch statistics.")

_OPERATORS: tuple[ExpectedFailure, ...] = (
    # -- backward kernels missing in aidge_backend_cpu 0.10.1 ------------------------------------
    _missing_backward("Abs_Op", "Abs:*"),
    _missing_backward("AvgPooling_Op<2>", "AvgPool2D:*", operator="AvgPooling2D",
                      note="Padded cases import as PaddedAvgPooling2D and stop at the same kernel."),
    _missing_backward("GlobalAveragePooling_Op", "GlobalAveragePool:*"),
    _missing_backward("Erf_Op", "Erf:*", "GELU:*exact*",
                      note="Exact GELU exports (opset 18) as Div + Erf + Add + Mul; the tanh form trains fine."),
    _missing_backward("MatMul_Op", "MatMul:*", "FC:no_bias",
                      note="torch exports a Linear without bias as Transpose + MatMul (not Gemm/FC)."),
    _missing_backward("ConvDepthWise_Op<2>", "ConvDepthwise2D:*", operator="ConvDepthWise2D"),
    _missing_backward("Conv_Op<2>", "ConvTranspose2D:*", operator="ConvTranspose2D",
                      note="Aidge's message names Conv_Op<2> although the node is a (Padded)ConvTranspose2D."),
    _missing_backward("BatchNorm_Op<2>", "BatchNorm2D:eval*", operator="BatchNorm2D"),
    _missing_backward("LayerNorm_Op", "LayerNorm:*"),
    _missing_backward("Split", "Split:*", generic=True),
    _missing_backward("Slice_Op", "Slice:*", "Resize:*", "Flatten:start_dim_2_rank_4", operator="Slice",
                      note="Resize: F.interpolate exports the output size as Shape + Slice + Concat feeding Resize; "
                           "Flatten(start_dim=2): a Reshape to a shape computed by Shape/Slice/Concat. Aidge's "
                           "backward walks into that Slice; the forwards match."),
    _missing_backward("Gather", "Gather:*", "Embedding:*", generic=True,
                      note="nn.Embedding exports as Gather on the weight table."),
    *[_missing_backward(f"{op}_Op", f"{op}:*") for op in _REDUCTIONS],
    # -- backward through the non-differentiable helper nodes of an export ------------------------
    _missing_backward("Cast", "Clip:*", generic=True,
                      note="torch.clamp exports its min/max as Cast nodes feeding Clip; Aidge's backward walks into "
                           "them instead of stopping at the constant inputs. Clip's forward matches."),
    _missing_backward("Shape", "GroupNorm:*", generic=True,
                      note="GroupNorm exports as Reshape + InstanceNormalization + Reshape(Shape(x)) + Mul + Add; "
                           "Aidge's backward walks into the Shape node. The forward matches."),
    _missing_backward("Greater_Op", "Where:*",
                      note="torch.where(x > t, x, y): Aidge's backward walks into the (non-differentiable) "
                           "condition's Greater node."),
    # -- graphs Aidge cannot import ---------------------------------------------------------------
    _not_imported("Elu", "Elu", "ELU:*", note="aidge_onnx 0.10.1 has no Elu importer."),
    _not_imported("Conv2D", "Conv", "Conv2D:groups_*",
                  note="A grouped convolution (1 < group < in_channels) has no Aidge operator; group == 1 "
                       "(Conv2D) and group == in_channels (ConvDepthWise2D) import."),
    _not_imported("LayerNorm", "LayerNormalization", "LayerNorm:no_affine",
                  note="Without elementwise affine, torch exports LayerNormalization with constant Scale/B; "
                       "aidge_onnx falls back to a GenericOperator (the affine form imports as LayerNorm)."),
    # -- Aidge rejects a valid graph or input -----------------------------------------------------
    ExpectedFailure("ConvDepthWise2D", "compile", "compile_error",
                    "Aidge cannot compute the output dims of node 'Conv'", ("ConvDepthwise2D:channel_multiplier_*",),
                    note="Conv2d(C, m*C, groups=C) (a channel multiplier m > 1) imports as ConvDepthWise2D, whose dims "
                         "propagation rejects the weight [m*C, 1, kh, kw] ('Wrong input size ([2, 3, 8, 8]) for "
                         "ConvDepthWise operator. Expected dims are [x, 6, x, x]'), but GraphView.compile only logs "
                         "it; run as is, the graph writes outside its undefined output (observed: SIGSEGV, SIGABRT in "
                         "free(), an empty output). wrap() checks every node's dims after compile "
                         "(interop.bridge.check_dims_forwarded), wherever the node sits in the graph, and raises "
                         "this compile error first, so the suite reports a deterministic compile_error instead of "
                         "a crash that depends on the heap.", backend=_PY),
    ExpectedFailure("Slice", "forward", "aidge_error", "Slice: Step (-1) is negative, we must have End (",
                    ("Pad:*",),
                    note="F.pad exports its pads through Slice(starts=[-1], ends=[-INT_MAX], steps=[-1]) (a reversal, "
                         "valid ONNX: ends clamp to -1); Aidge's Slice does not clamp ends for a negative step and "
                         "rejects the input, so no torch-exported Pad runs.", backend=_PY),
    ExpectedFailure("Reshape", "forward", "aidge_error",
                    "Number of elements to copy is above implementation current capacity (1536B > 4B)",
                    ("Flatten:start_dim_0_rank_4",),
                    note="torch.flatten(x, 0) exports as Reshape to a shape computed by Shape/Slice/Concat; Aidge "
                         "sizes the output for one element and fails to copy the 384 values.", backend=_PY),
    # -- Aidge computes something else ------------------------------------------------------------
    *[ExpectedFailure(op, "forward", "output_shape_differs", "Shapes do not match at output: actual (1,) vs expected ()",
                      (f"{op}:keep_dims_false_all_dims",),
                      note="Reducing every axis with keep_dims=0 gives a 0-d tensor in torch and ONNX; Aidge "
                           "returns shape [1] (holding the same value, within tolerance).", backend=_PY)
      for op in _REDUCTIONS],
    ExpectedFailure("ConvTranspose2D", "forward", "outputs_differ",
                    "output differs between model1 (ConvTranspose2D) and model2 (AidgeModule)",
                    ("ConvTranspose2D:no_bias*",),
                    note="Without a bias, Aidge's ConvTranspose2D returns the right output on the first call and a "
                         "wrong one on the second (every element; interop.verify(nn.ConvTranspose2d(3, 2, 3, "
                         "bias=False), x, backward=False): outputs_differ at call 2); with a bias both calls match. "
                         "Found once the forward of cases whose backward is a known failure was checked on two "
                         "calls (before, the first backward stopped the case).", backend=_PY),
    ExpectedFailure("BatchNorm2D", "forward", "outputs_differ",
                    "output differs between model1 (BatchNorm2D) and model2 (AidgeModule)", ("BatchNorm2D:train*",),
                    note=_BN_TRAIN + " (See the model suite's <Name>_train entries.)", backend=_PY),
    ExpectedFailure("LeakyReLU", "backward", "gradients_differ", "Tensors are not close at input grad [0]!",
                    tuple(f"LeakyReLU:{c}" for c in (
                        "slope_0_01", "slope_0", "slope_0_1", "slope_0_2", "slope_0_5", "slope_2",
                        "slope_negative_0_3", "inputs_rank_2", "inputs_rank_3", "inputs_rank_5")),
                    note="Aidge's LeakyReLU backward scales the gradient of positive inputs by negative_slope too "
                         "(measured: actual = slope x expected where x > 0; slope 0 gives 0, slope 2 doubles it); "
                         "slope 1 (the identity) passes. The forward matches.", backend=_PY),
)

# Property-based edge cases (tests/test_operators_hypothesis.py, ids hypothesis_<Op>_<values>)
_PROPERTIES: tuple[ExpectedFailure, ...] = (
    ExpectedFailure("ReLU", "forward", "outputs_differ", "actual 0.0, expected nan", ("ReLU:nonfinite",),
                    kind="property",
                    note="Aidge's ReLU maps NaN to 0 (torch propagates NaN); minimal example: tensor([nan]). "
                         "Every other edge value (+-0, +-Inf, float32 extremes, subnormals) matches."),
)

# Model suite (tests/test_models.py). A ``<Name>_train`` case runs both models in train
# mode (BatchNorm on batch statistics). Aidge's BatchNorm2D ignores training_mode, so the
# first forward already differs: there is no Aidge error to quote and the entry quotes
# the suite's own first failure line; tests/test_models.py::test_batchnorm_training_forward_cause
# checks the diagnosis (Aidge's train-mode output == torch's eval-mode output). Measured
# on the cpu backend only: the cuda backend is left to its first GPU run.
_MODELS: tuple[ExpectedFailure, ...] = tuple(
    ExpectedFailure("BatchNorm2D", "forward", "outputs_differ",
                    f"[{name}_train, epoch 0] output differs between model1 ({cls}) and model2 (AidgeModule)",
                    (f"{name}:train",), kind="model", backend="cpu",
                    note=f"{_BN_TRAIN}{extra} Next in line, backward: '{after}'.")
    for name, cls, extra, after in (
        ("ResNet", "ResNet", "", "Backward not yet implemented for GlobalAveragePooling_Op on backend cpu"),
        ("MobileNetV1", "MobileNetV1", "", "Backward not yet implemented for GlobalAveragePooling_Op on backend cpu"),
        ("KWS", "KWSDSCNN", "", "Backward not yet implemented for AvgPooling_Op<2> on backend cpu"),
        ("Anomaly", "AnomalyAutoencoder", " BatchNorm1d on (N, C) imports as BatchNorm2D.",
         "Backward not yet implemented for BatchNorm_Op<2> on backend cpu"),
    )
) + (
    ExpectedFailure("LayerNorm", "backward", "backward_not_implemented",
                    "Backward not yet implemented for LayerNorm_Op on backend cpu", ("Transformer:train",),
                    kind="model", backend="cpu",
                    note="Forward (eval and train mode) matches; the first backward step stops at norm2."),
)

# Aidge's own benchmark configurations (tests/test_aidge_configs.py, kind aidge_config, ids
# aidge.<file>_<label path>): one Aidge node built from its factory against a torch reference
# computed in float64; a negative case (error / expected_error) must be rejected. Measured on
# aidge-benchmark 0.10.1 with the default run's size policy; "config" in a note: the case
# itself contradicts ONNX (the finding is about the file, Aidge behaves as ONNX says).
_ACCEPTS = "Aidge accepts invalid input"
_CRASH = "crash: process "  # AidgeCrash: killed by a signal (or, memory_unsafe, run into the timeout)


def _cfg(operator: str, phase: str, category: str, error: str, *cases: str, note: str = "",
         memory_unsafe: bool = False) -> ExpectedFailure:
    file = cases[0].split(":")[0]
    return ExpectedFailure(operator, phase, category, error,
                           tuple(c if ":" in c else f"{file}:{c}" for c in cases), kind="aidge_config",
                           note=note, memory_unsafe=memory_unsafe)


def _differs(op: str) -> str:
    return f"output differs between model1 (torch {op}Op) and model2 (Aidge {op}Op)"


_AIDGE_CONFIGS: tuple[ExpectedFailure, ...] = (
    _cfg("BatchNorm2D", "forward", "outputs_differ", _differs("BatchNorm2D"), "aidge.batchnorm2d:training_*",
         note=_BN_TRAIN + " All 21 training_mode=1 cases of batchnorm2d.json; the 21 inference ones pass."),
    _cfg("BitShift", "forward", "outputs_differ", _differs("BitShift"), "aidge.bitshift:*big_shift*",
         note="uint32 shifted by 32 bits or more (C++ undefined behaviour): Aidge returns x86's result for the shift "
              "count modulo 32 (left: 1 << 37 gives 32; right: 8 where 0 is expected); the reference gives 0, "
              "the value of the shift on the mathematical integers truncated to 32 bits."),
    _cfg("ConstantOfShape", "compile", "compile_error", "forward_dims() returned False", "aidge.constant_of_shape:n_dims_0",
         note="An empty shape input (a 0-d output holding value): Aidge cannot compute the dims; forced to run, it "
              "returns 0 instead of the value 1."),
    _cfg("FC", "forward", "forward_not_implemented", "missing or invalid registrar key", "aidge.fc:incompatible_types",
         note="int8 input with float32 weight: no kernel. The case sits outside expected_error in fc.json, probably "
              "a mislabelled negative case (config)."),
    _cfg("HannWindow", "import", "import_error", "HannWindowOp(): incompatible function arguments",
         "aidge.hann_window:ok_float64_output",
         note="The file gives output_datatype \"double\" (a string); the factory takes an aidge_core.dtype (config)."),
    _cfg("HannWindow", "forward", "crash", _CRASH, "aidge.hann_window:ok_zero_length", "error_negative_size",
         memory_unsafe=True, note="size 0 or -1: the forward writes outside its output (SIGSEGV; heap-dependent)."),
    _cfg("HannWindow", "forward", "accepts_invalid_input", _ACCEPTS, "aidge.hann_window:error_non_scalar_size",
         "error_wrong_dtype", note="A size of shape [1] and a float size are run as size 8 (ONNX: an int scalar)."),
    _cfg("LayerNorm", "forward", "outputs_differ", _differs("LayerNorm"), "aidge.layer_normalization:ok_attr_axis_-3",
         "ok_attr_axis_1", "ok_shape_size_channels_128",
         note="Less accurate, not wrong: normalising over 2^17 or more elements, Aidge's float32 result is 2.7e-5 "
              "(channels 128: 1.3e-4) from the float64 one, torch's float32 one 3e-7 (the variance in one pass?)."),
    _cfg("LayerNorm", "forward", "outputs_differ", _differs("LayerNorm"), "aidge.layer_normalization:ok_attr_axis_0",
         note="axis=0 (normalise over every dim): wrong output, off by up to 2.6. Minimal: x = arange(8) as "
              "(1, 2, 2, 2), Scale 1, B 0, axis=0 gives all zeros (as if normalising over the size-1 axis 0 "
              "alone); axis=1 on the same x matches."),
    _cfg("LayerNorm", "forward", "accepts_invalid_input", _ACCEPTS, "aidge.layer_normalization:error_axis_oor",
         "error_one_feature", note="axis=5 on a rank-4 input runs; one feature (output = B) is valid ONNX (config)."),
    _cfg("LRN", "compile", "compile_error", "Insufficient Tensor dims for LRN", "aidge.lrn:ok_shape_n_dims_2",
         note="A rank-2 input: ONNX LRN is defined on (N, C, D1, ...), so Aidge's rejection is right (config)."),
    _cfg("LRN", "forward", "accepts_invalid_input", _ACCEPTS, "aidge.lrn:error_rank_not_4d", "error_attr_size_missing",
         note="A rank-3 input is valid ONNX; 'size missing' still gets size 5 from base_configuration (config)."),
    _cfg("Gemm", "forward", "accepts_invalid_input", _ACCEPTS, "aidge.gemm:*expected_error_wrong_rank_input_[134]",
         note="A (1, 16) A with a rank-1, -3 or -4 B or C runs and returns (1, 32): the FC inside flattens its inputs (input_0, a rank-1 A, is rejected)."),
    _cfg("Resize", "forward", "accepts_invalid_input", _ACCEPTS, "aidge.resize:error_zero_size_scale",
         note="A scale of 0 gives an output with a zero-sized dimension instead of an error."),
    _cfg("Where", "compile", "compile_error", "forward_dims() returned False",
         "aidge.where:basic_broadcast_dim_with_zero",
         note="A zero-sized dimension (torch broadcasts it to an empty output); forced to run: SIGSEGV."),
    _cfg("TopK", "compile", "compile_error", "k tensor must be of type int64", "aidge.topk:ok_k_int32",
         note="ONNX TopK takes K as int64 only: Aidge's rejection is right (config)."),
    _cfg("TopK", "forward", "crash", _CRASH, "aidge.topk:error_k_negative", "error_axis_oor", memory_unsafe=True,
         note="K=-3: the output dims become [1, 32, 64, 65533] (K as a uint16) and the forward reads far out of "
              "bounds (SIGSEGV, or minutes of sorting garbage: heap-dependent); axis=5 of 4: SIGSEGV in the forward "
              "(once, in a long-lived xdist worker, it ended otherwise: the axis indexes past the dims)."),
    _cfg("TopK", "forward", "accepts_invalid_input", _ACCEPTS, "aidge.topk:error_k_exceeds_dim",
         note="K=11 over a dimension of 10: runs and returns an 11-wide output (the 11th values uninitialised)."),
)


# PyTorch's OpInfo samples (tests/test_opinfo.py, ids opinfo_<entry>_s<index>_<sample>): the
# rows are data in interop/cases/_opinfo_failures.py (triaged from a run, one row per reason),
# each with its attribution; notes per category and per new defect class below.
_OPINFO_NOTES = {
    "output_shape_differs": "A reduction to a 0-d tensor: Aidge returns shape [1] (see the catalog's keep_dims "
                            "entries).",
    "crash": "Aidge kills the process in forward (new class: docs/aidge-notes.md#opinfo-samples).",
    "gradients_differ": "Input gradient differs from torch's, and torch's float64 gradient sides with torch float32.",
    "outputs_differ": "Forward differs; onnxruntime on the same ONNX model agrees with torch unless the row says "
                      "export.",
}

def _opinfo_entry(operator, phase, category, error, attribution, cases, **extra) -> ExpectedFailure:
    extra.setdefault("note", _OPINFO_NOTES.get(category, "OpInfo sample; see docs/aidge-notes.md#opinfo-samples."))
    return ExpectedFailure(operator, phase, category, error, cases, kind="opinfo", backend="cpu", attribution=attribution, **extra)


_OPINFO = tuple(_opinfo_entry(*row) for row in OPINFO_FAILURES + OPINFO_DTYPE_FAILURES)
# the full OpInfo run's shard 1/15 (_opinfo_shard_failures.py): cases only that run collects
_OPINFO_SHARD = tuple(_opinfo_entry(*row) for row in OPINFO_SHARD_FAILURES) + tuple(
    _opinfo_entry(*row[:5], row[6], memory_unsafe=True, other_categories=row[5],
                  note="Heap-dependent out-of-bounds read: several outcomes (_opinfo_shard_failures.py).")
    for row in OPINFO_SHARD_MEMORY_UNSAFE)


# Backend export_cpp (Aidge's generated C++, aidge-export-cpp 0.10.1): the rows are data in
# interop/cases/_export_cpp_failures.py (measured in layout mode "torch", every case of the
# operator and model suites); generation errors are phase compile, silent mismatches forward.
_EXPORT_CPP: tuple[ExpectedFailure, ...] = tuple(ExpectedFailure(**row, backend="export_cpp")
                                                 for row in EXPORT_CPP_FAILURES)

EXPECTED_FAILURES: tuple[ExpectedFailure, ...] = (_OPERATORS + _PROPERTIES + _MODELS + _AIDGE_CONFIGS + _OPINFO
                                                  + _OPINFO_SHARD + _EXPORT_CPP)
#: the entries of the full run's shard (unit tests check them against that shard, not the default run)
OPINFO_SHARD_ENTRIES = frozenset(id(e) for e in _OPINFO_SHARD)


# ---------------------------------------------------------------------------------------
# The lookup
# ---------------------------------------------------------------------------------------
def expected_failure(case, backend: str | None = None, phases: Iterable[str] | None = None,
                     table: Iterable[ExpectedFailure] = EXPECTED_FAILURES) -> ExpectedFailure | None:
    """The entry that decides ``case`` (a :class:`~interop.cases.case.Case`) on ``backend``
    (default: the case's) when the run goes through ``phases`` (default: the case's own
    phases; asv passes the phases up to the one it times): among the covering entries, the
    one with the earliest phase. None when the case is expected to pass."""
    backend = backend or case.backend
    reached = set(case.phases if phases is None else phases)
    hits = [e for e in table if e.phase in reached and e.covers(case.kind, case.operator, case.label, backend)]
    return min(hits, key=lambda e: PHASES.index(e.phase), default=None)


def with_expected_failure(case, backend: str | None = None):
    """``case`` on ``backend`` (default: its own) with the entry that decides it there
    attached (:func:`expected_failure`): what the catalog, ``build_cases`` and the pytest
    fixtures hand out."""
    case = on_backend(case, backend or case.backend)
    return dataclasses.replace(case, expected_failure=expected_failure(case))


def phase_of(exc: BaseException) -> str | None:
    """The phase a failure happened in: an AidgeError's own, or the part of the
    equivalence check an EquivalenceError names (output/loss: forward, gradients: backward,
    weights after the step: step)."""
    return getattr(exc, "phase", None) or None  # EquivalenceError decides its own from what differs


#: what a memory-unsafe defect may end as (:attr:`ExpectedFailure.memory_unsafe`)
_MEMORY_UNSAFE = frozenset({"crash", "hang", "accepts_invalid_input"})
_ACCEPTED = "Aidge accepts invalid input"


def _check_entry(entry: ExpectedFailure, exc: BaseException) -> None:
    from ..reporting.categories import categorize

    text = str(exc)
    category = categorize(None, text)[0] if isinstance(exc, AssertionError) else categorize(text)[0]
    phase = phase_of(exc)
    wrong = []
    if entry.memory_unsafe and (category in _MEMORY_UNSAFE or category in entry.other_categories):
        category = entry.category  # the entry says why one heap faults, another loops or runs on
    if category != entry.category:
        wrong.append(f"category {category!r} (entry: {entry.category!r})")
    if phase not in (None, "unknown") and phase != entry.phase and not entry.memory_unsafe:  # a crash outside the bridge has no phase
        wrong.append(f"phase {phase!r} (entry: {entry.phase!r})")
    attribution = getattr(exc, "attribution", None)
    if entry.attribution and attribution and attribution != entry.attribution:
        wrong.append(f"attribution {attribution!r} (entry: {entry.attribution!r})")
    if wrong:
        raise ExpectedFailureMismatch(
            f"this failure quotes the expected-failure entry {entry.operator} {list(entry.cases)} but the "
            f"categoriser gives it {' and '.join(wrong)}: correct the entry in "
            f"interop/cases/expected_failures.py\n--- actual failure ---\n{text}") from exc


@contextlib.contextmanager
def expected_failure_guard(entry: ExpectedFailure | None) -> Iterator[None]:
    """Inside: a failure whose message contains ``entry.error``, in the entry's category
    and phase, becomes :class:`ExpectedAidgeFailure` (what the strict xfail mark accepts);
    any other failure propagates unchanged and fails the test."""
    if entry is None:
        yield
        return
    try:
        yield
    except Exception as exc:  # AssertionError included
        if any(quote in str(exc) for quote in entry.quotes) or (entry.memory_unsafe and _ACCEPTED in str(exc)):
            _check_entry(entry, exc)
            expected = ExpectedAidgeFailure(f"{entry.reason}\n--- actual failure ---\n{exc}")
            expected.entry = entry  # what the records read (interop.records.classify)
            raise expected from exc
        raise


def xfail_marks(entry: ExpectedFailure | None) -> list:
    """The pytest marks for a case: a strict xfail accepting only ExpectedAidgeFailure."""
    if entry is None:
        return []
    import pytest

    return [pytest.mark.xfail(reason=entry.reason, strict=True, raises=ExpectedAidgeFailure)]
