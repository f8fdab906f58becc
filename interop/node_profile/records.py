"""The per-node profile's settings and the pieces every measurement of it shares: the readers of
the two profilers' records (Aidge's Mermaid scheduling diagram, onnxruntime's profile events), a
graph whose every node has a name of its own, the data inputs and their feeds, one OpenMP thread,
onnxruntime's session options (one thread, optimised or not, profiled or not) and the spread
(median, quartiles) of a node's times over the rounds. What each figure is:
:mod:`interop.node_profile`'s docstring."""
from __future__ import annotations

import contextlib
import ctypes
import os
import re
import statistics
from typing import Sequence

import numpy as np

from ..threads_policy import loaded_openmp_runtimes

#: interleaved rounds per model (each: one Aidge call, one profiled and one optimised onnxruntime call)
DEFAULT_ROUNDS = 21
#: calls of each side before the rounds (allocations, first-call dims, onnxruntime's arenas)
DEFAULT_WARMUP = 3
#: seconds of rounds per model at most (at least MIN_ROUNDS are run whatever it costs)
DEFAULT_MAX_S = 30.0
MIN_ROUNDS = 5
#: hot nodes kept per model
DEFAULT_TOP = 10

#: one line of Aidge's Mermaid scheduling diagram: ``name (Type#k) :start, end``
_MERMAID = re.compile(r"^(?P<name>.*) \((?P<type>[^()#]*)#(?P<k>\d+)\) :(?P<start>-?\d+), (?P<end>-?\d+)\s*$")
_KERNEL = "_kernel_time"


# ---------------------------------------------------------------------------------------------
def parse_scheduling_diagram(text: str) -> list[tuple[str, str, float]]:
    """``(node name, Aidge type, seconds)`` of each line of a ``save_scheduling_diagram`` file,
    in the order run."""
    out = []
    for line in text.splitlines():
        m = _MERMAID.match(line.strip())
        if m:
            out.append((m.group("name"), m.group("type"), (int(m.group("end")) - int(m.group("start"))) * 1e-6))
    return out


def parse_ort_profile(events: list[dict]) -> list[dict[str, dict]]:
    """One dict per ``run`` of an onnxruntime profile (its JSON events, in order): node name ->
    ``{"s": seconds, "op": op_type, "shapes": input shapes}``. A run's node events come before its
    ``model_run`` session event."""
    runs: list[dict[str, dict]] = []
    current: dict[str, dict] = {}
    for event in events:
        name = str(event.get("name", ""))
        if event.get("cat") == "Node" and name.endswith(_KERNEL):
            args = event.get("args") or {}
            shapes = [list(next(iter(d.values()))) if isinstance(d, dict) and d else None
                      for d in args.get("input_type_shape") or []]
            node = name[: -len(_KERNEL)]
            seen = current.get(node)
            seconds = float(event.get("dur", 0)) * 1e-6
            if seen is None:
                current[node] = {"s": seconds, "op": args.get("op_name"), "shapes": shapes}
            else:  # a node run twice in one call (a subgraph): its times add up
                seen["s"] += seconds
        elif event.get("cat") == "Session" and name == "model_run":
            runs.append(current)
            current = {}
    return runs


# ---------------------------------------------------------------------------------------------
def _named(proto):
    """A copy of ``proto`` whose every node has a name of its own (onnxruntime names the events
    after it; an unnamed or repeated name gets ``node_<index>_<op_type>``)."""
    import onnx

    model = onnx.ModelProto()
    model.CopyFrom(proto)
    seen: set[str] = set()
    for k, node in enumerate(model.graph.node):
        if not node.name or node.name in seen:
            node.name = f"node_{k}_{node.op_type}"
        seen.add(node.name)
    return model


def _data_inputs(proto) -> list[str]:
    inits = {i.name for i in proto.graph.initializer}
    return [i.name for i in proto.graph.input if i.name not in inits]


def _feeds(proto, inputs) -> dict[str, np.ndarray]:
    names = _data_inputs(proto)
    if isinstance(inputs, dict):
        return {k: np.ascontiguousarray(np.asarray(v)) for k, v in inputs.items()}
    inputs = [np.ascontiguousarray(np.asarray(x)) for x in inputs]
    if len(inputs) != len(names):
        raise ValueError(f"{len(inputs)} input(s) given, the graph has {len(names)} data input(s): {names}")
    return dict(zip(names, inputs))


@contextlib.contextmanager
def _one_openmp_thread():
    """Every loaded GNU OpenMP runtime's team size at one for this thread; restored on exit.
    Yields the basenames of the runtimes set."""
    done = []
    for path in loaded_openmp_runtimes():
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
            before = int(lib.omp_get_max_threads())
            lib.omp_set_num_threads(1)
            done.append((lib, before, os.path.basename(path)))
        except (OSError, AttributeError):
            continue
    try:
        yield [name for *_, name in done]
    finally:
        for lib, before, _ in done:
            lib.omp_set_num_threads(before)


def _ort_options(ort, *, profile_prefix: str | None, optimize: bool):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    if profile_prefix:
        options.enable_profiling = True
        options.profile_file_prefix = profile_prefix
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return options


def _spread(values: Sequence[float]) -> dict[str, float]:
    """median, quartiles, min, max of ``values`` (n of them)."""
    v = sorted(values)
    if not v:
        return {"n": 0}
    if len(v) >= 2:
        q1, _, q3 = statistics.quantiles(v, n=4, method="inclusive")
    else:
        q1 = q3 = v[0]
    return {"median": statistics.median(v), "q1": q1, "q3": q3, "min": v[0], "max": v[-1], "n": len(v)}
