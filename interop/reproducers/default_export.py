"""Test what users export: the graph ``torch.onnx.export`` gives with torch's defaults, beside the
bridge's own export, both handed to Aidge.

The bridge exports with settings of its own (``keep_initializers_as_inputs=True``, no constant
folding, the dynamo route without its optimiser: :mod:`interop.bridge.onnx_export`) because its
parameter mapping needs every weight as a named initializer. A user who calls
``torch.onnx.export(model, args, "model.onnx")`` gets another graph: torch de-duplicates equal
initializers (two equal LayerNorm biases become one, read through an ``Identity``), folds
constants, and on the dynamo route runs onnxscript's optimiser. :func:`compare_exports` imports,
compiles and runs both in Aidge and says where one is taken and not the other, with the graphs'
differences (operator counts, initializers). ``python -m interop.reproducers.default_export`` does
it for every zoo model and architecture and writes the table of docs/default-export.md.
"""
from __future__ import annotations

import collections
import io
import json
import sys
import warnings
from typing import Any

import numpy as np

from ..bridge import runtime as rt
from ..equivalence.isolation import run_isolated
from ..oracle.tolerance import default_tolerances
from ..zoo.architectures import ARCHITECTURES
from .aidge import AidgeRefused, load_in_aidge

__all__ = ["user_export", "run_in_aidge", "compare_exports", "graph_summary"]


def user_export(model, args: tuple, kwargs: dict | None, route: str):
    """The ONNX ``torch.onnx.export`` gives with torch's defaults on ``route`` (``torchscript``:
    ``dynamo=False``; ``dynamo``: ``dynamo=True``, its optimiser on), the model in its own mode.
    The model's state and the RNG are restored."""
    import onnx
    import torch

    from ..bridge.onnx_export_state import preserved_state

    with preserved_state(model), torch.random.fork_rng(devices=[]), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if route == "dynamo":
            program = torch.onnx.export(model, tuple(args), kwargs=dict(kwargs or {}), dynamo=True, verbose=False,
                                        report=False)
            return program.model_proto
        buffer = io.BytesIO()
        # the TorchScript route's documented way to pass keyword arguments: a dict as the last argument
        call = tuple(args) + ((dict(kwargs),) if kwargs else ())
        torch.onnx.export(model, call, buffer, dynamo=False, verbose=False)
        return onnx.load_from_string(buffer.getvalue())


def run_in_aidge(proto, inputs: list[np.ndarray]) -> tuple[str, list[np.ndarray] | None]:
    """``("ok", outputs)``, or ``("<phase>: <Aidge's message>", None)``: the graph imported by
    aidge_onnx (a GenericOperator is a refusal), compiled for the CPU in float32 and run once."""
    rt.load_backend("cpu")
    with rt.quiet_aidge():
        try:
            graph, scheduler, feeds = load_in_aidge(proto, inputs, refuse_generic=True)
        except AidgeRefused as exc:
            cause = exc.cause
            what = f"{type(cause).__name__}: {_line(cause)}" if isinstance(cause, BaseException) else cause
            return f"{exc.phase}: {what}", None
        try:
            scheduler.forward(True, feeds)
        except Exception as exc:  # noqa: BLE001
            return f"forward: {type(exc).__name__}: {_line(exc)}", None
        return "ok", [np.array(n.get_operator().get_output(i), copy=True) for n, i in graph.get_ordered_outputs()]


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def graph_summary(proto) -> dict[str, Any]:
    """Node counts by operator type, and the number of initializers."""
    return {"ops": dict(collections.Counter(n.op_type for n in proto.graph.node)),
            "initializers": len(proto.graph.initializer), "nodes": len(proto.graph.node)}


def _diff(a: dict[str, Any], b: dict[str, Any]) -> str:
    ops = sorted(set(a["ops"]) | set(b["ops"]))
    parts = [f"{op} {a['ops'].get(op, 0)}->{b['ops'].get(op, 0)}" for op in ops if a["ops"].get(op, 0) != b["ops"].get(op, 0)]
    if a["initializers"] != b["initializers"]:
        parts.append(f"initializers {a['initializers']}->{b['initializers']}")
    return ", ".join(parts) or "same operators and initializer count"


def _matches(outputs, expected, rtol=None, atol=None) -> tuple[bool, float]:
    if rtol is None or atol is None:
        rtol, atol = default_tolerances("float32")
    worst, ok = 0.0, len(outputs) == len(expected)
    for a, e in zip(outputs, expected):
        if a.size != e.size:
            return False, float("nan")
        a = a.reshape(e.shape).astype(np.float64)
        e = e.astype(np.float64)
        ok &= bool(np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True).all())
        if a.size:
            worst = max(worst, float(np.nanmax(np.abs(a - e))))
    return ok, worst


