"""Where Aidge spends a model's time, node by node, against onnxruntime on the same ONNX graph.

:func:`profile_onnx` takes an ONNX model and its inputs, :func:`profile_torch` a torch model and
its example inputs (exported through the bridge, :func:`interop.bridge.onnx_export.export_to_onnx`,
in eval mode). Each returns the profile as plain data (JSON-ready):

- **Aidge's times** come from Aidge's own scheduling records. ``SequentialScheduler.
  get_forward_scheduling()`` returns the ``SchedulingElement`` s (``node``, ``start``, ``end``), but
  in aidge_core 0.10.1 ``start`` and ``end`` are ``std::chrono::time_point`` s that pybind11 cannot
  convert (``TypeError: Unable to convert function return value to a Python type``): the records are
  read from ``save_scheduling_diagram`` 's Mermaid file instead (written into a temporary folder,
  one per call), whose times are whole microseconds of the system clock since the call began. The
  records hold the last forward's nodes only; the Producers (constant inputs) are left out. As a
  cross-check on a loaded machine, each round also runs every scheduled node's operator
  ``forward()`` again, alone, in the scheduler's order, on the thread's CPU time (``aidge_cpu_s``):
  a node longer than a time slice (SegResNet's 20-40 ms Resize) is preempted in most rounds, and
  its wall-clock median then counts the waits (66 ms of records for 25 ms of CPU at load 6 on 2
  cores). The pass has a floor of its own, 20-80 us a node (BERT's 239 nodes: 7.4 ms alone for a
  2.0 ms call, 2026-12-03: ``Operator.forward()`` called from Python costs 20-40 us in steady
  state), so it only says something about nodes of a millisecond or more.
- **onnxruntime's times** are its profiler's ``Node`` events (``SessionOptions.enable_profiling``,
  ``<node name>_kernel_time``, microseconds) on a session with **no graph optimisation**
  (``ORT_DISABLE_ALL``): each ONNX node is then a kernel of its own, under its own name, and can be
  set beside the Aidge node(s) imported from it. A second session with the default optimisations
  (what a user of onnxruntime gets: fused Conv+Relu, NCHWc layouts) is timed too, unprofiled, for
  its total only.
- **Matching**: aidge_onnx renames every node (``/conv1/Conv`` becomes ``conv1_Conv``);
  :func:`interop.diagnostics.reproducer._aidge_names` maps an Aidge name back to its ONNX node's
  index. An Aidge node whose name is not there is matched to the ONNX node whose Aidge name is
  the longest prefix of it (a node aidge_onnx splits); one matched to none is listed in
  ``unmatched_aidge`` and still counts in Aidge's total. An ONNX node Aidge does not run (Flatten,
  which the bridge removes; Identity; Constant) has an onnxruntime time and no Aidge time.
- **Threads**: one. Aidge's OpenMP teams are set to one thread (``omp_set_num_threads(1)`` on every
  loaded GNU OpenMP runtime: in a process that imported torch first, Aidge's kernels run on torch's,
  docs/openmp-threads.md), onnxruntime has ``intra_op_num_threads = inter_op_num_threads = 1``; both
  then compute in the calling thread.
- **Rounds**: after ``warmup`` calls of each, every round calls Aidge, onnxruntime unoptimised
  and unprofiled, onnxruntime optimised, and the profiled session once each, the order reversed
  every other round (a drift of the machine's load then falls on both sides alike). Each timed
  call follows an untimed call of the same session (the one timed right after Aidge's call paid
  for the switch: Perceptron's unoptimised onnxruntime took 170-260 us of thread CPU time after
  Aidge, 15-25 us after onnxruntime, 2026-12-03), and each side's records are the timed call's. A call's
  **total** is the calling thread's CPU time (``time.thread_time``), which a loaded machine does
  not inflate by the time the thread waits for a core; onnxruntime's totals are taken on the
  unprofiled sessions (its profiler adds 1-3 us a node: BERT's 239 nodes sum to 0.83 ms profiled,
  its unprofiled call takes 0.26 ms), Aidge's with its scheduling records, which it always keeps.
  The **per-node** times of both profilers are wall-clock intervals (neither records CPU time), so
  they are taken as the **median over the rounds**, which drops the rounds where a node was
  preempted; the spread (first and third quartiles over the rounds) is kept beside each.
- **Shares**: a node's share is its median over the sum of the medians of its side's nodes (the
  shares of one side sum to 1); an operator type's share is the sum of its nodes' shares, grouped
  by the ONNX ``op_type`` (the same key on both sides).

Nothing is printed and nothing written but the temporary files, removed on return. The CLI,
``python -m interop.diagnostics.node_profile --out DIR``, profiles the zoo's models (and the
architectures named with ``--architectures``), prints the tables and writes ``node_profile.json``
and ``node_profile.md`` into DIR (docs/node-profile.md).
"""
from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

__all__ = ["profile_onnx", "profile_torch", "export_torch", "slow_nodes", "write_timing_reproducer",
           "time_node_alone", "torch_equivalent", "torch_forward", "slow_signature", "slow_id", "PROFILE_DIR", "SLOW_REPRODUCERS", "profile_backward",
           "backward_lines",
           "parse_scheduling_diagram", "parse_ort_profile", "markdown", "slow_lines",
           "table_lines", "DEFAULT_ROUNDS", "DEFAULT_WARMUP", "DEFAULT_MAX_S", "DEFAULT_TOP"]

#: where a findings run keeps its profile (``--run-dir``), and the slow nodes' timing reproducers,
#: beside the correctness reproducers (``reproducers/<test>/``)
PROFILE_DIR = "node-profile"
SLOW_REPRODUCERS = "reproducers/slow"
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
    from ..threads_policy import loaded_openmp_runtimes

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


def _match(aidge_name: str, names: dict[str, int]) -> int | None:
    if aidge_name in names:
        return names[aidge_name]
    best = None
    for known, index in names.items():
        if aidge_name.startswith(known) and (best is None or len(known) > len(best[0])):
            best = (known, index)
    return None if best is None else best[1]


