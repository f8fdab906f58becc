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
from typing import Iterable, Iterator

from ..reporting.categories import CATEGORIES
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
    #: Aidge's error text, quoted; the failure message must contain it
    error: str
    #: ``"<Operator>:<label pattern>"`` (``"FC:no_bias"``, ``"Abs:*"``, ``"ResNet:train"``)
    cases: tuple[str, ...]
    #: the kind of the cases (:data:`interop.cases.case.KINDS`)
    kind: str = "operator"
    #: restrict to a backend ("cpu"/"cuda"/"export_cpp") or a tuple of them; None = every backend
    backend: str | tuple[str, ...] | None = None
    note: str = ""

    def __post_init__(self):
        if self.phase not in PHASES:
            raise ValueError(f"expected failure {self.operator} {self.cases}: unknown phase {self.phase!r} "
                             f"(one of {PHASES})")
        if self.category not in CATEGORIES:
            raise ValueError(f"expected failure {self.operator} {self.cases}: unknown category {self.category!r} "
                             f"(one of {sorted(CATEGORIES)})")
        if not self.error.strip():
            raise ValueError(f"expected failure {self.operator} {self.cases}: quote Aidge's error text")
        if self.kind not in KINDS:
            raise ValueError(f"expected failure {self.operator} {self.cases}: unknown kind {self.kind!r}")
        if isinstance(self.cases, str) or not self.cases or not all(
                isinstance(c, str) and c.count(":") == 1 and all(c.split(":")) for c in self.cases):
            raise ValueError(f"expected failure {self.operator}: cases must be '<Operator>:<label pattern>' "
                             f"strings, got {self.cases!r}")

    @property
    def reason(self) -> str:
        return f"[{self.category}] {self.operator} {self.phase}: {self.error}"

    def covers(self, kind: str, operator: str, label: str, backend: str = "cpu") -> bool:
        """Whether this entry concerns the case ``operator``/``label`` of ``kind`` on ``backend``."""
        if kind != self.kind or not (self.backend is None or backend == self.backend
                                     or (isinstance(self.backend, tuple) and backend in self.backend)):
            return False
        for key in self.cases:
            op, pattern = key.split(":")
            if op == operator and (fnmatch.fnmatchcase(label, pattern) or fnmatch.fnmatchcase(label, "*_" + pattern)):
                return True
        return False


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


# Backend export_cpp (Aidge's generated C++, aidge-export-cpp 0.10.1), layout mode "torch" (the
# policy; docs/aidge-notes.md, "C++ export", has both modes per operator). Generation errors are
# phase compile (the bridge's "aidge-export-cpp generation failed: <the export's message>"); a
# silent mismatch quotes the comparator. Measured on 2 cores, every case of the suites.
_GEN = "aidge-export-cpp generation failed: "


def _export(operator: str, category: str, error: str, *cases: str, phase: str = "compile", kind: str = "operator",
            note: str = "") -> ExpectedFailure:
    return ExpectedFailure(operator, phase, category, error, cases, kind=kind, backend="export_cpp", note=note)


