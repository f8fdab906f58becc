"""The individual checks of the inference contract (:mod:`interop.diagnostics.contract`).

:data:`CHECKS` names them in their reporting order; ``CheckRunner`` runs one of them on a
model and its input and turns the outcome into a :class:`CheckResult` (PASS / FAIL / SKIP,
with a reason and a hint). The driver
(:func:`~interop.diagnostics.contract.check_inference_contract`) picks the checks, restores
the model's state and assembles the report; this module only knows how to run each check,
including the Aidge-specific ones (``device_parity`` on another Aidge backend,
``eval_mode`` of the exported graph).
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Any

import torch
from onnx import numpy_helper

from .. import bridge
from .. import equivalence as compare  # the comparator (interop.equivalence re-exports it)
from ..bridge import runtime as aidge_runtime
from ..errors import ShapeSpecializedError
from .model_io import batch_size, call_model, clone_tensors, iter_tensors, map_tensors, slice_batch
from ..bridge.cuda import cuda_available

__all__ = ["CHECKS", "CheckResult", "parity_devices"]

CHECKS = (
    "eval_mode",
    "finite_outputs",
    "deterministic",
    "batch_invariance",
    "device_parity",
    "dtype_parity",
    "no_state_mutation",
)

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
#: samples of the batch checked one by one by ``batch_invariance``
MAX_BATCH_SAMPLES = 8


@dataclasses.dataclass(frozen=True)
class CheckResult:
    name: str
    status: str  # PASS / FAIL / SKIP
    reason: str = ""
    hint: str = ""

    @property
    def passed(self) -> bool:
        return self.status == PASS

    def __str__(self) -> str:
        if self.status == PASS:
            return f"[PASS] {self.name}"
        if self.status == SKIP:
            return f"[SKIP] {self.name}: {self.reason}"
        lines = [f"[FAIL] {self.name}"]
        lines += _indent("reason: ", self.reason)
        if self.hint:
            lines += _indent("hint: ", self.hint)
        return "\n".join(lines)


def _indent(label: str, text: str) -> list[str]:
    pad = " " * 7
    first, *rest = text.splitlines() or [""]
    return [f"{pad}{label}{first}"] + [f"{pad}  {line}" for line in rest]


def parity_devices(torch_device: str | torch.device = "auto") -> tuple[str, ...]:
    """The devices ``device_parity`` compares a model on ``torch_device`` with.

    ``"cpu"`` -> none (never touches a GPU); ``"auto"`` -> every available accelerator;
    an accelerator -> ``("cpu",)``. This is what the plugin's ``--torch-device`` means.
    """
    name = str(torch_device)
    if name == "cpu":
        return ()
    if name == "auto":
        found = []
        if torch.cuda.is_available():
            found.append("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            found.append("mps")
        return tuple(found)
    return ("cpu",)


def _is_aidge_module(model: Any) -> bool:
    return any(cls.__name__ == "AidgeModule" and cls.__module__.startswith("interop.")
               for cls in type(model).__mro__)


# --------------------------------------------------------------------------------------
# The checks
# --------------------------------------------------------------------------------------


class CheckRunner:
    """Runs the checks on one model and input; the first forward's outputs are the reference."""

    def __init__(self, model: torch.nn.Module, x: Any):
        if not callable(model):
            raise TypeError(f"check_inference_contract: model must be callable, got {type(model).__name__}")
        self.model = model
        self.x = x
        self._reference: Any = None

    def check(self, name: str, **options) -> CheckResult:
        """Run one check; the model raising inside it fails that check, not the others."""
        try:
            return getattr(self, f"check_{name}")(**options)
        except Exception as exc:
            return CheckResult(name, FAIL, f"the model raised {type(exc).__name__}: {exc}",
                               "the check calls the model as check_inference_contract's docstring says "
                               "(batch of one, copies on other devices/dtypes): make it accept those inputs")

    # -- helpers -------------------------------------------------------------------
    def run(self, model=None, x=None) -> Any:
        """One forward without autograd on a private copy of the inputs; outputs copied."""
        inputs = clone_tensors(self.x if x is None else x)
        with torch.no_grad():
            return clone_tensors(call_model(self.model if model is None else model, inputs))

    def reference(self) -> Any:
        if self._reference is None:
            self._reference = self.run()
        return self._reference

    @staticmethod
    def _mismatch_text(mismatches: list[compare.Mismatch], limit: int = 3) -> str:
        text = "\n".join(m.message for m in mismatches[:limit])
        if len(mismatches) > limit:
            text += f"\n... and {len(mismatches) - limit} more mismatching output(s)"
        return text

    # -- eval_mode -----------------------------------------------------------------
    def check_eval_mode(self, **_) -> CheckResult:
        modules = self.model.named_modules() if isinstance(self.model, torch.nn.Module) else []
        training = [name or "<root>" for name, m in modules if m.training]
        problems = []
        if training:
            shown = ", ".join(training[:5]) + (f" and {len(training) - 5} more" if len(training) > 5 else "")
            problems.append(f"{len(training)} module(s) in training mode: {shown}")
        exported = getattr(self.model, "_exported", None)
        if _is_aidge_module(self.model) and exported is not None and getattr(exported, "training", False):
            problems.append("the Aidge graph was exported in training mode (Dropout and BatchNorm keep "
                            "their training behaviour whatever the module's mode)")
        if problems:
            hint = ("call model.eval() before inference" if not _is_aidge_module(self.model)
                    else "wrap(model.eval(), ...) or wrap(..., training=False)")
            return CheckResult("eval_mode", FAIL, "; ".join(problems), hint)
        return CheckResult("eval_mode", PASS)

    # -- finite_outputs --------------------------------------------------------------
    def check_finite_outputs(self, **_) -> CheckResult:
        try:
            compare.assert_finite(self.reference())
        except AssertionError as exc:
            bad_inputs = [p for p, t in iter_tensors(self.x, "x")
                          if t.is_floating_point() and not bool(torch.isfinite(t).all())]
            hint = (f"the inputs already hold NaN/Inf ({', '.join(bad_inputs)})" if bad_inputs else
                    "look for overflow (exp, large activations), log/sqrt of non-positive values, "
                    "division by zero or uninitialised weights")
            return CheckResult("finite_outputs", FAIL, str(exc), hint)
        return CheckResult("finite_outputs", PASS)

    # -- deterministic ----------------------------------------------------------------
    def check_deterministic(self, **_) -> CheckResult:
        first = self.run()  # run() copies the outputs as soon as the model returns them
        second = self.run()
        mismatches = compare.compare_outputs(second, first, rtol=0.0, atol=0.0, equal_nan=True)
        if mismatches:
            return CheckResult(
                "deterministic", FAIL,
                "two calls on the same input give different outputs (bit-exact comparison):\n"
                + self._mismatch_text(mismatches),
                "look for randomness left on at inference (dropout, sampling), state updated by forward, "
                "a returned buffer reused across calls, or non-deterministic kernels "
                "(torch.use_deterministic_algorithms(True))")
        return CheckResult("deterministic", PASS)

    # -- batch_invariance ------------------------------------------------------------
    def check_batch_invariance(self, rtol=None, **_) -> CheckResult:
        n = batch_size(self.x)
        if n is None:
            return CheckResult("batch_invariance", SKIP, "the inputs share no batch dimension (dim 0)")
        if n < 2:
            return CheckResult("batch_invariance", SKIP, f"the batch holds {n} sample(s): give at least 2")
        full = self.reference()
        aligned = [p for p, t in iter_tensors(full) if t.dim() > 0 and t.shape[0] == n]
        if not aligned:
            return CheckResult("batch_invariance", SKIP,
                               f"no output has the batch size {n} as its dimension 0")
        problems = []
        for i in range(min(n, MAX_BATCH_SAMPLES)):
            try:
                single = self.run(x=slice_batch(self.x, i, i + 1, n))
            except ShapeSpecializedError as exc:
                return CheckResult("batch_invariance", SKIP,
                                   f"the AidgeModule refuses a batch of one before running it: {exc}")
            expected = slice_batch(full, i, i + 1, n)
            # within tolerance, not bit-exact: Aidge's batched and batch-of-one results differ in
            # the last bits (docs/aidge-notes.md#scheduler-forward-and-backward)
            mismatches = compare.compare_outputs(single, expected, rtol=rtol, equal_nan=True)
            if mismatches:
                problems.append(f"sample {i}: model(x[{i}:{i + 1}]) differs from model(x)[{i}:{i + 1}]:\n"
                                + self._mismatch_text(mismatches, 1))
        if problems:
            return CheckResult(
                "batch_invariance", FAIL,
                f"{len(problems)} of {min(n, MAX_BATCH_SAMPLES)} samples change with the rest of the batch\n"
                + problems[0],
                "an operation mixes samples: BatchNorm in training mode, normalisation or softmax over "
                "dim 0, a reduction without a batch dimension, or padding to the longest sequence")
        return CheckResult("batch_invariance", PASS)

    # -- device_parity ------------------------------------------------------------------
    def check_device_parity(self, device_rtol=None, devices=None, **_) -> CheckResult:
        if _is_aidge_module(self.model):
            return self._aidge_backend_parity(device_rtol, devices)
        if not isinstance(self.model, torch.nn.Module):
            return CheckResult("device_parity", SKIP, "not a torch.nn.Module: cannot move it to another device")
        home = _model_device(self.model, self.x)
        others = parity_devices("auto") if devices is None else tuple(str(d) for d in devices)
        if not others:
            why = ("no other device available" if devices is None else
                   "no device to compare with (devices=(); --torch-device=cpu never touches a GPU)")
            return CheckResult("device_parity", SKIP, why)
        problems, compared = [], []
        for dev in others:
            try:
                twin = copy.deepcopy(self.model).to(dev)
                moved = map_tensors(lambda t: t.to(dev), self.x)
            except Exception as exc:
                return CheckResult("device_parity", SKIP, f"cannot move the model to {dev!r}: {exc}")
            out = self.run(model=twin, x=moved)
            compared.append(dev)
            mismatches = compare.compare_outputs(out, self.reference(), rtol=device_rtol, equal_nan=True)
            if mismatches:
                problems.append(f"on {dev} (reference: {home}):\n" + self._mismatch_text(mismatches))
        if problems:
            return CheckResult("device_parity", FAIL, "\n".join(problems),
                               "compare the first diverging layer (interop.localize_divergence); TF32 "
                               "matmuls and fused kernels loosen GPU results: device_rtol=...")
        return CheckResult("device_parity", PASS)

    def _aidge_backend_parity(self, device_rtol, devices) -> CheckResult:
        backend = getattr(self.model, "backend", "cpu")
        if devices is None:
            targets = ("cuda" if backend == "cpu" else "cpu",)
        else:
            targets = tuple(str(d).split(":")[0] for d in devices)
        if not targets:
            return CheckResult("device_parity", SKIP, "no Aidge backend to compare with (devices=(); "
                                                      "--torch-device=cpu never touches a GPU)")
        problems = []
        for target in targets:
            if target == "cuda":
                ok, reason = cuda_available()
                if not ok:
                    return CheckResult("device_parity", SKIP, f"Aidge backend 'cuda' unavailable: {reason}")
            twin = _rewrap_on_backend(self.model, target, self.x)
            out = self.run(model=twin)
            mismatches = compare.compare_outputs(out, self.reference(), rtol=device_rtol, equal_nan=True)
            if mismatches:
                problems.append(f"Aidge backend {target} (reference: {backend}):\n" + self._mismatch_text(mismatches))
        if problems:
            return CheckResult("device_parity", FAIL, "\n".join(problems),
                               "Aidge's kernels differ between backends: compare each backend with torch "
                               "(interop.localize_divergence) to see which one is off")
        return CheckResult("device_parity", PASS)

    # -- dtype_parity ---------------------------------------------------------------------
    def check_dtype_parity(self, dtype_rtol=None, dtypes=(), **_) -> CheckResult:
        if not dtypes:
            return CheckResult("dtype_parity", SKIP, "no dtype asked (dtypes=(torch.float64, ...))")
        if _is_aidge_module(self.model):
            return CheckResult("dtype_parity", SKIP,
                               "an AidgeModule computes in the dtype its graph was compiled for (float32)")
        if not isinstance(self.model, torch.nn.Module):
            return CheckResult("dtype_parity", SKIP, "not a torch.nn.Module: cannot cast it")
        reference = self.reference()
        problems = []
        for dtype in dtypes:
            try:
                twin = copy.deepcopy(self.model).to(dtype)
            except Exception as exc:
                return CheckResult("dtype_parity", SKIP, f"cannot cast the model to {dtype}: {exc}")
            cast = map_tensors(lambda t: t.to(dtype) if t.is_floating_point() else t, self.x)
            try:
                out = self.run(model=twin, x=cast)
            except Exception as exc:  # e.g. no float16 kernel on this device
                problems.append(f"{dtype}: the model does not run ({type(exc).__name__}: {exc})")
                continue
            # rtol None: the comparator takes the looser default of the two dtypes
            mismatches = compare.compare_outputs(out, reference, rtol=dtype_rtol, equal_nan=True)
            if mismatches:
                problems.append(f"{dtype} vs the model's own dtype:\n" + self._mismatch_text(mismatches))
        if problems:
            return CheckResult("dtype_parity", FAIL, "\n".join(problems),
                               "the model is numerically fragile (cancellation, large activations); "
                               "check its normalisation, or loosen dtype_rtol if the error is expected")
        return CheckResult("dtype_parity", PASS)

    # -- no_state_mutation ---------------------------------------------------------------
    def check_no_state_mutation(self, **_) -> CheckResult:
        before = _state(self.model)
        inputs_before = clone_tensors(self.x)
        with torch.no_grad():  # the model's own call on the caller's inputs: in-place input edits show
            out = clone_tensors(call_model(self.model, self.x))
        after = _state(self.model)
        self._reference = self._reference if self._reference is not None else out
        problems = []
        added = sorted(set(after) - set(before))
        removed = sorted(set(before) - set(after))
        if added:
            problems.append(f"state added by forward: {', '.join(added)}")
        if removed:
            problems.append(f"state removed by forward: {', '.join(removed)}")
        changed = []
        for name in sorted(set(before) & set(after)):
            what = _difference(before[name], after[name])
            if what:
                changed.append(f"{name} ({what})")
        if changed:
            problems.append(f"{len(changed)} parameter(s)/buffer(s) changed by forward: " + "; ".join(changed[:8])
                            + (f" and {len(changed) - 8} more" if len(changed) > 8 else ""))
        touched = [m.path for m in compare.compare_outputs(self.x, inputs_before, rtol=0.0, atol=0.0,
                                                           equal_nan=True, name="x")]
        if touched:
            problems.append(f"the inputs were modified in place: {', '.join(touched)}")
        if touched:
            _restore_inputs(self.x, inputs_before)
        if problems:
            return CheckResult("no_state_mutation", FAIL, "\n".join(problems),
                               "a forward should be a pure function of its inputs: look for running "
                               "statistics updated in training mode, caches or counters kept in buffers, "
                               "in-place operations on parameters or inputs")
        return CheckResult("no_state_mutation", PASS)