def profile_onnx(proto, inputs, *, name: str = "", rounds: int = DEFAULT_ROUNDS, warmup: int = DEFAULT_WARMUP,
                 max_s: float = DEFAULT_MAX_S, top: int = DEFAULT_TOP, torch_call=None) -> dict[str, Any]:
    """The per-node profile of ``proto`` (an ``onnx.ModelProto``) on ``inputs`` (the data inputs'
    arrays in graph order, or a dict name -> array), Aidge against onnxruntime, one thread each,
    in ``rounds`` interleaved rounds (fewer when ``max_s`` seconds of rounds are spent, at least
    :data:`MIN_ROUNDS`). ``torch_call``: the torch model's own forward on the same inputs, timed in
    the same rounds (one thread, thread CPU time; totals ``torch_s`` and ``ratio_torch``: Aidge/torch
    beside Aidge/onnxruntime). See the module's docstring for what each figure is. Raises
    :class:`interop.diagnostics.reproducer.AidgeRefused` when Aidge cannot import or compile it."""
    import onnxruntime as ort

    from ..bridge.runtime import quiet_aidge
    from .repro_aidge import _aidge_names, load_in_aidge
    from .repro_reduce import _ort_feeds

    proto = _named(proto)
    feeds = _feeds(proto, inputs)
    data_names = _data_inputs(proto)
    names = _aidge_names(proto)  # on a renamed copy: proto keeps its ONNX names
    onnx_bytes = proto.SerializeToString()
    folder = Path(tempfile.mkdtemp(prefix="interop-node-profile-"))
    load = [round(os.getloadavg()[0], 2)]
    try:
        import onnx

        for_aidge = onnx.ModelProto()
        for_aidge.CopyFrom(proto)  # aidge_onnx renames the model it imports in place
        with quiet_aidge():
            graph, scheduler, tensors = load_in_aidge(for_aidge, [feeds[n] for n in data_names if n in feeds])
            profiled = ort.InferenceSession(onnx_bytes, _ort_options(ort, profile_prefix=str(folder / "ort"),
                                                                     optimize=False),
                                            providers=["CPUExecutionProvider"])
            plain = ort.InferenceSession(onnx_bytes, _ort_options(ort, profile_prefix=None, optimize=False),
                                         providers=["CPUExecutionProvider"])
            optimised = ort.InferenceSession(onnx_bytes, _ort_options(ort, profile_prefix=None, optimize=True),
                                             providers=["CPUExecutionProvider"])
            ort_feeds = _ort_feeds(profiled, feeds)
            opt_feeds = _ort_feeds(optimised, feeds)
            diagram = str(folder / "aidge")

            with _one_openmp_thread() as runtimes:
                dims_stale = [True]

                by_name = {n.name(): n.get_operator() for n in graph.get_nodes()}
                node_pass = [True]

                def aidge_call() -> tuple[float, list, list]:
                    scheduler.forward(dims_stale[0], tensors)  # untimed: absorbs the switch from the other side
                    dims_stale[0] = False
                    t0 = time.thread_time()
                    scheduler.forward(False, tensors)
                    t1 = time.thread_time()
                    scheduler.save_scheduling_diagram(diagram, True)
                    records = parse_scheduling_diagram(Path(diagram + "_forward.mmd").read_text())
                    cpu = []
                    if node_pass[0]:  # each node again, alone, in the scheduler's order, on thread CPU time
                        try:
                            for aname, atype, _ in records:
                                operator = by_name[aname]
                                c0 = time.thread_time()
                                operator.forward()
                                cpu.append((aname, atype, time.thread_time() - c0))
                        except Exception:  # noqa: BLE001 - a node that cannot run alone: no CPU pass
                            node_pass[0] = False
                            cpu = []
                    return t1 - t0, records, cpu

                def ort_call() -> float:
                    plain.run(None, ort_feeds)  # untimed, as Aidge's
                    t0 = time.thread_time()
                    plain.run(None, ort_feeds)
                    return time.thread_time() - t0

                def profiled_call() -> None:
                    profiled.run(None, ort_feeds)  # untimed: its events only (the first of each round is dropped)
                    profiled.run(None, ort_feeds)

                def opt_call() -> float:
                    optimised.run(None, opt_feeds)  # untimed, as Aidge's
                    t0 = time.thread_time()
                    optimised.run(None, opt_feeds)
                    return time.thread_time() - t0

                gc_was_on = gc.isenabled()
                gc.disable()  # as timeit does: a collection inside a timed call is not the call's
                try:
                    totals, aidge_rounds, cpu_rounds = _rounds(rounds, warmup, max_s, aidge_call, ort_call,
                                                               opt_call, profiled_call, _torch_timed(torch_call))
                finally:
                    if gc_was_on:
                        gc.enable()
                node_pass_ran = node_pass[0]
            threads = {"aidge_openmp_threads": 1 if runtimes else None, "openmp_runtimes": runtimes,
                       "ort_intra_op_num_threads": 1, "ort_inter_op_num_threads": 1}
            profile_path = profiled.end_profiling()
        events = json.loads(Path(profile_path).read_text())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    load.append(round(os.getloadavg()[0], 2))
    ort_runs = parse_ort_profile(events)[2 * warmup:][1::2]  # each round's second call
    if not node_pass_ran or not all(cpu_rounds):
        cpu_rounds = []
    return _assemble(proto, names, aidge_rounds, cpu_rounds, ort_runs, totals, name=name, warmup=warmup, top=top,
                     threads=threads, load=load)


def _attributes(node) -> dict[str, Any]:
    """The node's attributes as plain values (ints, floats, strings and their lists; tensors by shape)."""
    from onnx import helper

    out: dict[str, Any] = {}
    for attr in node.attribute:
        try:
            value = helper.get_attribute_value(attr)
        except Exception:  # noqa: BLE001
            continue
        if isinstance(value, bytes):
            value = value.decode(errors="replace")
        elif isinstance(value, (list, tuple)):
            value = [v.decode(errors="replace") if isinstance(v, bytes) else v for v in value]
            if not all(isinstance(v, (int, float, str)) for v in value):
                continue
        elif not isinstance(value, (int, float, str)):
            dims = getattr(value, "dims", None)
            value = {"tensor": list(dims)} if dims is not None else str(type(value).__name__)
        out[attr.name] = value
    return out


def _torch_timed(call):
    """``call`` (torch's forward) as a timed call of the rounds: one torch thread, no autograd,
    an untimed call before the timed one (as every side's); None stays None."""
    if call is None:
        return None
    import torch

    def timed() -> float:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with torch.no_grad():
                call()
                t0 = time.thread_time()
                call()
                return time.thread_time() - t0
        finally:
            torch.set_num_threads(threads)
    return timed


def _rounds(rounds, warmup, max_s, aidge_call, ort_call, opt_call, profiled_call, torch_call=None):
    """The warm-up calls, then the interleaved rounds (the order reversed every other round):
    ``(totals, Aidge's records per round, Aidge's node-alone times per round)``."""
    for _ in range(warmup):
        aidge_call(), ort_call(), opt_call(), profiled_call()
        if torch_call is not None:
            torch_call()
    totals: dict[str, list[float]] = {"aidge": [], "ort": [], "ort_optimized": []}
    if torch_call is not None:
        totals["torch"] = []
    aidge_rounds: list[list[tuple[str, str, float]]] = []
    cpu_rounds: list[list[tuple[str, str, float]]] = []
    start = time.monotonic()
    for r in range(rounds):
        if r >= MIN_ROUNDS and time.monotonic() - start > max_s:
            break
        sides = (0, 1, 2, 3, 4) if torch_call is not None else (0, 1, 2, 3)
        for which in (sides if r % 2 == 0 else tuple(reversed(sides))):
            if which == 0:
                seconds, records, cpu = aidge_call()
                totals["aidge"].append(seconds)
                aidge_rounds.append(records)
                cpu_rounds.append(cpu)
            elif which == 1:
                totals["ort"].append(ort_call())
            elif which == 2:
                totals["ort_optimized"].append(opt_call())
            elif which == 3:
                profiled_call()
            else:
                totals["torch"].append(torch_call())
    return totals, aidge_rounds, cpu_rounds


def _per_node(rounds, names):
    """ONNX node index (or ``aidge:<name>`` when none) -> seconds of each round (the Aidge nodes
    of one ONNX node add up), -> Aidge names, -> Aidge types; and the unmatched Aidge names."""
    times: dict[Any, list[float]] = {}
    aidge_names: dict[Any, list[str]] = {}
    aidge_types: dict[Any, list[str]] = {}
    unmatched: list[str] = []
    for records in rounds:
        this: dict[Any, float] = {}
        for aname, atype, seconds in records:
            index = _match(aname, names)
            key = index if index is not None else f"aidge:{aname}"
            if index is None and aname not in unmatched:
                unmatched.append(aname)
            this[key] = this.get(key, 0.0) + seconds
            if aname not in aidge_names.setdefault(key, []):
                aidge_names[key].append(aname)
                aidge_types.setdefault(key, []).append(atype)
        for key, seconds in this.items():
            times.setdefault(key, []).append(seconds)
    return times, aidge_names, aidge_types, unmatched


