"""torch's two routes to ONNX side by side, through the bridge (a script, not an asv module).

    python tools/exporter_routes.py [--only REGEX] [--repeat N]

Models, each in eval mode: the four reference rows of docs/exporters.md (LeNet-5 of the zoo,
``nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0)`` on (2, 5, 16), a tiny
``GPT2Model`` and a tiny ``BertModel``: the entries ``transformers_GPT2Model`` and
``transformers_BertModel`` of :data:`interop.zoo.architectures.ARCHITECTURES`), the model zoo
(:data:`interop.zoo.models.MODEL_CASES`, random float inputs of each entry's ``input_size``),
and every entry of ``ARCHITECTURES`` with its example call. ``--only`` keeps the models whose
name matches the regex.

For each model and each route (``torchscript``, ``dynamo``), serially, in one process, on one
thread:

- the export alone: :func:`interop.bridge.onnx_export.export_to_onnx` of the module ``wrap``
  exports (the model, or the model bound to its call, :class:`interop.bridge.binding.BoundModule`,
  when the call has keyword arguments or the forward optional parameters), timed ``--repeat``
  times (default 3; the median, in ms) after one untimed warm-up export per route, and the
  ONNX node count;
- ``interop.wrap(model, example_inputs=..., example_kwargs=..., exporter=route)`` (export
  again, import and compile in Aidge), then one forward compared with torch's forward on the
  same inputs: the largest absolute difference of the first output leaf;
- or the first error: its class, phase, Aidge operator and node, and the first line of its
  message (an export error's ``aten::`` operator when torch names one).

Output: one Markdown table, then one line totalling the zoo's export time per route (sums of
the medians, over the zoo models that both routes export) and their ratio. Nothing else is
printed: warnings and library logging are silenced in this process.
"""
from __future__ import annotations

import argparse
import logging
import re
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROUTES = ("torchscript", "dynamo")


# --- the models --------------------------------------------------------------------------------
def _seeded(factory, seed: int = 0):
    """``factory()`` under ``seed``, the global RNG left as it was."""
    def build():
        import torch

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return factory()
    return build


def _random_input(shape, seed: int = 1):
    def make():
        import torch

        return (torch.randn(*shape, generator=torch.Generator().manual_seed(seed)),), {}
    return make


def _reference_rows():
    import torch

    from interop.zoo.architectures import architecture
    from interop.zoo.models import model_case

    lenet = model_case("LeNet")
    gpt2, bert = architecture("transformers_GPT2Model"), architecture("transformers_BertModel")
    encoder_layer = _seeded(lambda: torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0))
    return [
        ("LeNet-5", lenet["model"], _random_input(lenet["input_size"])),
        ("nn.TransformerEncoderLayer(16, 2, 32, batch_first)", encoder_layer, _random_input((2, 5, 16))),
        ("tiny GPT2Model", gpt2.build, gpt2.inputs),
        ("tiny BertModel", bert.build, bert.inputs),
    ]


def _zoo_rows():
    from interop.zoo.models import MODEL_CASES

    return [(f"zoo {c['name']}", c["model"], _random_input(c["input_size"])) for c in MODEL_CASES]


def _architecture_rows():
    from interop.zoo.architectures import ARCHITECTURES

    return [(a.name, a.build, a.inputs) for a in ARCHITECTURES]


# --- one row -----------------------------------------------------------------------------------
def exported_module(model, args, kwargs):
    """``(module, tensors)``: what ``wrap`` exports for the call ``model(*args, **kwargs)`` and
    the graph's input tensors (interop/bridge/wrapping.py)."""
    import torch
    from torch.utils import _pytree as pytree

    from interop.bridge.binding import BoundModule, CallBinding, needs_binding

    if needs_binding(model, len(args), kwargs):
        detach = lambda t: t.detach().cpu()  # noqa: E731
        binding = CallBinding(model, pytree.tree_map_only(torch.Tensor, detach, list(args)),
                              pytree.tree_map_only(torch.Tensor, detach, dict(kwargs or {})))
        return BoundModule(model, binding), list(binding.example_tensors)
    return model, [torch.as_tensor(x).detach().cpu() for x in args]