_MISMATCH = "Tensors are not close at output!"
_EXPORT_CPP: tuple[ExpectedFailure, ...] = (
    _export("any 5-D input", "compile_error", _GEN + "list index out of range",
            *[f"{op}:*rank_5" for op in ("ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "SiLU", "Hardswish",
                                         "Hardsigmoid", "Softplus", "Sqrt", "Exp", "Log", "Abs", "Neg", "Erf",
                                         "Reciprocal")],
            note="adapt_input_dformats (aidge_core.export_utils.deploy_utils) picks the input layout from a "
                 "4-entry list indexed by rank - 1: a 5-D input has none. The message names no operator."),
    *[_export(op, "compile_error", _GEN + "Graphs with more than 1 mandatory input are not supported yet",
              *cases, note="model_forward takes one input: every two-input operator case stops here.")
      for op, cases in (("Add", ("Add:*",)), ("Sub", ("Sub:*",)), ("Mul", ("Mul:*",)), ("Div", ("Div:*",)),
                        ("Pow", ("Pow:broadcast_*",)), ("MatMul", ("MatMul:*",)), ("Concat", ("Concat:*",)),
                        ("Where", ("Where:*",)))],
    *[_export(op, "forward_not_implemented", _GEN + "No implementation found for node", *cases, note=note)
      for op, cases, note in (
          ("LogSoftmax", ("LogSoftmax:*",), "No export kernel for LogSoftmax."),
          ("Exp", ("Exp:rank_[1-4]*", "Softplus:attributes_*", "Softplus:inputs_rank_[23]"), "No export kernel for Exp; Aidge's Softplus is a meta-operator "
                                           "expanded into Exp + ..., which stops at the same node."),
          ("Flatten", ("Flatten:start_dim_1_*",), "Flatten(start_dim=1) stays a Flatten node, which has no export "
                                                 "kernel."))],
    _export("Pad", "forward_not_implemented", _GEN + "missing or invalid registrar key", "Pad:*",
            note="F.pad exports its pads as a Shape/ConstantOfShape/Mul... subgraph on int64; the export's "
                 "constant folding runs it on the cpu backend, which has no int64 Mul kernel."),
    _export("Slice", "compile_error", _GEN + "Slice_Op: Step ([0]) must have a non-zero value on axis 0!", "Slice:*",
            note="The Slice's starts/ends/axes/steps come from Unsqueeze'd constants; generation reads a zero step."),
    _export("Resize", "compile_error", _GEN + "Resize: All scale values must be strictly positive (got 0).",
            "Resize:*", note="F.interpolate's output size is computed by Shape/Slice/Concat; the export reads 0 scales."),
    _export("Reshape", "compile_error", _GEN + "Reshape: output size (48) does not match input size (384).",
            "Reshape:attributes_zero_copies_dims", "Flatten:*start_dim_2_rank_4",
            note="A Reshape whose shape holds 0 (copy the input's dim) or is computed: the export sizes it wrong."),
    _export("Slice", "compile_error", _GEN + "Cannot generate memory with token-based producer-consumer model",
            "Flatten:start_dim_0_rank_4", "ConvDepthwise2D:channel_multiplier_*",
            note="The export's memory planner rejects the node (a Slice of torch.flatten(x, 0); the channel-"
                 "multiplier depthwise convolution, which the cpu backend rejects at compile too)."),
    # -- silent mismatches: the export runs and returns other values ---------------------------------
    _export("MaxPooling2D", "outputs_differ", _MISMATCH, "MaxPool2D:dilation_2*", phase="forward",
            note="Dilation is ignored (the result equals a dilation-1 pooling's)."),
    _export("AvgPooling2D", "outputs_differ", _MISMATCH, "AvgPool2D:*count_exclude_pad", "AvgPool2D:ceil_mode_*",
            phase="forward", note="Padded average pooling divides by the full window (count_include_pad) and "
                                  "ceil_mode windows are wrong at the border."),
    _export("GlobalAveragePooling", "outputs_differ", _MISMATCH, "GlobalAveragePool:non_square_5x7", phase="forward",
            note="Square spatial inputs match; a 5x7 one does not."),
    _export("Clip", "outputs_differ", _MISMATCH, "Clip:*", "Hardtanh:*", phase="forward",
            note="torch.clamp / Hardtanh export min and max as inputs (Constant -> Cast); the export's Clip "
                 "ignores them and returns its input unclipped (measured: -3.54 where torch gives -0.5)."),
    _export("Reshape", "outputs_differ", _MISMATCH, "Transformer:eval", phase="forward", kind="model",
            note="Every element differs (max 0.26). Localised by exporting parts of the block: q_proj and norm1 "
                 "match; x.reshape(n, s, heads, head_dim) (its shape computed from x.shape) comes out of the "
                 "export as [4, 16, 8, 1] instead of [4, 2, 8, 8], so the attention runs on wrong heads. As an "
                 "output the bridge refuses those dims; inside the graph nothing notices."),
)

EXPECTED_FAILURES: tuple[ExpectedFailure, ...] = _OPERATORS + _PROPERTIES + _MODELS + _EXPORT_CPP


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
    phase = getattr(exc, "phase", None)
    if phase:
        return phase
    what = getattr(exc, "what", None)
    if what is None:
        return None
    if what.startswith("weights after"):
        return "step"
    if what.startswith(("input grad", "grad")):
        return "backward"
    if what.startswith(("output", "loss")):
        return "forward"
    return None


def _check_entry(entry: ExpectedFailure, exc: BaseException) -> None:
    from ..reporting.categories import categorize

    text = str(exc)
    category = categorize(None, text)[0] if isinstance(exc, AssertionError) else categorize(text)[0]
    phase = phase_of(exc)
    wrong = []
    if category != entry.category:
        wrong.append(f"category {category!r} (entry: {entry.category!r})")
    if phase not in (None, "unknown") and phase != entry.phase:  # a crash outside the bridge has no phase
        wrong.append(f"phase {phase!r} (entry: {entry.phase!r})")
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
        if entry.error in str(exc):
            _check_entry(entry, exc)
            raise ExpectedAidgeFailure(f"{entry.reason}\n--- actual failure ---\n{exc}") from exc
        raise


def xfail_marks(entry: ExpectedFailure | None) -> list:
    """The pytest marks for a case: a strict xfail accepting only ExpectedAidgeFailure."""
    if entry is None:
        return []
    import pytest

    return [pytest.mark.xfail(reason=entry.reason, strict=True, raises=ExpectedAidgeFailure)]