def _rewrap_on_backend(am: Any, backend: str, x: Any) -> torch.nn.Module:
    """The AidgeModule's own ONNX graph, its initializers refreshed from the module's current
    parameters and buffers, imported again and compiled for ``backend``.

    An AidgeModule keeps no torch source, but it keeps the exported graph and mirrors every
    state tensor under its torch name: that is enough to build its twin on another backend.
    """
    aidge_runtime.load_backend(backend)
    exported = am._exported
    proto = copy.deepcopy(exported.proto)
    state = dict(am.named_parameters())
    state.update(am.named_buffers())
    for init in proto.graph.initializer:
        name = exported.initializer_to_state.get(init.name)
        if name in state:
            array = state[name].detach().cpu().numpy()
            init.CopyFrom(numpy_helper.from_array(array.astype(numpy_helper.to_array(init).dtype), init.name))
    twin_exported = dataclasses.replace(exported, proto=proto)
    inputs = [t.detach().cpu() for _, t in iter_tensors(x)]
    graph = bridge._import_graph(twin_exported)
    bridge._compile(graph, backend, [list(t.shape) for t in inputs], [t.dtype for t in inputs])
    twin = bridge.AidgeModule(am, twin_exported, graph, backend=backend, verbose=False, example_inputs=inputs)
    return twin.train(am.training)


