"""The calls a pair of :mod:`interop.reporting.bench_harness` (asv's harness) is made of: Aidge's own
call prepared outside the timed one (:func:`raw_aidge_call`), a call made CUDA-synchronised, the
seeded inputs of a case and an architecture case's module and tensors; and :func:`warm_up`, what
every benchmark process needs imported before asv forks it.

Absolute imports, and none newer than the harness's own: ``benchmarks/harness.py`` loads the
harness by its path, with this file beside it, where the installed interop is another commit's
(asv benchmarking an earlier commit)."""
from __future__ import annotations

import functools
from typing import Any, Callable

import torch

import interop.bridge  # noqa: F401  (imported by asv's fork server: forks start warm)
from interop.cases.case import Case
from interop.equivalence import policy, timing
from interop.bridge import runtime as rt
from interop.cases.architectures import architecture_of
from interop.equivalence.verdict import as_module


def warm_up() -> None:
    """Import (and exercise once) what every benchmark process needs, here, in the process
    asv forks them from: each fork then skips ~1 s of imports (aidge_backend_cpu; sympy,
    which torch loads on the first TRAINING export and on the first backward with explicit
    gradients). Single-threaded work only (no OpenMP pool exists before the fork). A CUDA
    backend is not loaded (CUDA must not be initialised before a fork)."""
    from interop.bridge.onnx_export import export_to_onnx

    rt.aidge_core(), rt.aidge_onnx(), rt.load_backend("cpu")  # (no aidge_learning: no optimiser here)
    for training in (False, True):
        export_to_onnx(torch.nn.Linear(2, 2), [torch.zeros(1, 2)], training=training)
    x = torch.zeros(1, 2, requires_grad=True)
    torch.autograd.backward([x * 2], [torch.ones(1, 2)])  # loads torch's symbolic shapes


def _seeded_inputs(case_id: str, sizes, ranges) -> list[torch.Tensor]:
    inputs = policy.seeded_inputs(policy.seed_for(case_id), sizes)  # ModelTester's first epoch's
    if ranges:
        from interop.cases.suite import InputRange

        padded = list(ranges) + [None] * (len(inputs) - len(ranges))
        with torch.no_grad():  # the suites' own map onto the operator's input ranges
            inputs = list(InputRange(padded, lambda *xs: xs)(*inputs))
    return inputs


def _as_list(out) -> list[torch.Tensor]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _architecture_call(case: Case):
    """``(module, tensors)`` of an architecture case (:func:`interop.cases.architectures.architecture_of`:
    the zoo's architectures and the shared-tensor models): the model in the case's mode, called as
    its example call binds it, with its tensor arguments (token ids included) as the module's
    inputs (:func:`interop.equivalence.verdict.as_module`)."""
    arch = architecture_of(case)
    model = arch.build().train(bool(case.training))
    args, kwargs = arch.inputs()
    module, tensors = as_module(model, args, kwargs)
    return module, [x.detach() for x in tensors]


def raw_aidge_call(aidge_model, inputs, phase: str, grad_outputs=None) -> Callable[[], Any]:
    """Aidge's own call for ``phase``, prepared outside the timed call: the inputs are loaded
    into the graph's Aidge tensors and one forward has run (dims forwarded); for
    ``backward`` the output gradients are set too. Returns
    ``functools.partial(scheduler.forward, False, tensors)`` or ``scheduler.backward``."""
    if isinstance(aidge_model, interop.bridge.ExportCppModule):  # backend export_cpp: forward only
        return aidge_model.raw_forward(inputs)
    runner = aidge_model._runner
    tensors = runner.load_inputs(inputs)
    runner.invalidate()
    runner.run_forward(tensors)
    if phase == "forward":
        return functools.partial(runner.scheduler.forward, False, tensors)
    runner.set_output_grads(grad_outputs)
    return runner.scheduler.backward


def _synced(call: Callable[[], Any]) -> Callable[[], Any]:
    def run():
        result = call()
        timing.synchronize(True)
        return result

    return run