def _assemble(proto, names, aidge_rounds, cpu_rounds, ort_runs, totals, *, name, warmup, top, threads,
              load) -> dict[str, Any]:
    nodes = proto.graph.node
    n_rounds = len(aidge_rounds)
    sched_times, aidge_names, aidge_types, unmatched = _per_node(aidge_rounds, names)
    # the node times the shares and ratios use: Aidge's scheduling records (wall clock, as
    # onnxruntime's profiler); the thread CPU time of each node run alone is a cross-check beside
    aidge_times = sched_times
    cpu_times = _per_node(cpu_rounds, names)[0] if cpu_rounds else {}
    by_name = {node.name: k for k, node in enumerate(nodes)}
    ort_times: dict[int, list[float]] = {}
    shapes: dict[int, list] = {}
    for run in ort_runs:
        for oname, event in run.items():
            k = by_name.get(oname)
            if k is None:
                continue
            ort_times.setdefault(k, []).append(event["s"])
            shapes.setdefault(k, event["shapes"])
    rows = []
    keys = [k for k in range(len(nodes)) if k in aidge_times or k in ort_times]
    keys += [k for k in aidge_times if isinstance(k, str)]
    for key in keys:
        a = _spread(aidge_times.get(key, []))
        o = _spread(ort_times.get(key, [])) if isinstance(key, int) else {"n": 0}
        node = nodes[key] if isinstance(key, int) else None
        rows.append({
            "index": key if isinstance(key, int) else None,
            "onnx_name": node.name if node is not None else None,
            "op_type": node.op_type if node is not None else (aidge_types.get(key) or ["?"])[0],
            "attributes": _attributes(node) if node is not None else {},
            "aidge_names": aidge_names.get(key, []),
            "aidge_types": aidge_types.get(key, []),
            "input_shapes": shapes.get(key) if isinstance(key, int) else None,
            "aidge_s": a.get("median", 0.0), "aidge_q1_s": a.get("q1"), "aidge_q3_s": a.get("q3"),
            "aidge_cpu_s": _spread(cpu_times.get(key, [])).get("median") if cpu_times else None,
            "ort_s": o.get("median", 0.0) if o["n"] else None, "ort_q1_s": o.get("q1"), "ort_q3_s": o.get("q3"),
        })
    aidge_sum = sum(r["aidge_s"] for r in rows)
    ort_sum = sum(r["ort_s"] or 0.0 for r in rows)
    for r in rows:
        r["aidge_share"] = r["aidge_s"] / aidge_sum if aidge_sum > 0 else 0.0
        r["ort_share"] = (r["ort_s"] or 0.0) / ort_sum if ort_sum > 0 else 0.0
        r["ratio"] = (r["aidge_s"] / r["ort_s"]) if r["ort_s"] and r["aidge_s"] else None
    operators: dict[str, dict] = {}
    for r in rows:
        op = operators.setdefault(r["op_type"], {"op_type": r["op_type"], "nodes": 0, "aidge_s": 0.0, "ort_s": 0.0,
                                                 "aidge_share": 0.0, "ort_share": 0.0})
        op["nodes"] += 1
        op["aidge_s"] += r["aidge_s"]
        op["ort_s"] += r["ort_s"] or 0.0
        op["aidge_share"] += r["aidge_share"]
        op["ort_share"] += r["ort_share"]
    for op in operators.values():
        op["ratio"] = op["aidge_s"] / op["ort_s"] if op["ort_s"] > 0 and op["aidge_s"] > 0 else None
    ratios = [a / o for a, o in zip(totals["aidge"], totals["ort"]) if o > 0]
    ratios_opt = [a / o for a, o in zip(totals["aidge"], totals["ort_optimized"]) if o > 0]
    hot = sorted((r for r in rows if r["aidge_s"] > 0), key=lambda r: -r["aidge_s"])[:top]
    return {
        "name": name,
        "onnx_nodes": len(nodes),
        "rounds": n_rounds,
        "warmup": warmup,
        "loadavg_1min": {"start": load[0], "end": load[-1]},
        "threads": threads,
        "clock": {"total": "thread CPU time (time.thread_time) per call",
                  "aidge_s": "Aidge's scheduling records (wall clock, whole microseconds), median over the rounds",
                  "aidge_cpu_s": ("thread CPU time of each Aidge node's operator forward run alone after the "
                                  "scheduler's call, in its order, median over the rounds" if cpu_rounds else
                                  "not measured: a node could not run alone"),
                  "ort_s": "onnxruntime's profiler (wall clock, whole microseconds), median over the rounds"},
        "total": {
            "aidge_s": _spread(totals["aidge"]),
            "ort_s": _spread(totals["ort"]),
            "ort_optimized_s": _spread(totals["ort_optimized"]),
            "ratio": _spread(ratios),
            "ratio_optimized": _spread(ratios_opt),
            "torch_s": _spread(totals.get("torch", [])),
            "ratio_torch": _spread([a / t for a, t in zip(totals["aidge"], totals.get("torch", [])) if t > 0]),
            "per_round_s": {k: [round(v, 9) for v in vs] for k, vs in totals.items()},
            "aidge_nodes_sum_s": aidge_sum,
            "aidge_cpu_nodes_sum_s": sum(r["aidge_cpu_s"] or 0.0 for r in rows) if cpu_rounds else None,
            "ort_nodes_sum_s": ort_sum,
        },
        "nodes": rows,
        "operators": sorted(operators.values(), key=lambda op: -op["aidge_s"]),
        "hot": [r["index"] if r["index"] is not None else r["aidge_names"][0] for r in hot],
        "unmatched_aidge": unmatched,
    }


# ---------------------------------------------------------------------------------------------
class _Call:
    """A torch module calling ``model(*args, **kwargs)`` with the tensors as its only inputs
    (non-tensor kwargs bound), returning the flat tuple of its output tensors."""

    def __new__(cls, model, n_args: int, tensor_kwargs: list[str], const_kwargs: dict):
        import torch

        class Call(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, *tensors):
                kwargs = dict(const_kwargs)
                kwargs.update(zip(tensor_kwargs, tensors[n_args:]))
                out = self.model(*tensors[:n_args], **kwargs)
                flat = []

                def walk(value):
                    if isinstance(value, torch.Tensor):
                        flat.append(value)
                    elif isinstance(value, (tuple, list)):
                        for v in value:
                            walk(v)
                    elif isinstance(value, dict):
                        for v in value.values():
                            walk(v)
                walk(out)
                return tuple(flat)

        return Call()


def profile_torch(model, args: Sequence, kwargs: dict | None = None, *, name: str = "", **options) -> dict[str, Any]:
    """:func:`profile_onnx` of ``model`` (put in eval mode; its modes are restored) exported by the
    bridge on the example call ``model(*args, **kwargs)``: tensors are the graph's inputs, other
    kwargs constants of the graph. ``args`` may also be input sizes (tuples of ints: random
    float32 inputs, seeded)."""
    from ..bridge.onnx_export import preserved_state

    proto, feeds, sizes, exporter = export_torch(model, args, kwargs)
    with preserved_state(model):
        result = profile_onnx(proto, feeds, name=name or type(model).__name__,
                              torch_call=torch_forward(model, args, kwargs), **options)
    result["exporter"] = exporter
    result["input_sizes"] = sizes
    return result


def torch_forward(model, args: Sequence, kwargs: dict | None = None):
    """``model`` put in eval mode, and a call of its forward on the inputs :func:`export_torch`
    exports it with (``args`` may be input sizes: the same seeded tensors)."""
    import torch

    args = list(args)
    if args and all(isinstance(a, (tuple, list)) and all(isinstance(d, int) for d in a) for a in args):
        generator = torch.Generator().manual_seed(0)
        args = [torch.randn(*a, generator=generator) for a in args]
    kwargs = dict(kwargs or {})
    model.eval()
    return lambda: model(*args, **kwargs)


def export_torch(model, args: Sequence, kwargs: dict | None = None):
    """``(proto, feeds, input sizes, exporter route)``: ``model`` in eval mode (its modes restored)
    exported by the bridge on ``model(*args, **kwargs)``, as :func:`profile_torch` profiles it."""
    import torch

    from ..bridge.onnx_export import export_to_onnx, preserved_state

    args = list(args)
    if args and all(isinstance(a, (tuple, list)) and all(isinstance(d, int) for d in a) for a in args):
        generator = torch.Generator().manual_seed(0)
        args = [torch.randn(*a, generator=generator) for a in args]
    kwargs = dict(kwargs or {})
    tensor_kwargs = [k for k, v in kwargs.items() if isinstance(v, torch.Tensor)]
    const_kwargs = {k: v for k, v in kwargs.items() if k not in tensor_kwargs}
    tensors = args + [kwargs[k] for k in tensor_kwargs]
    with preserved_state(model):
        model.eval()
        wrapped = model if not kwargs else _Call(model, len(args), tensor_kwargs, const_kwargs)
        with torch.no_grad():
            exported = export_to_onnx(wrapped, tensors, training=False)
    arrays = [t.detach().cpu().numpy() for t in tensors]
    used = set(_data_inputs(exported.proto))
    feeds = {n: a for n, a in zip(exported.input_names, arrays) if n in used}
    return exported.proto, feeds, [list(a.shape) for a in arrays], exported.exporter


