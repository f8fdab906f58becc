"""The inference contract: does a model behave like a model should at inference time?

:func:`check_inference_contract` runs a fixed list of checks on a torch module or an
:class:`~interop.bridge.AidgeModule` and returns a :class:`ContractReport`::

    Inference contract: 4 passed, 1 failed, 2 skipped
    [PASS] eval_mode
    [FAIL] deterministic
           reason: two calls on the same input differ ...
           hint: ...
    [SKIP] device_parity: no other device to compare with

The checks (:data:`CHECKS`):

``eval_mode``          every submodule is in eval mode (an AidgeModule's graph was exported in
                       eval mode too);
``finite_outputs``     no NaN/Inf in the outputs;
``deterministic``      two calls on the same input give bit-identical outputs (the first output
                       is copied as soon as it is returned, so a model that overwrites a
                       returned buffer fails);
``batch_invariance``   ``model(x)[i] == model(x[i:i+1])[0]`` within ``rtol``;
``device_parity``      the same outputs on the other devices (``devices``); for an AidgeModule,
                       on the other Aidge backend (cpu <-> cuda, or the backends in ``devices``):
                       its own ONNX graph with its current weights, imported again;
``dtype_parity``       the same outputs with the model and inputs cast to each of ``dtypes``;
``no_state_mutation``  a forward changes no parameter or buffer (non-persistent ones
                       included; NaN == NaN), adds or removes none, and leaves the inputs alone.

Every verdict goes through :mod:`interop.equivalence` (the comparator). The model's parameters, buffers and
train/eval mode are restored when the checks are done; nothing is printed.

This module is the driver and the report (which checks run, in which order, and what the
caller gets back); the checks themselves are in :mod:`interop.diagnostics.contract_checks`.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Sequence

import torch

from ..bridge.onnx_export_state import preserved_state
from ..oracle.tolerance import DEVICE_PARITY_RTOL
from .contract_checks import CHECKS, FAIL, PASS, SKIP, CheckResult, CheckRunner
from .model_io import describe_inputs

__all__ = [
    "ContractReport",
    "ContractViolation",
    "check_inference_contract",
]


@dataclasses.dataclass
class ContractReport:
    """The outcome of :func:`check_inference_contract`, one :class:`CheckResult` per check."""

    model: str
    inputs: str
    results: list[CheckResult]

    def _count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)

    @property
    def passed(self) -> list[str]:
        return [r.name for r in self.results if r.status == PASS]

    @property
    def failed(self) -> list[str]:
        return [r.name for r in self.results if r.status == FAIL]

    @property
    def skipped(self) -> list[str]:
        return [r.name for r in self.results if r.status == SKIP]

    @property
    def ok(self) -> bool:
        return not self.failed

    def __getitem__(self, name: str) -> CheckResult:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(f"no check {name!r} in this report (ran: {[r.name for r in self.results]})")

    @property
    def summary(self) -> str:
        return (f"Inference contract: {self._count(PASS)} passed, {self._count(FAIL)} failed, "
                f"{self._count(SKIP)} skipped")

    def __str__(self) -> str:
        return "\n".join([self.summary, *(str(r) for r in self.results)])

    def __repr__(self) -> str:
        return f"<ContractReport {self.model}: {self.summary}; failed: {self.failed}>"

    def raise_if_failed(self) -> None:
        if self.failed:
            raise ContractViolation(self)


class ContractViolation(AssertionError):
    """At least one check of the inference contract failed; ``.report`` holds them all."""

    def __init__(self, report: ContractReport):
        self.report = report
        super().__init__(f"{report.model} ({report.inputs}) breaks its inference contract\n{report}")


# --------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------


def check_inference_contract(
    model: torch.nn.Module,
    x: Any,
    raise_on_failure: bool = True,
    checks: Iterable[str] | None = None,
    skip: Iterable[str] | None = None,
    rtol: float | None = None,
    device_rtol: float | None = DEVICE_PARITY_RTOL,
    dtype_rtol: float | None = None,
    dtypes: Sequence[torch.dtype] = (),
    *,
    devices: Sequence[str | torch.device] | None = None,
) -> ContractReport:
    """Run the inference-contract checks on ``model`` with input ``x``.

    ``x``: a tensor, a tuple of tensors (``model(*x)``) or a dict (``model(**x)``); dimension 0
    is the batch. ``checks`` selects checks (default: all of :data:`CHECKS`), ``skip``
    removes some; selecting none is a ``ValueError`` raised before the model runs.

    Tolerances (``None`` = the comparator's defaults for the dtypes involved):
    ``rtol`` for ``batch_invariance``, ``device_rtol`` for ``device_parity``, ``dtype_rtol``
    for ``dtype_parity`` (default: the looser default of the two dtypes). ``deterministic``
    is bit-exact (NaN == NaN). ``dtypes``: the dtypes ``dtype_parity`` casts to (none: skipped).
    ``devices``: the devices ``device_parity`` compares with; ``None`` = every other available
    device (see :func:`~interop.diagnostics.contract_checks.parity_devices`), ``()`` = none
    (the check is skipped, no GPU touched).

    Returns the :class:`ContractReport`; with ``raise_on_failure`` (default) a failed check
    raises :class:`ContractViolation` (an ``AssertionError``) carrying it.
    """
    selected = _select(checks, skip)
    runner = CheckRunner(model, x)
    with preserved_state(model):
        results = [runner.check(name, rtol=rtol, device_rtol=device_rtol, dtype_rtol=dtype_rtol,
                                dtypes=tuple(dtypes), devices=devices)
                   for name in _run_order(selected)]
    by_name = {r.name: r for r in results}
    report = ContractReport(_model_name(model), describe_inputs(x), [by_name[n] for n in selected])
    if raise_on_failure:
        report.raise_if_failed()
    return report


def _select(checks: Iterable[str] | None, skip: Iterable[str] | None) -> list[str]:
    chosen = list(CHECKS) if checks is None else _names(checks, "checks")
    dropped = set(_names(skip, "skip")) if skip is not None else set()
    selected = [c for c in CHECKS if c in chosen and c not in dropped]
    if not selected:
        raise ValueError(f"check_inference_contract: no check selected (checks={checks!r}, skip={skip!r}); "
                         f"choose among {list(CHECKS)}")
    return selected


def _names(value: Iterable[str], arg: str) -> list[str]:
    names = [value] if isinstance(value, str) else list(value)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise ValueError(f"check_inference_contract: unknown check(s) in {arg}={names!r}: {unknown}; "
                         f"known: {list(CHECKS)}")
    return names


def _run_order(selected: list[str]) -> list[str]:
    # no_state_mutation first: its snapshot must precede every forward (lazy state created by
    # the first call would otherwise go unseen).
    return sorted(selected, key=lambda n: (n != "no_state_mutation", CHECKS.index(n)))


def _model_name(model: Any) -> str:
    return type(model).__name__


