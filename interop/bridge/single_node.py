"""One Aidge operator node built straight from its ``aidge_core`` factory, as Aidge's own
benchmark does for its ``format: Aidge`` configurations
(``aidge_benchmark/registrations/extensions_format/aidge_model_generation.py``): no torch,
no ONNX. What :mod:`interop.cases.aidge_suite` runs against a torch reference.

Three phases, each re-raising Aidge's failure as an :class:`~interop.errors.AidgeError` of
that phase (the crash detector names them too, ``interop.equivalence.isolation``):

- ``import`` (:func:`build_node`): ``aidge_core.<Operation>(**attributes)``, a Node in a
  GraphView; each input array goes to its operator input in order, a ``Param`` or
  ``OptionalParam`` input as a Producer, a data input by ``associate_input``; ``None``
  leaves the input unconnected (an optional input);
- ``compile`` (:func:`compile_node`): data format by the first input's rank (as Aidge's
  benchmark, except that a rank outside 2..5 keeps the default: aidge_benchmark sets NCHW,
  which Aidge refuses on a rank-1 tensor), backend, ``forward_dims(allow_data_dependency=True)``, ``forward_dtype``;
- ``forward`` (:func:`run_node`): a SequentialScheduler's forward; the outputs as numpy arrays.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import AidgeError, aidge_error_from
from . import runtime as rt
from .events import crash_phase

__all__ = ["build_node", "compile_node", "run_node", "run_single_node"]

_FORMATS = {2: "nc", 3: "ncw", 4: "nchw", 5: "ncdhw"}


def _fail(exc: BaseException, phase: str, operation: str) -> AidgeError:
    if isinstance(exc, TypeError) and phase == "import":
        # pybind's "incompatible function arguments" lists every overload: keep the first lines
        text = "\n".join(str(exc).strip().splitlines()[:3])
        return AidgeError(phase, f"TypeError: {text}", operator=operation)
    return aidge_error_from(exc, phase, operator=operation)


@crash_phase("import")  # an Aidge operator built from its factory
def build_node(operation: str, attributes: dict, arrays: Sequence[tuple[str, np.ndarray | None]]):
    """``(graph, operator)``: the node of ``operation`` with its inputs attached (phase import)."""
    core = rt.aidge_core()
    factory = getattr(core, operation, None)
    if factory is None:
        raise AidgeError("import", f"aidge_core has no operator factory {operation!r}", operator=operation)
    try:
        with rt.quiet_aidge():
            op = factory(**attributes)
            node = core.Node(op)
            graph = core.GraphView()
            graph.add(node)
            for idx, (target, target_idx) in enumerate(graph.get_ordered_inputs()):
                if idx >= len(arrays) or arrays[idx][1] is None:
                    continue
                name, array = arrays[idx]
                tensor = core.Tensor(np.ascontiguousarray(array))
                operator = target.get_operator()
                if operator.input_category(target_idx) in (core.InputCategory.OptionalParam,
                                                           core.InputCategory.Param):
                    producer = core.Producer(tensor, name=name)
                    producer.add_child(target, 0, target_idx)
                    graph.add(producer)
                else:
                    operator.associate_input(target_idx, tensor)
                    target.input_name(target_idx, f"{operator.type()}_{target.id()}_{name}")
    except AidgeError:
        raise
    except Exception as exc:  # pybind raises RuntimeError/TypeError/ValueError/IndexError
        raise _fail(exc, "import", operation) from None
    return graph, op


@crash_phase("compile")
def compile_node(graph, operation: str, rank: int, backend: str = "cpu", dims_from_data: bool = False) -> None:
    """Data format, backend, dims and dtypes (phase compile). ``forward_dims`` returning
    False (it logs why, it does not raise) is a compile error, as in the bridge's
    ``check_dims_forwarded``: run anyway, Aidge writes into undefined outputs (measured here
    on zero-sized inputs: SIGSEGV, SIGABRT in malloc, or an empty output). Except for an
    operation whose output dims depend on its input values (``dims_from_data``: NonZero,
    HannWindow), which the forward resolves, as aidge_benchmark relies on."""
    core = rt.aidge_core()
    rt.load_backend(backend)
    try:
        with rt.quiet_aidge():
            if rank in _FORMATS:  # aidge_benchmark sets NCHW on any other rank, which Aidge refuses for rank 1
                graph.set_dataformat(getattr(core.dformat, _FORMATS[rank]))
            graph.set_backend(backend)
            ok = graph.forward_dims(allow_data_dependency=True)
            graph.forward_dtype()
    except Exception as exc:
        raise _fail(exc, "compile", operation) from None
    if ok is False and not dims_from_data:
        raise AidgeError("compile", "forward_dims() returned False: Aidge cannot compute the output dims",
                         operator=operation)


@crash_phase("forward")
def run_node(graph, op, operation: str) -> list[np.ndarray]:
    """The scheduler's forward and the node's outputs (phase forward)."""
    core = rt.aidge_core()
    try:
        with rt.quiet_aidge():
            scheduler = core.SequentialScheduler(graph)
            scheduler.forward()
            return [np.array(op.get_output(i), copy=True) for i in range(op.nb_outputs())]
    except Exception as exc:
        raise _fail(exc, "forward", operation) from None


def run_single_node(operation: str, attributes: dict, arrays: Sequence[tuple[str, np.ndarray | None]],
                    backend: str = "cpu", dims_from_data: bool = False) -> list[np.ndarray]:
    """Build, compile and run ``operation`` on ``arrays``; Aidge's failures as AidgeError."""
    graph, op = build_node(operation, attributes, arrays)
    first = next((a for _, a in arrays if a is not None), None)
    compile_node(graph, operation, first.ndim if first is not None else 4, backend, dims_from_data)
    return run_node(graph, op, operation)


def describe_outputs(outputs: Sequence[Any]) -> str:
    return ", ".join(f"{tuple(o.shape)} {o.dtype}" for o in outputs)