# ---------------------------------------------------------------------------------------------
def profile_backward(model, args: Sequence, kwargs: dict | None = None, *, name: str = "",
                     rounds: int = DEFAULT_ROUNDS, warmup: int = DEFAULT_WARMUP, max_s: float = DEFAULT_MAX_S,
                     top: int = DEFAULT_TOP) -> dict[str, Any]:
    """Where Aidge spends a backward, node by node (issue 47 item 1's "and of backward"):
    ``model`` wrapped by the bridge in training mode (the first call's value check compares its
    outputs and gradients with torch's, so a wrong backward is refused, not profiled), then in
    ``rounds`` interleaved rounds, one thread each: Aidge's forward (untimed: Aidge resets its
    intermediate gradients only in a forward), the output gradients set, the scheduler's
    ``backward()`` timed on thread CPU time, its backward scheduling records read back (the
    ``_backward.mmd`` file of ``save_scheduling_diagram``); and torch's backward through the same
    model's graph (``torch.autograd.backward``, retained graph) on thread CPU time. onnxruntime has
    no backward here (no training runtime is installed): the comparison is Aidge's nodes among
    themselves (share of the backward, and each node's backward over its forward time in the same
    round) and the totals against torch. The model's modes are restored."""
    import torch

    from ..bridge.onnx_export import preserved_state
    from ..bridge.wrapping import wrap
    from ..equivalence.verdict import as_module

    args = list(args)
    if args and all(isinstance(a, (tuple, list)) and all(isinstance(d, int) for d in a) for a in args):
        generator = torch.Generator().manual_seed(0)
        args = [torch.randn(*a, generator=generator) for a in args]
    folder = Path(tempfile.mkdtemp(prefix="interop-node-profile-bw-"))
    load = [round(os.getloadavg()[0], 2)]
    threads = torch.get_num_threads()
    try:
        with preserved_state(model):
            model.train()
            module, tensors = as_module(model, args, dict(kwargs or {}))
            aidge = wrap(module, example_inputs=tensors, training=True)
            x_torch = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in tensors]
            x_aidge = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in tensors]
            out_torch = module(*x_torch)
            out_torch = list(out_torch) if isinstance(out_torch, (tuple, list)) else [out_torch]
            gen = torch.Generator().manual_seed(1)
            grads = [torch.randn(o.shape, generator=gen) for o in out_torch]
            out_aidge = aidge(*x_aidge)  # the first call: the bridge's value check, outputs and gradients
            torch.autograd.backward(list(out_aidge) if isinstance(out_aidge, (tuple, list)) else [out_aidge], grads)
            runner = aidge._runner
            inputs = runner.load_inputs([t.detach() for t in tensors])
            runner.invalidate()
            diagram = str(folder / "aidge")
            torch.set_num_threads(1)

            def aidge_call():
                runner.run_forward(inputs)
                runner.set_output_grads(grads)
                t0 = time.thread_time()
                runner.scheduler.backward()
                t1 = time.thread_time()
                runner.scheduler.save_scheduling_diagram(diagram, True)
                fwd = parse_scheduling_diagram(Path(diagram + "_forward.mmd").read_text())
                bwd = parse_scheduling_diagram(Path(diagram + "_backward.mmd").read_text())
                return t1 - t0, fwd, bwd

            def torch_call():
                t0 = time.thread_time()
                torch.autograd.backward(out_torch, grads, retain_graph=True)
                return time.thread_time() - t0

            from ..bridge.runtime import quiet_aidge

            with quiet_aidge(), _one_openmp_thread():
                for _ in range(warmup):
                    aidge_call(), torch_call()
                totals: dict[str, list[float]] = {"aidge": [], "torch": []}
                fwd_rounds, bwd_rounds = [], []
                start = time.monotonic()
                for r in range(rounds):
                    if r >= MIN_ROUNDS and time.monotonic() - start > max_s:
                        break
                    order = ("aidge", "torch") if r % 2 == 0 else ("torch", "aidge")
                    for side in order:
                        if side == "aidge":
                            aidge_call()  # untimed: the switch from torch
                            seconds, fwd, bwd = aidge_call()
                            totals["aidge"].append(seconds)
                            fwd_rounds.append(fwd)
                            bwd_rounds.append(bwd)
                        else:
                            torch_call()
                            totals["torch"].append(torch_call())
            proto = aidge.onnx_model
    finally:
        torch.set_num_threads(threads)
        shutil.rmtree(folder, ignore_errors=True)
    load.append(round(os.getloadavg()[0], 2))
    names = _aidge_names_of(proto)
    bwd_times, aidge_names, aidge_types, unmatched = _per_node(bwd_rounds, names)
    fwd_times = _per_node(fwd_rounds, names)[0]
    nodes = proto.graph.node
    rows = []
    for key, values in bwd_times.items():
        node = nodes[key] if isinstance(key, int) else None
        b = _spread(values)
        f = _spread(fwd_times.get(key, []))
        rows.append({"index": key if isinstance(key, int) else None,
                     "onnx_name": node.name if node is not None else None,
                     "op_type": node.op_type if node is not None else (aidge_types.get(key) or ["?"])[0],
                     "aidge_names": aidge_names.get(key, []), "aidge_types": aidge_types.get(key, []),
                     "backward_s": b.get("median", 0.0), "backward_q1_s": b.get("q1"), "backward_q3_s": b.get("q3"),
                     "forward_s": f.get("median") if f.get("n") else None})
    total = sum(r["backward_s"] for r in rows)
    for r in rows:
        r["share"] = r["backward_s"] / total if total > 0 else 0.0
        r["backward_over_forward"] = (r["backward_s"] / r["forward_s"]) if r["forward_s"] else None
    operators: dict[str, dict] = {}
    for r in rows:
        op = operators.setdefault(r["op_type"], {"op_type": r["op_type"], "nodes": 0, "backward_s": 0.0, "share": 0.0})
        op["nodes"] += 1
        op["backward_s"] += r["backward_s"]
        op["share"] += r["share"]
    ratios = [a / t for a, t in zip(totals["aidge"], totals["torch"]) if t > 0]
    rows.sort(key=lambda r: -r["backward_s"])
    return {"name": name or type(model).__name__, "phase": "backward", "rounds": len(totals["aidge"]),
            "warmup": warmup, "loadavg_1min": {"start": load[0], "end": load[-1]},
            "clock": {"total": "thread CPU time of the scheduler's backward() / torch.autograd.backward per call",
                      "backward_s": "Aidge's backward scheduling records (wall clock, whole microseconds), median "
                                    "over the rounds", "forward_s": "the same round's forward records"},
            "total": {"aidge_s": _spread(totals["aidge"]), "torch_s": _spread(totals["torch"]),
                      "ratio_torch": _spread(ratios), "aidge_nodes_sum_s": total},
            "nodes": rows[:top] if top else rows, "node_count": len(rows),
            "operators": sorted(operators.values(), key=lambda op: -op["backward_s"]),
            "unmatched_aidge": unmatched}


def _aidge_names_of(proto) -> dict[str, int]:
    from .repro_aidge import _aidge_names

    return _aidge_names(proto)


def backward_lines(p: dict) -> list[str]:
    """Plain-text lines of a :func:`profile_backward` result."""
    t = p["total"]
    if not t["aidge_s"].get("n"):
        return [f"== {p['name']} (backward): no rounds"]
    lines = [f"== {p['name']} (backward): Aidge {_us(t['aidge_s']['median'])} us [{_us(t['aidge_s']['q1'])}-"
             f"{_us(t['aidge_s']['q3'])}], torch {_us(t['torch_s']['median'])} us; Aidge/torch "
             f"{t['ratio_torch']['median']:.2f} [{t['ratio_torch']['q1']:.2f}-{t['ratio_torch']['q3']:.2f}] (thread "
             f"CPU time, {p['rounds']} rounds, one thread; load {p['loadavg_1min']['start']}-"
             f"{p['loadavg_1min']['end']})",
             "  " + ", ".join(f"{op['op_type']} {op['share']:.0%}" for op in p["operators"][:6])]
    for r in p["nodes"][:5]:
        bf = f"{r['backward_over_forward']:.1f}x its forward" if r.get("backward_over_forward") else ""
        lines.append(f"    {(r['onnx_name'] or ', '.join(r['aidge_names']))[-44:]:<45}{r['op_type'][:14]:<15}"
                     f"{_us(r['backward_s']):>9} us {r['share']:>6.1%}  {bf}")
    return lines


# ---------------------------------------------------------------------------------------------
#: a node is slow when Aidge takes more than this many times onnxruntime's time on it. The same
#: figure moved by up to 1.7x between two runs minutes apart on the loaded 2-core VM (Anomaly's
#: total 11.5 then 6.7; BERT's LayerNorm nodes x39 then x28, 2026-12-03, docs/node-profile.md),
#: and asv's regressions_thresholds take a 2x change of a time for noise (docs/noise-floor.md):
#: 3x is above both
SLOW_RATIO = 3.0
#: and when both sides are long enough for their profilers' 1 us ticks: Aidge at least 20 us,
#: onnxruntime at least 3 us (a ratio on fewer ticks moves by a third with one tick)
SLOW_MIN_AIDGE_S = 20e-6
#: a node at least this long on thread CPU time (run alone) is judged on that figure, not on its
#: wall-clock records (docs/node-profile.md: a node longer than a time slice is over-counted under load)
CPU_NODE_S = 1e-3
SLOW_MIN_ORT_S = 3e-6


