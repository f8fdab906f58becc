"""Where Aidge spends a backward, node by node (:func:`profile_backward`): Aidge's backward
scheduling records of a model the bridge wraps in training mode, against torch's backward in total
(onnxruntime has no backward here)."""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from .forward import _per_node
from .records import (DEFAULT_MAX_S, DEFAULT_ROUNDS, DEFAULT_TOP, DEFAULT_WARMUP, MIN_ROUNDS,
                                   _one_openmp_thread, _spread, parse_scheduling_diagram)
from ..bridge.ort import aidge_node_indices
from ..bridge.runtime import quiet_aidge
from ..equivalence.callable_module import as_module

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

    from ..bridge.onnx_export_state import preserved_state
    from ..bridge.wrapping import wrap

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
    return aidge_node_indices(proto)