def _model_device(model: torch.nn.Module, x: Any) -> str:
    for t in list(model.parameters()) + list(model.buffers()):
        return str(t.device)
    for _, t in iter_tensors(x):
        return str(t.device)
    return "cpu"


def _state(model: Any) -> dict[str, torch.Tensor]:
    """Every parameter and buffer (non-persistent ones too, shared ones under each name), copied."""
    if not isinstance(model, torch.nn.Module):
        return {}
    out: dict[str, torch.Tensor] = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        out.setdefault(f"{name} (parameter)", p.detach().clone())
    for name, b in model.named_buffers(remove_duplicate=False):
        if b is not None:
            out.setdefault(f"{name} (buffer)", b.detach().clone())
    return out


def _difference(a: torch.Tensor, b: torch.Tensor) -> str:
    if a.shape != b.shape:
        return f"shape {tuple(a.shape)} -> {tuple(b.shape)}"
    if a.dtype != b.dtype:
        return f"dtype {a.dtype} -> {b.dtype}"
    mismatch = compare.compare_tensors(b, a, rtol=0.0, atol=0.0, equal_nan=True)
    if mismatch is None:
        return ""
    return (f"{mismatch.n_mismatched} of {mismatch.n_total} elements, "
            f"max abs change {mismatch.max_abs:.3g}")


def _restore_inputs(x: Any, saved: Any) -> None:
    pairs = zip((t for _, t in iter_tensors(x)), (t for _, t in iter_tensors(saved)))
    with torch.no_grad():
        for t, s in pairs:
            t.copy_(s)