def slow_signature(entry: dict[str, Any]) -> dict[str, Any]:
    """What decides which slow entry of the defect ledger a profiled node belongs to: Aidge's
    operator, the ONNX op, its attributes and input shapes (its shape class). The ratio and the
    time are not in it (they move from run to run; the id does not)."""
    attrs = json.dumps(entry.get("attributes") or {}, sort_keys=True)
    shapes = json.dumps(entry.get("input_shapes"))
    return {"kind": "slow", "component": "aidge_backend_cpu",
            "operator": str(entry.get("aidge_type") or entry.get("op_type") or "?"), "dtype": "float32",
            "phase": "forward", "backend": "cpu", "message": f"{entry.get('op_type')} {attrs} {shapes}"}


def slow_id(entry: dict[str, Any]) -> str:
    """The ledger id (``D-xxxxxxxx``) of a :func:`slow_nodes` entry: the hash of its signature, as
    :func:`interop.registry.identify.defect_id` hashes every defect's (a test holds them equal)."""
    import hashlib

    return "D-" + hashlib.sha1(json.dumps(slow_signature(entry), sort_keys=True).encode()).hexdigest()[:8]


def _write_atomically(path: Path, text: str) -> None:
    """``text`` into ``path`` through a temporary file in its folder and a rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def slow_nodes(profiles: list[dict], threshold: float = SLOW_RATIO) -> list[dict[str, Any]]:
    """The slow nodes of ``profiles`` (:func:`profile_onnx` results), one entry per operator,
    attributes and input shapes, over all the models where it occurs: ``kind`` ``"slow"``,
    ``op_type``, ``attributes``, ``input_shapes``, ``ratio`` (the median of its nodes' Aidge/
    onnxruntime ratios), ``cost_s`` (the Aidge time it costs above onnxruntime's, summed over its
    nodes, one call of each model), ``occurrences`` (model, node, times, ratio, the node's share of
    its model's Aidge node time). Sorted by ``cost_s``, largest first."""
    entries: dict[tuple, dict] = {}
    for p in profiles:
        if "error" in p:
            continue
        for r in p["nodes"]:
            ratio = r.get("ratio")
            aidge_s, clock = r["aidge_s"], "records"
            cpu = r.get("aidge_cpu_s")
            if cpu and cpu >= CPU_NODE_S and r.get("ort_s"):
                # a node longer than a time slice is preempted in most rounds on a loaded machine: its
                # wall-clock records count the waits (SegResNet's Resize 66 ms of records, 25 ms of CPU);
                # the node run alone on thread CPU time is the figure then (its floor, 20-80 us, is small)
                aidge_s, clock = cpu, "cpu alone"
                ratio = cpu / r["ort_s"]
            if (ratio is None or ratio <= threshold or r["aidge_s"] < SLOW_MIN_AIDGE_S
                    or (r["ort_s"] or 0.0) < SLOW_MIN_ORT_S or r["index"] is None):
                continue
            key = (r["op_type"], json.dumps(r.get("attributes") or {}, sort_keys=True),
                   json.dumps(r["input_shapes"]))
            entry = entries.setdefault(key, {"kind": "slow", "op_type": r["op_type"],
                                             "aidge_type": (r.get("aidge_types") or [r["op_type"]])[0],
                                             "attributes": r.get("attributes") or {},
                                             "input_shapes": r["input_shapes"], "occurrences": []})
            entry["occurrences"].append({"model": p["name"], "node": r["onnx_name"], "aidge_s": aidge_s,
                                         "aidge_clock": clock, "aidge_records_s": r["aidge_s"],
                                         "ort_s": r["ort_s"], "ratio": ratio, "share": r["aidge_share"]})
    out = []
    for entry in entries.values():
        occ = entry["occurrences"]
        entry["ratio"] = statistics.median(o["ratio"] for o in occ)
        entry["cost_s"] = sum(o["aidge_s"] - o["ort_s"] for o in occ)
        entry["threshold"] = threshold
        out.append(entry)
    return sorted(out, key=lambda e: -e["cost_s"])


_TIMING_SCRIPT = '''"""Times this folder's one-node ONNX graph (model.onnx, inputs.npz) in Aidge alone, one OpenMP
thread, on the thread's CPU time (each timed call after an untimed one), and in onnxruntime when it
is installed. Needs aidge_core, aidge_backend_cpu, aidge_onnx, onnx, numpy; nothing of the suite.
python time_aidge.py [calls]"""
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402
import onnx  # noqa: E402

import aidge_backend_cpu  # noqa: E402,F401
import aidge_core  # noqa: E402
import aidge_onnx  # noqa: E402

here = Path(__file__).resolve().parent
model = onnx.load(str(here / "model.onnx"))
onnx_bytes = model.SerializeToString()
inits = {t.name for t in model.graph.initializer}
names = [i.name for i in model.graph.input if i.name not in inits]
data = np.load(here / "inputs.npz")
arrays = [np.ascontiguousarray(data[n]) for n in names]
graph = aidge_onnx.convert_onnx_to_aidge(model)  # renames the model in place
graph.set_backend("cpu")  # the graph's own dtypes, as the bridge compiles it
graph.forward_dtype([getattr(aidge_core.dtype, a.dtype.name) for a in arrays])
graph.forward_dims([list(a.shape) for a in arrays])
scheduler = aidge_core.SequentialScheduler(graph)
tensors = [aidge_core.Tensor(a) for a in arrays]
scheduler.forward(True, tensors)


def timed(call, n):
    out = []
    for _ in range(n):
        call()
        t0 = time.thread_time()
        call()
        out.append(time.thread_time() - t0)
    return out


n = int(sys.argv[1]) if len(sys.argv) > 1 else 21
aidge = timed(lambda: scheduler.forward(False, tensors), n)
print(f"Aidge: median {statistics.median(aidge) * 1e6:.1f} us, min {min(aidge) * 1e6:.1f} us "
      f"({n} calls, thread CPU time)")
try:
    import onnxruntime as ort
except ImportError:
    sys.exit(0)
feeds = dict(zip(names, arrays))
for label, level in (("no graph optimisation, as the profile", ort.GraphOptimizationLevel.ORT_DISABLE_ALL),
                     ("default optimisations", ort.GraphOptimizationLevel.ORT_ENABLE_ALL)):
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.graph_optimization_level = level
    session = ort.InferenceSession(onnx_bytes, options, providers=["CPUExecutionProvider"])
    theirs = timed(lambda: session.run(None, feeds), n)
    print(f"onnxruntime ({label}): median {statistics.median(theirs) * 1e6:.1f} us, min {min(theirs) * 1e6:.1f} us; "
          f"Aidge/onnxruntime {statistics.median(aidge) / statistics.median(theirs):.1f} (a whole session call)")
'''


def _node_values(model, data_inputs, arrays) -> dict[str, np.ndarray]:
    """Every input of a one-node ``model`` by name: its data inputs' ``arrays`` and its initializers."""
    from onnx import numpy_helper

    values = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    values.update({getattr(n, "name", n): np.asarray(a) for n, a in zip(data_inputs, arrays)})
    return values


def _symmetric_pads(attrs: dict, rank: int) -> list[int] | None:
    pads = list(attrs.get("pads") or [0] * (2 * rank))
    if str(attrs.get("auto_pad", "NOTSET")) not in ("NOTSET", ""):
        return None
    return pads[:rank] if pads[:rank] == pads[rank:] else None


def torch_equivalent(node, values: dict[str, np.ndarray], out_shape: Sequence[int] | None = None):
    """``(call, label)``: torch's own op doing what the ONNX ``node`` does on ``values`` (its inputs
    by name, as torch tensors inside ``call``), or None where no single torch op is mapped (the
    ops the profile finds slow: Conv, pooling, Resize, the normalisations, Gemm/MatMul, the
    element-wise and reduction ops). The caller checks its output against onnxruntime's."""
    import torch
    import torch.nn.functional as F

    attrs = _attributes(node)
    ins = [torch.from_numpy(np.array(values[n])) if n else None for n in node.input]  # writable copies
    op = node.op_type
    x = ins[0] if ins else None
    rank = x.dim() - 2 if x is not None else 0
    unary = {"Relu": torch.relu, "Sigmoid": torch.sigmoid, "Tanh": torch.tanh, "Erf": torch.erf, "Sqrt": torch.sqrt,
             "Exp": torch.exp, "Neg": torch.neg, "Abs": torch.abs, "Log": torch.log, "Reciprocal": torch.reciprocal}
    binary = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": torch.div, "Pow": torch.pow,
              "MatMul": torch.matmul}
    if op in unary:
        return (lambda: unary[op](x)), f"torch.{unary[op].__name__}"
    if op in binary and len(ins) == 2:
        y = ins[1]
        return (lambda: binary[op](x, y)), f"torch.{binary[op].__name__}"
    if op == "Conv" and 1 <= rank <= 3:
        pads = _symmetric_pads(attrs, rank)
        if pads is None:
            return None
        conv = (F.conv1d, F.conv2d, F.conv3d)[rank - 1]
        w, b = ins[1], ins[2] if len(ins) > 2 else None
        kw = dict(stride=attrs.get("strides") or 1, padding=pads, dilation=attrs.get("dilations") or 1,
                  groups=int(attrs.get("group", 1)))
        return (lambda: conv(x, w, b, **kw)), f"torch.nn.functional.{conv.__name__}"
    if op in ("MaxPool", "AveragePool") and 1 <= rank <= 3:
        pads = _symmetric_pads(attrs, rank)
        if pads is None or any(2 * p > k for p, k in zip(pads, attrs["kernel_shape"])):
            return None
        kw = dict(kernel_size=attrs["kernel_shape"], stride=attrs.get("strides") or 1, padding=pads,
                  ceil_mode=bool(attrs.get("ceil_mode", 0)))
        if op == "MaxPool":
            if any(d != 1 for d in attrs.get("dilations") or []):
                kw["dilation"] = attrs["dilations"]
            pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[rank - 1]
        else:
            kw["count_include_pad"] = bool(attrs.get("count_include_pad", 0))
            pool = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[rank - 1]
        return (lambda: pool(x, **kw)), f"torch.nn.functional.{pool.__name__}"
    if op == "GlobalAveragePool":
        return (lambda: x.mean(dim=tuple(range(2, x.dim())), keepdim=True)), "torch.mean"
    if op == "Resize" and out_shape is not None and 1 <= rank <= 3:
        mode = str(attrs.get("mode", "nearest"))
        how = str(attrs.get("coordinate_transformation_mode", "half_pixel"))
        if mode == "linear" and how in ("half_pixel", "pytorch_half_pixel", "align_corners"):
            kind = ("linear", "bilinear", "trilinear")[rank - 1]
            size = list(out_shape)[2:]
            corners = how == "align_corners"
            return (lambda: F.interpolate(x, size=size, mode=kind, align_corners=corners)), \
                f"torch.nn.functional.interpolate({kind})"
        if mode == "nearest" and how == "asymmetric" and str(attrs.get("nearest_mode", "")) == "floor":
            size = list(out_shape)[2:]
            return (lambda: F.interpolate(x, size=size, mode="nearest")), "torch.nn.functional.interpolate(nearest)"
        return None
    if op == "LayerNormalization":
        axis = int(attrs.get("axis", -1)) % x.dim()
        w, b = ins[1], ins[2] if len(ins) > 2 else None
        eps = float(attrs.get("epsilon", 1e-5))
        shape = tuple(x.shape[axis:])
        return (lambda: F.layer_norm(x, shape, w, b, eps)), "torch.nn.functional.layer_norm"
    if op == "BatchNormalization" and len(ins) >= 5:
        scale, bias, mean, var = ins[1:5]
        eps = float(attrs.get("epsilon", 1e-5))
        return (lambda: F.batch_norm(x, mean, var, scale, bias, False, 0.0, eps)), "torch.nn.functional.batch_norm"
    if op == "Gemm" and not attrs.get("transA") and float(attrs.get("alpha", 1.0)) == 1.0 \
            and float(attrs.get("beta", 1.0)) == 1.0:
        w = ins[1] if attrs.get("transB") else ins[1].t().contiguous()
        c = ins[2] if len(ins) > 2 else None
        return (lambda: F.linear(x, w, c)), "torch.nn.functional.linear"
    if op == "Softmax":
        axis = int(attrs.get("axis", -1))
        return (lambda: torch.softmax(x, axis)), "torch.softmax"
    if op == "Transpose":
        perm = attrs.get("perm") or list(reversed(range(x.dim())))
        return (lambda: x.permute(*perm).contiguous()), "torch.permute(...).contiguous()"
    if op == "ReduceMean":
        axes = attrs.get("axes") or (ins[1].tolist() if len(ins) > 1 and ins[1] is not None else None)
        keep = bool(attrs.get("keepdims", 1))
        if axes is None:
            return None
        return (lambda: x.mean(dim=tuple(axes), keepdim=keep)), "torch.mean"
    if op == "Concat":
        axis = int(attrs.get("axis", 0))
        return (lambda: torch.cat(ins, axis)), "torch.cat"
    return None


