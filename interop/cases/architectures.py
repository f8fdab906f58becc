"""Architectures from public libraries as cases (:data:`interop.zoo.architectures.ARCHITECTURES`:
MONAI and Hugging Face ``transformers`` networks at tiny configurations, random weights).

Cases: one per (architecture, mode), ``kind="architecture"``, ``source="architecture"``, ids
``arch_<name>_<eval|train>`` (``-k arch_monai_UNet``); the operator is the architecture's name,
the label its mode. The check of a case (:func:`run_architecture_case`, in a forked child):
:func:`interop.equivalence.verdict.check_callable` on the model in that mode with its
example call, so every mismatch is attributed (onnxruntime on the very ONNX, torch in float64):

- forward on two calls (the example inputs, then the same shapes with the float values
  permuted);
- backward: a seeded output gradient, then the input gradients of the float inputs and the
  gradient of every parameter the Aidge graph holds, compared with torch's.

The route to ONNX is the session's (``--exporter``, default ``auto``); the records say which
route each case took. Expected failures: rows of source ``architecture`` in the one table.
"""
from __future__ import annotations

import importlib

from .case import Case
from ..backends import FORWARD_ONLY_BACKENDS
from ..stages import stage
from ..zoo.architectures import ARCHITECTURES, architecture
from .case import on_backend
from .shared_tensors import SHARED_TENSORS, shared_tensor_model

__all__ = ["architecture_cases", "architecture_of", "run_architecture_case", "MODES", "prepare_libraries"]

#: the modes each architecture runs in
MODES = ("eval", "train")


def architecture_cases(backend: str = "cpu", names: list[str] | None = None) -> list[Case]:
    """The cases of ``names`` (default: every architecture), each mode (the table's row is
    attached by the pytest plugin at collection; on a forward-only backend only the eval cases, forward only)."""
    out = []
    for arch in [*ARCHITECTURES, *SHARED_TENSORS]:  # the shared-tensor models: interop.cases.shared_tensors
        if names is not None and arch.name not in names:
            continue
        for mode in MODES:
            if mode == "train" and backend in FORWARD_ONLY_BACKENDS:
                continue
            out.append(on_backend(Case(
                id=f"arch_{arch.name}_{mode}",
                op_class=f"{'interop.cases.shared_tensors' if arch.library == 'torch' else 'interop.zoo.architectures'}"
                         f":{arch.name}",
                operator=arch.name, path=mode, source="architecture", kind="architecture", backend=backend,
                test_backward=backend not in FORWARD_ONLY_BACKENDS, training=mode == "train",
                params={"architecture": arch.name, "library": arch.library, "family": arch.family}), backend))
    return out


def prepare_libraries(case: Case) -> None:
    """Import the case's library in this (parent) process, so that forked children start warm
    (MONAI's import alone takes about 3 s)."""
    importlib.import_module(case.params["library"])


def architecture_of(case: Case):
    """The model an architecture case builds (``build()``, ``inputs()``): a shared-tensor model
    of :mod:`.shared_tensors` (``library`` torch) or one of :mod:`interop.zoo.architectures`.
    The one place that decides it (the suite and asv's harness both ask here)."""
    name = case.params["architecture"]
    if case.params.get("library") == "torch":
        return shared_tensor_model(name)

    return architecture(name)


def run_architecture_case(case: Case) -> dict:
    """The check of one architecture case, in this process."""
    from ..equivalence.callable_check import check_callable

    arch = architecture_of(case)
    with stage("sample"):
        model = arch.build().train(bool(case.training))
        args, kwargs = arch.inputs()
    return check_callable(model, args, kwargs, backward=case.test_backward, backend=case.backend,
                          tolerance=case.tolerance, name=case.id, parameter_grads=True)
