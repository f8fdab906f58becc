"""The check of one Aidge benchmark-configuration case (kind ``aidge_config``), run in the
isolated child (:func:`run_benchmark_case`): the inputs the configuration describes, the
Aidge node built from its factory (:mod:`interop.bridge.single_node`), the torch
reference (:mod:`interop.cases.aidge_references`), compared with the dtype-aware
comparator (:func:`interop.oracle.compare.compare_tensors`, per-dtype tolerances).

A negative case (a label ``error``/``expected_error``) passes when Aidge rejects it (an
AidgeError at import, compile or forward); torch's behaviour on the same input is returned
beside it. Aidge running it to the end is :class:`AcceptsInvalidInputError` (category
``accepts_invalid_input``); a crash is an AidgeCrash (``crash``).

Inputs: data literals as given (``np.array(literal).astype(dtype)``, ``"nan"``/``"inf"``
strings included); random inputs drawn like Aidge's benchmark draws them (floats uniform
in [0, 1), signed integers in +-[1, 16], unsigned in [1, 16], bools 0/1) but from a seed
derived from the case id, so a failure replays.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..env import read as read_env
from ..errors import AidgeError, InteropError
from .case import Case, case_seed
from ..bridge import capture
from ..bridge.single_node import describe_outputs, run_single_node
from ..equivalence.isolation import run_isolated
from ..oracle.compare import compare_tensors
from ..stages import stage
from .aidge_operations import operation_entry

__all__ = ["AcceptsInvalidInputError", "generate_inputs", "check_benchmark_case", "run_benchmark_case"]


#: seconds a negative case may run (its inputs are small; Aidge running on past a bad
#: attribute can loop for minutes, e.g. TopK with K=-3 makes a 65533-wide output)
NEGATIVE_TIMEOUT_S = read_env("INTEROP_AIDGE_NEGATIVE_TIMEOUT")
#: seconds any other case may run (the largest default-run case takes about 1 s)
TIMEOUT_S = read_env("INTEROP_AIDGE_CASE_TIMEOUT")


class AcceptsInvalidInputError(InteropError, AssertionError):
    """Aidge ran a negative case of its own configurations (one it should reject) to the end."""

    phase = "forward"
    category = "accepts_invalid_input"


def generate_inputs(case: Case) -> list[tuple[str, np.ndarray | None]]:
    rng = np.random.default_rng(case_seed(case.id))
    out: list[tuple[str, np.ndarray | None]] = []
    for spec in case.params["specs"]:
        dtype = np.dtype(spec.dtype)
        if spec.omitted:
            array = None
        elif spec.data is not None:
            array = np.array(spec.data).astype(dtype)
        elif dtype.kind == "f":
            array = rng.random(spec.shape).astype(dtype)
        elif dtype.kind == "i":
            array = (rng.integers(1, 17, spec.shape) * rng.choice([-1, 1], spec.shape)).astype(dtype)
        elif dtype.kind == "u":
            array = rng.integers(1, 17, spec.shape).astype(dtype)
        else:
            array = rng.integers(0, 2, spec.shape).astype(dtype)
        out.append((spec.name, array))
    return out


def _torch_inputs(arrays):
    import torch

    def conv(a):
        if a is None:
            return None
        if a.dtype.kind == "u" and a.dtype != np.uint8:
            a = a.astype(np.int64)  # torch's uint16/32/64 support few operations
        return torch.from_numpy(np.ascontiguousarray(a))

    return [conv(a) for _, a in arrays]


def _torch_outputs(case: Case, arrays):
    from .aidge_references import reference

    return reference(case.params["operation"], _torch_inputs(arrays), case.params["attributes"])


def _compared(case: Case, arrays, actual: list, expected: tuple) -> tuple[list, tuple]:
    """The outputs both sides have (the table's ``compared_outputs``), TopK's ties reconciled."""
    from .aidge_references import reconcile_ties

    operation = case.params["operation"]
    count = operation_entry(operation).compared_outputs
    if count is not None:
        actual, expected = list(actual[:count]), tuple(expected[:count])
    return actual, reconcile_ties(operation, _torch_inputs(arrays), case.params["attributes"], actual, expected)


def _torch_behaviour(case: Case, arrays) -> str:
    if case.params.get("no_reference"):
        return f"no torch reference ({case.params['no_reference']})"
    try:
        outputs = _torch_outputs(case, arrays)
    except Exception as exc:  # noqa: BLE001 - what torch does is the record
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return f"torch raises {type(exc).__name__}: {text}"[:300]
    return "torch returns " + ", ".join(f"{tuple(o.shape)} {str(o.dtype).replace('torch.', '')}" for o in outputs)


def check_benchmark_case(case: Case) -> dict[str, Any]:
    """The check itself (in the child). Returns what the report records beside a pass."""
    from ..equivalence.tester import EquivalenceError

    with stage("sample"):
        arrays = generate_inputs(case)
    operation = case.params["operation"]
    dims_from_data = operation_entry(operation).dims_from_data

    first = next((a for _, a in arrays if a is not None), None)
    rank = first.ndim if first is not None else 4
    if case.params["negative"]:
        torch_says = _torch_behaviour(case, arrays)
        capture.note_factory(operation, case.params["attributes"], arrays, rank=rank, dims_from_data=dims_from_data,
                             negative=True)
        try:
            outputs = run_single_node(operation, case.params["attributes"], arrays, backend=case.backend,
                                      dims_from_data=dims_from_data)
        except AidgeError as exc:
            return {"aidge": str(exc).splitlines()[0][:300], "torch": torch_says}
        raise AcceptsInvalidInputError(
            f"Aidge accepts invalid input: {case.id} is a negative case of Aidge's own configurations "
            f"({'.'.join(case.params['labels'])}) but {operation} ran to the end (outputs {describe_outputs(outputs)}); "
            f"{torch_says}")
    with stage("torch"):
        expected = _torch_outputs(case, arrays)
    capture.note_factory(operation, case.params["attributes"], arrays, rank=rank, dims_from_data=dims_from_data,
                         negative=False, expected=expected)
    with stage("aidge node"):  # build, compile and run the one Aidge node
        actual = run_single_node(operation, case.params["attributes"], arrays, backend=case.backend,
                                 dims_from_data=dims_from_data)
    actual, expected = _compared(case, arrays, actual, expected)
    capture.note_factory(operation, case.params["attributes"], arrays, rank=rank, dims_from_data=dims_from_data,
                         negative=False, expected=expected)  # the outputs both sides have, TopK's ties reconciled
    seed = case_seed(case.id)
    head = f"[{case.id}] output differs between model1 (torch {operation}) and model2 (Aidge {operation}) [seed {seed}]"
    if len(actual) != len(expected):
        raise EquivalenceError(f"{head}\nStructure mismatch: Aidge gives {len(actual)} output(s), torch "
                               f"{len(expected)}", test=case.id, epoch=None, what="output", seed=seed)
    for i, (a, e) in enumerate(zip(actual, expected)):
        mismatch = compare_tensors(a, e, path=f"output[{i}]" if len(expected) > 1 else "output")
        if mismatch is not None:
            raise EquivalenceError(f"{head}\n{mismatch.message}", test=case.id, epoch=None, what=mismatch.path or
                                   "output", seed=seed)
    return {"outputs": describe_outputs(actual)}


def run_benchmark_case(case: Case, *, isolate: bool | None = None, timeout: float | None = None) -> dict[str, Any]:
    """:func:`check_benchmark_case` in a forked child (a crash or a hang becomes an
    AidgeCrash of that case). Under pytest the interop plugin applies the case's expected failure."""
    from .suite import ISOLATE

    isolate = ISOLATE if isolate is None else isolate
    if timeout is None:
        timeout = NEGATIVE_TIMEOUT_S if case.params["negative"] else TIMEOUT_S
    if isolate:
        return run_isolated(check_benchmark_case, case, timeout=timeout)
    return check_benchmark_case(case)