def compare_exports(model, args: tuple, kwargs: dict | None = None, route: str = "torchscript") -> dict[str, Any]:
    """Both exports of ``model`` (in its own mode) through Aidge: ``suite`` and ``user`` each hold the
    outcome (``ok`` or the phase and Aidge's message) and whether the outputs match torch's;
    ``differs`` says whether Aidge takes one and not the other; ``graph`` what differs."""
    import torch
    from torch.utils import _pytree as pytree

    from ..bridge.onnx_export import export_to_onnx
    from ..bridge.onnx_export_state import preserved_state

    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    inputs = [t.detach().cpu().numpy() for t in tensors]
    with preserved_state(model), torch.no_grad(), torch.random.fork_rng(devices=[]):
        expected = [leaf.detach().numpy() for leaf in pytree.tree_leaves(model(*args, **(kwargs or {})))
                    if isinstance(leaf, torch.Tensor)]
    result: dict[str, Any] = {"route": route}
    protos = {}
    try:
        if kwargs:
            from ..bridge.binding import BoundModule, CallBinding

            binding = CallBinding(model, list(args), dict(kwargs))
            protos["suite"] = export_to_onnx(BoundModule(model, binding), list(binding.example_tensors),
                                             exporter=route).proto
        else:
            protos["suite"] = export_to_onnx(model, tensors, exporter=route).proto
    except Exception as exc:  # noqa: BLE001
        result["suite"] = {"outcome": f"export: {_line(exc)}"}
    try:
        protos["user"] = user_export(model, args, kwargs, route)
    except Exception as exc:  # noqa: BLE001
        result["user"] = {"outcome": f"export: {_line(exc)}"}
    for side, proto in protos.items():
        outcome, outputs = run_in_aidge(proto, inputs)
        entry: dict[str, Any] = {"outcome": outcome, **graph_summary(proto)}
        if outputs is not None:
            entry["matches_torch"], entry["max_abs_diff"] = _matches(outputs, expected)
        result[side] = entry
    suite_ok = result.get("suite", {}).get("outcome") == "ok"
    user_ok = result.get("user", {}).get("outcome") == "ok"
    result["differs"] = suite_ok != user_ok or (suite_ok and user_ok and result["suite"].get("matches_torch")
                                                != result["user"].get("matches_torch"))
    if "suite" in protos and "user" in protos:
        result["graph"] = _diff(graph_summary(protos["suite"]), graph_summary(protos["user"]))
    return result


def _cases():
    """(name, model in eval mode, args, kwargs) for every zoo model and architecture."""
    from ..zoo.models import MODEL_CASES

    import torch

    for case in MODEL_CASES:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(1)
            x = torch.randn(case["input_size"])
        yield case["name"], case["model"]().eval(), (x,), {}
    for arch in ARCHITECTURES:
        try:
            model = arch.build().eval()
        except ImportError:
            continue
        args, kwargs = arch.inputs()
        yield arch.name, model, tuple(args), dict(kwargs)


def _cell(side: dict[str, Any] | None) -> str:
    if not side:
        return "-"
    outcome = side.get("outcome") or side.get("error") or "?"
    if outcome == "ok":
        return "runs, matches torch" if side.get("matches_torch") else \
            f"runs, differs from torch (max {side.get('max_abs_diff', float('nan')):.3g})"
    return outcome.replace("|", "/")[:110]


def format_markdown(rows: list[dict[str, Any]]) -> str:
    """The table of docs/default-export.md: per model and route, what Aidge does with each export,
    the differences first."""
    rows = sorted(rows, key=lambda r: (not r.get("differs"), r.get("name", ""), r.get("route", "")))
    lines = ["| model | route | differs | the suite's export in Aidge | the user's export in Aidge | graph: suite -> user |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.get('name')} | {r.get('route')} | {'**yes**' if r.get('differs') else 'no'} | "
                     f"{_cell(r.get('suite'))} | {_cell(r.get('user'))} | {r.get('graph', r.get('error', '-'))} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--markdown" in argv:  # format lines written before: --markdown FILE.jsonl
        path = argv[argv.index("--markdown") + 1]
        with open(path, encoding="utf-8") as f:
            sys.stdout.write(format_markdown([json.loads(line) for line in f if line.strip()]))
        return 0
    routes = ["torchscript"] if "--dynamo" not in argv else ["torchscript", "dynamo"]
    rows = []
    for name, model, args, kwargs in _cases():
        for route in routes:
            try:
                row = run_isolated(compare_exports, model, args, kwargs, route, timeout=600)
            except Exception as exc:  # noqa: BLE001 - a crash is a row too
                row = {"route": route, "error": _line(exc)}
            row["name"] = name
            rows.append(row)
            sys.stdout.write(json.dumps(row, default=str) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