def _node_alone(proto, inputs, node_name: str):
    """The node ``node_name`` of ``proto`` as a graph of its own, fed the values it receives in
    the full graph on ``inputs`` (onnxruntime's): the node, then ``(model, data_inputs, arrays,
    expected)`` of the reproducer's :func:`~interop.diagnostics.reproducer._single_node_model`; a
    KeyError when the graph has no such node."""
    from .repro_reduce import _ort_values, _single_node_model

    named = _named(proto)
    feeds = _feeds(named, inputs)
    node = next((n for n in named.graph.node if n.name == node_name), None)
    if node is None:
        raise KeyError(f"no node {node_name!r} in the graph")
    values = _ort_values(named, feeds)
    return (node, *_single_node_model(named, node, values, set(_data_inputs(named))))


#: interleaved rounds of :func:`time_node_alone`
ALONE_ROUNDS = 11


def time_node_alone(proto, node_name: str, inputs, *, rounds: int = ALONE_ROUNDS) -> dict[str, Any]:
    """The node named ``node_name`` of ``proto`` cut out alone (as :func:`write_timing_reproducer`
    writes it) and timed in ``rounds`` interleaved rounds, one thread each, on the thread's CPU time,
    each timed call after an untimed call of the same runtime: Aidge's scheduler, onnxruntime
    without and with graph optimisation (whole session calls), and torch's equivalent op
    (:func:`torch_equivalent`; None where none is mapped, or where its output differs from
    onnxruntime's: ``torch_op`` then says why). Medians in seconds; ``ratio_ort`` and
    ``ratio_torch`` are Aidge's median over the other's."""
    import onnxruntime as ort
    import torch

    from ..bridge.runtime import quiet_aidge
    from .repro_aidge import load_in_aidge

    node, model, data_inputs, arrays, expected = _node_alone(proto, inputs, node_name)
    names = [getattr(i, "name", i) for i in data_inputs]
    one = dict(zip(names, [np.ascontiguousarray(a) for a in arrays]))
    onnx_bytes = model.SerializeToString()
    sessions = [ort.InferenceSession(onnx_bytes, _ort_options(ort, profile_prefix=None, optimize=o),
                                     providers=["CPUExecutionProvider"]) for o in (False, True)]
    equivalent = torch_equivalent(node, _node_values(model, names, arrays),
                                  list(expected[0].shape) if expected else None)
    torch_op = equivalent[1] if equivalent else f"no torch op mapped for ONNX {node.op_type} with these attributes"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        if equivalent is not None:
            with torch.no_grad():
                got = equivalent[0]()
            ref = np.asarray(expected[0]) if expected else None
            from ..oracle.tolerance import STAND_IN_SCREEN

            if ref is None or tuple(got.shape) != ref.shape or not np.allclose(
                    got.numpy(), ref, rtol=STAND_IN_SCREEN.rtol, atol=STAND_IN_SCREEN.atol):
                torch_op = f"{equivalent[1]} does not compute what onnxruntime computes here: not timed"
                equivalent = None
        import onnx

        for_aidge = onnx.ModelProto()
        for_aidge.CopyFrom(model)
        with quiet_aidge(), _one_openmp_thread():
            graph, scheduler, tensors = load_in_aidge(for_aidge, [one[n] for n in names])
            scheduler.forward(True, tensors)
            calls = {"aidge": lambda: scheduler.forward(False, tensors),
                     "ort": lambda: sessions[0].run(None, one), "ort_optimized": lambda: sessions[1].run(None, one)}
            if equivalent is not None:
                calls["torch"] = equivalent[0]
            times: dict[str, list[float]] = {k: [] for k in calls}
            with torch.no_grad():
                for call in calls.values():
                    call()
                for r in range(rounds):
                    for key in (list(calls) if r % 2 == 0 else list(reversed(calls))):
                        calls[key]()  # untimed: the switch from the other runtime
                        t0 = time.thread_time()
                        calls[key]()
                        times[key].append(time.thread_time() - t0)
    finally:
        torch.set_num_threads(threads)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"rounds": rounds, "clock": "thread CPU time per call, median of the rounds",
            "aidge_s": med["aidge"], "ort_s": med["ort"], "ort_optimized_s": med["ort_optimized"],
            "torch_s": med.get("torch"), "torch_op": torch_op,
            "ratio_ort": med["aidge"] / med["ort"] if med["ort"] > 0 else None,
            "ratio_ort_optimized": med["aidge"] / med["ort_optimized"] if med["ort_optimized"] > 0 else None,
            "ratio_torch": (med["aidge"] / med["torch"]) if med.get("torch") else None}