def measure(build, example, route: str, repeat: int) -> dict:
    """One row: the export's time and node count, then wrap and one forward against torch."""
    import torch
    from torch.utils import _pytree as pytree

    import interop
    from interop.bridge.onnx_export import export_to_onnx

    model = build().eval()
    args, kwargs = example()
    row: dict = {}
    times = []
    try:
        module, tensors = exported_module(model, args, kwargs)
        for _ in range(repeat):
            start = time.perf_counter()
            exported = export_to_onnx(module, tensors, exporter=route)
            times.append(time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - the row reports it
        row.update(exports="no", blocked=describe(exc))
        return row
    row.update(exports="yes", export_ms=statistics.median(times) * 1e3, nodes=len(exported.proto.graph.node))
    try:
        aidge = interop.wrap(model, example_inputs=list(args), example_kwargs=kwargs or None, exporter=route)
    except Exception as exc:  # noqa: BLE001
        row.update(imports=f"no ({getattr(exc, 'phase', None) or type(exc).__name__})", forward="-",
                   blocked=describe(exc))
        return row
    row["imports"] = "yes"
    try:
        with torch.no_grad():
            want = pytree.tree_leaves(model(*args, **kwargs))[0]
            got = pytree.tree_leaves(aidge(*args, **kwargs))[0]
        if tuple(got.shape) != tuple(want.shape):
            row["forward"] = f"shape {tuple(got.shape)} vs torch {tuple(want.shape)}"
        else:
            diff = (got.detach().double() - want.detach().double()).abs().max().item()
            row["forward"] = f"max abs diff {diff:.2g}"
    except Exception as exc:  # noqa: BLE001
        operator = getattr(exc, "operator", None)
        row.update(forward=f"{type(exc).__name__}{f' ({operator})' if operator else ''}", blocked=describe(exc))
    return row


_ATEN = re.compile(r"(aten::\w+(?:\.\w+)?)")


def describe(exc: BaseException) -> str:
    """``Class (phase, operator, node 'x'): first line of the message``."""
    phase = getattr(exc, "phase", None)
    operator = getattr(exc, "operator", None)
    node = getattr(exc, "node", None)
    text = str(getattr(exc, "aidge_message", None) or exc).strip()
    text = re.sub(r"^torch\.onnx\.export failed for \w+ \(\w+ route\): ", "", text)  # the row says both
    if operator is None and phase == "export":
        found = _ATEN.search(text)
        operator = found.group(1) if found else None
    where = ", ".join(x for x in (phase, operator, f"node {node!r}" if node else None) if x)
    first = text.splitlines()[0] if text else ""
    first = first if len(first) <= 160 else first[:157] + "..."
    return f"{type(exc).__name__}{f' ({where})' if where else ''}: {first}"


def _cell(value) -> str:
    return str(value).replace("|", "/").replace("\n", " ")


# --- the table ---------------------------------------------------------------------------------
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="keep the models whose name matches this regex")
    parser.add_argument("--repeat", type=int, default=3, help="exports timed per model and route (median)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    import torch

    torch.set_num_threads(1)
    rows = _reference_rows() + _zoo_rows() + _architecture_rows()
    if args.only:
        rows = [r for r in rows if re.search(args.only, r[0])]

    # one untimed export per route first: the route's one-time costs (imports, registries)
    from interop.bridge.onnx_export import export_to_onnx

    _, warm_build, warm_example = _reference_rows()[0]
    for route in ROUTES:
        export_to_onnx(warm_build().eval(), list(warm_example()[0]), exporter=route)

    out = [f"| model | route | exports | export ms (median of {args.repeat}) | nodes | Aidge import+compile | "
           f"forward (first output: max abs diff, or the error) | first blocking node |",
           "|---|---|---|---|---|---|---|---|"]
    zoo: dict[str, dict[str, float]] = {route: {} for route in ROUTES}
    for name, build, example in rows:
        for route in ROUTES:
            r = measure(build, example, route, args.repeat)
            if name.startswith("zoo ") and "export_ms" in r:
                zoo[route][name] = r["export_ms"]
            ms = f"{r['export_ms']:.0f}" if "export_ms" in r else ""
            out.append("| " + " | ".join(_cell(v) for v in (
                name, route, r["exports"], ms, r.get("nodes", ""), r.get("imports", "-" if r["exports"] == "no" else ""),
                r.get("forward", "-" if r["exports"] == "no" else ""), r.get("blocked", ""))) + " |")
    both = [n for n in zoo["torchscript"] if n in zoo["dynamo"]]
    if both:
        ts = sum(zoo["torchscript"][n] for n in both)
        dyn = sum(zoo["dynamo"][n] for n in both)
        out.append("")
        out.append(f"zoo export time ({len(both)} models exported by both routes, sums of medians): torchscript "
                   f"{ts:.0f} ms, dynamo {dyn:.0f} ms, dynamo/torchscript x{dyn / ts:.1f}")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
