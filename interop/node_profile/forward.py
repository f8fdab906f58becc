"""The forward's per-node profile of an ONNX graph, Aidge against onnxruntime (:func:`profile_onnx`):
the interleaved rounds, each Aidge node matched to the ONNX node it was imported from, and the
result assembled (per node, per operator type, the totals, the hot nodes). What each figure is:
:mod:`interop.node_profile`'s docstring."""
from __future__ import annotations

import gc
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from .records import (DEFAULT_MAX_S, DEFAULT_ROUNDS, DEFAULT_TOP, DEFAULT_WARMUP, MIN_ROUNDS,
                                   _data_inputs, _feeds, _named, _one_openmp_thread, _ort_options, _spread,
                                   parse_ort_profile, parse_scheduling_diagram)
from ..bridge.ort import aidge_node_indices
from ..bridge.runtime import quiet_aidge
from ..reproducers.aidge import load_in_aidge
from ..reproducers.reduce import session_feeds

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
    :class:`interop.reproducers.aidge.AidgeRefused` when Aidge cannot import or compile it."""
    import onnxruntime as ort

    proto = _named(proto)
    feeds = _feeds(proto, inputs)
    data_names = _data_inputs(proto)
    names = aidge_node_indices(proto)  # on a renamed copy: proto keeps its ONNX names
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
            ort_feeds = session_feeds(profiled, feeds)
            opt_feeds = session_feeds(optimised, feeds)
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