def write_timing_reproducer(proto, node_name: str, inputs, folder: Path, meta: dict | None = None) -> Path:
    """A folder of its own for the node named ``node_name`` of ``proto`` (its name as the profile
    gives it): ``model.onnx`` (the node alone; its inputs that depend on the graph's data are graph
    inputs, the others initializers), ``inputs.npz`` (the values they receive in the full graph on
    ``inputs``, computed by onnxruntime), ``time_aidge.py`` (times it, Aidge alone and onnxruntime,
    without the suite) and ``meta.json`` (``meta``). Returns ``folder``."""
    import onnx

    node, model, data_inputs, arrays, _ = _node_alone(proto, inputs, node_name)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(folder / "model.onnx"))
    names = [getattr(i, "name", i) for i in data_inputs]
    np.savez(folder / "inputs.npz", **{n: np.asarray(a) for n, a in zip(names, arrays)})
    (folder / "time_aidge.py").write_text(_TIMING_SCRIPT)
    (folder / "meta.json").write_text(json.dumps(dict(meta or {}, node=node_name, op_type=node.op_type),
                                                 indent=1, default=str) + "\n")
    return folder


# ---------------------------------------------------------------------------------------------
def _us(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    us = seconds * 1e6
    return f"{us:.0f}" if us >= 100 else f"{us:.1f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _total_line(p: dict) -> str:
    t = p["total"]
    a, o, oo, r, ro = t["aidge_s"], t["ort_s"], t["ort_optimized_s"], t["ratio"], t["ratio_optimized"]
    if not a.get("n"):
        return "no rounds"
    return (f"Aidge {_us(a['median'])} us [{_us(a['q1'])}-{_us(a['q3'])}], onnxruntime (no graph optimisation) "
            f"{_us(o['median'])} us [{_us(o['q1'])}-{_us(o['q3'])}], onnxruntime (optimised) {_us(oo['median'])} us; "
            f"Aidge/onnxruntime {r['median']:.2f} [{r['q1']:.2f}-{r['q3']:.2f}], against the optimised "
            f"{ro['median']:.2f} [{ro['q1']:.2f}-{ro['q3']:.2f}]"
            + (f"; torch {_us(t['torch_s']['median'])} us, Aidge/torch {t['ratio_torch']['median']:.2f}"
               if (t.get("torch_s") or {}).get("n") else "")
            + f" (thread CPU time per call, median [quartiles] of "
            f"{a['n']} rounds; load {p['loadavg_1min']['start']}-{p['loadavg_1min']['end']})")


def _node_label(r: dict) -> str:
    return r["onnx_name"] or ", ".join(r["aidge_names"])


def table_lines(p: dict, top: int | None = None) -> list[str]:
    """Plain-text tables of one profile (what the CLI prints)."""
    lines = [f"== {p['name']}: {p['onnx_nodes']} ONNX nodes", "  " + _total_line(p),
             f"  node sums (medians): Aidge's records {_us(p['total']['aidge_nodes_sum_s'])} us (wall), "
             f"each Aidge node "
             f"alone {_us(p['total']['aidge_cpu_nodes_sum_s'])} us (thread CPU), onnxruntime's profiler "
             f"{_us(p['total']['ort_nodes_sum_s'])} us (wall)",
             f"  {'operator':<22}{'nodes':>6}{'Aidge us':>11}{'share':>7}{'ort us':>10}{'share':>7}{'ratio':>9}"]
    for op in p["operators"]:
        lines.append(f"  {op['op_type']:<22}{op['nodes']:>6}{_us(op['aidge_s']):>11}{op['aidge_share']:>7.1%}"
                     f"{_us(op['ort_s']):>10}{op['ort_share']:>7.1%}{_ratio(op['ratio']):>9}")
    by_key = {(r["index"] if r["index"] is not None else r["aidge_names"][0]): r for r in p["nodes"]}
    lines.append(f"  hot nodes: {'node':<34}{'op':<14}{'Aidge us':>10}{'share':>7}{'ort us':>9}{'ratio':>9}  inputs")
    for key in p["hot"][:top]:
        r = by_key[key]
        label = _node_label(r)
        label = label if len(label) <= 41 else "..." + label[-38:]
        lines.append(f"    {label:<42}{r['op_type'][:13]:<14}{_us(r['aidge_s']):>10}"
                     f"{r['aidge_share']:>7.1%}{_us(r['ort_s']):>9}{_ratio(r['ratio']):>9}  {r['input_shapes']}")
    if p["unmatched_aidge"]:
        lines.append(f"  Aidge nodes matched to no ONNX node: {p['unmatched_aidge']}")
    return lines


def slow_lines(slow: list[dict], limit: int | None = None) -> list[str]:
    """Plain-text lines of :func:`slow_nodes` entries."""
    lines = []
    for entry in slow[:limit]:
        where = ", ".join(f"{o['model']} {o['share']:.1%}" for o in entry["occurrences"][:4])
        more = len(entry["occurrences"]) - 4
        lines.append(f"  {entry['op_type']:<20}x{entry['ratio']:<8.1f}{_us(entry['cost_s']):>9} us  "
                     f"{entry['input_shapes']}  {where}{f' (+{more})' if more > 0 else ''}")
    return lines


def markdown(profiles: list[dict], header: str = "", top: int | None = None) -> str:
    """The profiles as Markdown: per model the totals, the operator types' shares, the hot nodes."""
    out = [header] if header else []
    for p in profiles:
        if "error" in p:
            out += [f"## {p['name']}", "", f"Not profiled: {p['error']}", ""]
            continue
        out += [f"## {p['name']}", "", _total_line(p) + ".", "",
                "| operator | nodes | Aidge us | Aidge share | onnxruntime us | ort share | Aidge/ort |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for op in p["operators"]:
            out.append(f"| {op['op_type']} | {op['nodes']} | {_us(op['aidge_s'])} | {op['aidge_share']:.1%} | "
                       f"{_us(op['ort_s'])} | {op['ort_share']:.1%} | {_ratio(op['ratio'])} |")
        out += ["", f"Node sums (medians): Aidge's scheduling records {_us(p['total']['aidge_nodes_sum_s'])} us (wall "
                f"clock), each Aidge node alone {_us(p['total']['aidge_cpu_nodes_sum_s'])} us (thread CPU time), "
                f"onnxruntime's profiler {_us(p['total']['ort_nodes_sum_s'])} us (wall clock).", "",
                "| hot node | op | input shapes | Aidge us [q1-q3] | share | Aidge alone, CPU us "
                "| onnxruntime us [q1-q3] "
                "| Aidge/ort |",
                "|---|---|---|---:|---:|---:|---:|---:|"]
        by_key = {(r["index"] if r["index"] is not None else r["aidge_names"][0]): r for r in p["nodes"]}
        for key in p["hot"][:top]:
            r = by_key[key]
            shapes = " ".join(str(s).replace(" ", "") for s in (r["input_shapes"] or []))
            out.append(f"| `{_node_label(r)}` | {r['op_type']} | {shapes} | {_us(r['aidge_s'])} "
                       f"[{_us(r['aidge_q1_s'])}-{_us(r['aidge_q3_s'])}] | {r['aidge_share']:.1%} | "
                       f"{_us(r['aidge_cpu_s'])} | {_us(r['ort_s'])} "
                       f"[{_us(r['ort_q1_s'])}-{_us(r['ort_q3_s'])}] | {_ratio(r['ratio'])} |")
        if p["unmatched_aidge"]:
            out.append(f"\nAidge nodes matched to no ONNX node: {', '.join(p['unmatched_aidge'])}")
        out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
def _zoo_targets(names: list[str] | None):
    from ..zoo.models import MODEL_CASES

    for case in MODEL_CASES:
        if names is None or case["name"] in names:
            yield case["name"], (lambda case=case: (case["model"](), [tuple(case["input_size"])], {}))


def _architecture_targets(names: list[str]):
    from ..zoo.architectures import architecture

    for arch_name in names:
        def make(arch_name=arch_name):
            arch = architecture(arch_name)
            args, kwargs = arch.inputs()
            return arch.build(), list(args), kwargs
        yield arch_name, make


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m interop.diagnostics.node_profile",
                                     description="Per-node profile of the zoo's models (and architectures): Aidge's "
                                                 "scheduling records against onnxruntime's profiler, one thread each.")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for node_profile.json and node_profile.md (default: a new temporary "
                             "folder, printed)")
    parser.add_argument("--models", default=None, help="comma-separated zoo model names (default: all; 'none': none)")
    parser.add_argument("--architectures", default="", help="comma-separated architecture names (interop.zoo."
                                                            "architectures), 'all' for every one, none by default")
    parser.add_argument("--run-dir", type=Path, default=None,
                        help="a findings run (results/latest): the profile goes to RUN/node-profile, the slow "
                             "nodes' timing reproducers to RUN/reproducers/slow/<defect id>/, and the run's "
                             "ledger and report are rebuilt with the slow entries (replaces --out)")
    parser.add_argument("--backward", action="store_true",
                        help="also profile each model's backward where Aidge runs it (Aidge's backward records, "
                             "against torch's backward in total; onnxruntime has no backward)")
    parser.add_argument("--alone-rounds", type=int, default=ALONE_ROUNDS,
                        help="rounds of each slow node timed alone (Aidge, onnxruntime, torch's equivalent op)")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--warmup", type=int, default=DEFAULT_WARMUP)
    parser.add_argument("--max-s", type=float, default=DEFAULT_MAX_S, help="seconds of rounds per model at most")
    parser.add_argument("--top", type=int, default=DEFAULT_TOP, help="hot nodes per model")
    parser.add_argument("--slow-ratio", type=float, default=SLOW_RATIO,
                        help="a node is slow above this Aidge/onnxruntime ratio")
    parser.add_argument("--reproducers", type=int, default=20,
                        help="timing reproducers written (out/slow/NN_<op>/), the costliest slow nodes first")
    args = parser.parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = "1"  # before torch or Aidge load an OpenMP runtime (the profile sets it too)
    run_dir = None
    if args.run_dir is not None:
        run_dir = args.run_dir.resolve()
        if not (run_dir / "records.jsonl").is_file():
            parser.error(f"{args.run_dir}: not a findings run (no records.jsonl)")
        out = run_dir / PROFILE_DIR
    else:
        out = args.out if args.out is not None else Path(tempfile.mkdtemp(prefix="node-profile-"))
    out.mkdir(parents=True, exist_ok=True)
    models = None if args.models is None else [] if args.models == "none" else args.models.split(",")
    if args.architectures == "all":
        from ..zoo.architectures import ARCHITECTURES

        arch_names = [a.name for a in ARCHITECTURES]
    else:
        arch_names = [a for a in args.architectures.split(",") if a]
    targets = list(_zoo_targets(models)) + list(_architecture_targets(arch_names))
    import platform
    import subprocess

    def uptime_now() -> str:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip() if shutil.which("uptime") else ""

    uptime_start = uptime_now()
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    profiles = []
    graphs: dict[str, tuple] = {}
    for name, make in targets:
        try:
            model, inputs, kwargs = make()
            proto, feeds, sizes, exporter = export_torch(model, inputs, kwargs)
            graphs[name] = (proto, feeds)
            p = profile_onnx(proto, feeds, name=name, rounds=args.rounds, warmup=args.warmup, max_s=args.max_s,
                             top=args.top, torch_call=torch_forward(model, inputs, kwargs))
            p.update(exporter=exporter, input_sizes=sizes)
        except Exception as exc:  # noqa: BLE001 - a model that cannot be profiled is said, the others go on
            p = {"name": name, "error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}"}
            print(f"== {name}: not profiled: {p['error']}", flush=True)
        else:
            print("\n".join(table_lines(p, args.top)), flush=True)
        profiles.append(p)
    backward = []
    for name, make in (targets if args.backward else []):
        try:
            model, inputs, kwargs = make()
            b = profile_backward(model, inputs, kwargs, name=name, rounds=args.rounds, warmup=args.warmup,
                                 max_s=args.max_s, top=args.top)
        except Exception as exc:  # noqa: BLE001 - a model whose backward Aidge cannot run is said, the others go on
            b = {"name": name, "phase": "backward", "error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}"}
            print(f"== {name} (backward): not profiled: {b['error']}", flush=True)
        else:
            print("\n".join(backward_lines(b)), flush=True)
        backward.append(b)
    slow = slow_nodes(profiles, args.slow_ratio)

    slow_root = (run_dir / SLOW_REPRODUCERS) if run_dir is not None else (out / "slow")
    shutil.rmtree(slow_root, ignore_errors=True)  # this run's reproducers only (the folder is the CLI's)
    for k, entry in enumerate(slow):
        entry["id"] = slow_id(entry)
        if k >= args.reproducers:
            continue
        first = entry["occurrences"][0]
        folder = slow_root / (entry["id"] if run_dir is not None else f"{k + 1:02d}_{entry['op_type']}")
        proto, feeds = graphs[first["model"]]
        try:
            entry["alone"] = time_node_alone(proto, first["node"], feeds, rounds=args.alone_rounds)
        except Exception as exc:  # noqa: BLE001 - an entry without its node-alone figures says why
            entry["alone_error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        try:
            write_timing_reproducer(proto, first["node"], feeds, folder,
                                    meta={k2: v for k2, v in entry.items() if k2 != "occurrences"}
                                    | {"model": first["model"]})
            entry["reproducer"] = str(folder.relative_to(run_dir)) if run_dir is not None else str(folder)
        except Exception as exc:  # noqa: BLE001 - an entry without a reproducer says why
            entry["reproducer_error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    if slow:
        print(f"\nslow nodes (Aidge > {args.slow_ratio:g}x onnxruntime): {len(slow)}; by the Aidge time they cost:")
        for line in slow_lines(slow, 10):
            print(line)
    uptime = uptime_now()  # at the end (it was read at the start: the figure docs quoted as the end's)
    meta = {"started": started, "ended": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "command": "python -m interop.diagnostics.node_profile " + " ".join(sys.argv[1:] if argv is None else argv),
            "uptime_at_start": uptime_start, "uptime_at_end": uptime, "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
            "rounds": args.rounds, "warmup": args.warmup, "max_s": args.max_s}
    write_atomically = _write_atomically
    write_atomically(out / "node_profile.json", json.dumps({"meta": meta, "profiles": profiles, "slow": slow,
                                                            "backward": backward}, indent=1) + "\n")
    header = (f"# Per-node profile, Aidge against onnxruntime\n\n{meta['started']} to {meta['ended']}, "
              f"`{meta['command']}`; {meta['machine']}; `uptime` at the start: `{uptime_start}`, at the end: `{uptime}`.\n")
    slow_md = ["", f"## Slow nodes (Aidge more than {args.slow_ratio:g}x onnxruntime): {len(slow)}", "",
               "| operator | attributes | input shapes | Aidge/ort | Aidge/torch op (alone) | cost us "
               "| where (node share of the model) | reproducer |", "|---|---|---|---:|---:|---:|---|---|"]
    for entry in slow:
        where = "; ".join(f"{o['model']} {o['share']:.1%}" for o in entry["occurrences"])
        attrs = ", ".join(f"{k}={v}" for k, v in entry["attributes"].items())
        shapes = " ".join(str(x).replace(" ", "") for x in entry["input_shapes"] or [])
        repro = Path(entry["reproducer"]).name if entry.get("reproducer") else "-"
        alone = entry.get("alone") or {}
        torch_ratio = f"{alone['ratio_torch']:.1f}" if alone.get("ratio_torch") else "-"
        slow_md.append(f"| {entry['op_type']} | {attrs} | {shapes} | {entry['ratio']:.1f} | {torch_ratio} "
                       f"| {_us(entry['cost_s'])} | {where} | {repro} |")
    backward_md = ["", "## Backward (Aidge's backward records; against torch's backward in total)", ""] if backward else []
    for b in backward:
        if "error" in b:
            backward_md += [f"- **{b['name']}**: not profiled: {b['error']}"]
            continue
        backward_md += ["```", *backward_lines(b), "```"]
    write_atomically(out / "node_profile.md", markdown(profiles, header, args.top) + "\n".join(slow_md + backward_md)
                     + "\n")
    print(f"\nwritten: {out / 'node_profile.json'}, {out / 'node_profile.md'}")
    if run_dir is not None:  # the reporting layer sits above this one: its own command rebuilds the run
        print(f"now: python -m interop.reporting.ledger {run_dir}  (the run's ledger, report and porting table "
              "with these figures; nox -s profile runs it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
