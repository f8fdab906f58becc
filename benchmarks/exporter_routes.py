"""torch's two routes to ONNX side by side, through the bridge (a script, not an asv module).

    python benchmarks/exporter_routes.py [--only REGEX] [--repeat N] [--architectures]

For each model, in eval mode, and each route (``torchscript``, ``dynamo``), in one process on one
thread: the export alone (:func:`interop.bridge.onnx_export.export_to_onnx`, the median of
``--repeat`` exports, in ms) and its ONNX node count, then ``interop.wrap(model, ...,
exporter=route)`` (import + compile in Aidge) and one forward compared with torch (the largest
absolute difference over the output leaves), or the first error: its phase, the Aidge operator
and node, the first line of the message. Models: the four reference rows of docs/exporters.md
(LeNet-5, ``nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0)``, a tiny
``GPT2Model``, a tiny ``BertModel``), the model zoo, and with ``--architectures`` every entry of
:data:`interop.zoo.architectures.ARCHITECTURES`. The last lines total the zoo's export time per
route and their ratio (what ``exporter="auto"``'s order rests on). Prints one Markdown table.
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _reference_rows():
    import torch

    from interop.zoo.architectures import architecture
    from interop.zoo.models import model_case

    def encoder_layer():
        torch.manual_seed(0)
        return torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0)

    def tokens():
        return (torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(1)),), {"return_dict": False}

    lenet = model_case("LeNet")
    return [
        ("LeNet-5", lenet["model"], lambda: ((torch.randn(lenet["input_size"]),), {})),
        ("nn.TransformerEncoderLayer", encoder_layer, lambda: ((torch.randn(2, 5, 16),), {})),
        ("tiny GPT2Model", architecture("transformers_GPT2Model").build, lambda: (tokens()[0], {"return_dict": False, "use_cache": False})),
        ("tiny BertModel", architecture("transformers_BertModel").build, tokens),
    ]


def _zoo_rows():
    import torch

    from interop.zoo.models import MODEL_CASES

    return [(f"zoo {c['name']}", c["model"], (lambda c=c: ((torch.randn(c["input_size"]),), {}))) for c in MODEL_CASES]


def _architecture_rows():
    from interop.zoo.architectures import ARCHITECTURES

    return [(a.name, a.build, a.inputs) for a in ARCHITECTURES]


def measure(name, build, example, route: str, repeat: int) -> dict:
    """One row: export time and nodes, then wrap + one forward against torch."""
    import torch
    from torch.utils import _pytree as pytree

    import interop
    from interop.bridge.onnx_export import export_to_onnx
    from interop.equivalence.verdict import as_module

    model = build().eval()
    args, kwargs = example()
    module, tensors = as_module(model, args, kwargs)
    row = {"model": name, "route": route}
    times = []
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            exported = export_to_onnx(module, [t.detach() for t in tensors], exporter=route)
            times.append(time.perf_counter() - start)
    except interop.InteropError as exc:
        row.update(exports="no", blocked=_first_line(exc))
        return row
    row.update(exports="yes", export_ms=statistics.median(times) * 1e3, samples=len(times),
               nodes=len(exported.proto.graph.node))
    try:
        aidge = interop.wrap(model, example_inputs=list(args), example_kwargs=kwargs or None, exporter=route)
        row["imports"] = "ok"
        with torch.no_grad():
            got = pytree.tree_leaves(aidge(*args, **kwargs))
            want = pytree.tree_leaves(model(*args, **kwargs))
        diffs = [(g.double() - w.double()).abs().max().item() for g, w in zip(got, want)
                 if isinstance(w, torch.Tensor) and w.is_floating_point() and g.shape == w.shape]
        row["forward"] = f"max abs diff {max(diffs):.2g}" if diffs else "no float output compared"
    except interop.InteropError as exc:
        phase = getattr(exc, "phase", None)
        row["imports"] = "no" if phase in ("import", "compile") else "ok"
        row["forward"] = "-" if row["imports"] == "no" else f"{type(exc).__name__}"
        row["blocked"] = _first_line(exc)
    return row


def _first_line(exc) -> str:
    where = " ".join(x for x in (getattr(exc, "phase", None), getattr(exc, "operator", None)) if x)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"{where}: {text[:150]}" if where else text[:150]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="regex on the model name")
    parser.add_argument("--repeat", type=int, default=3, help="exports timed per model and route (median)")
    parser.add_argument("--architectures", action="store_true", help="also every entry of ARCHITECTURES")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    rows = _reference_rows() + _zoo_rows() + (_architecture_rows() if args.architectures else [])
    if args.only:
        rows = [r for r in rows if re.search(args.only, r[0])]
    out = ["| model | route | exports | export ms (median) | nodes | Aidge import | forward | blocked by |",
           "|---|---|---|---|---|---|---|---|"]
    zoo = {"torchscript": 0.0, "dynamo": 0.0}
    for name, build, example in rows:
        for route in ("torchscript", "dynamo"):
            r = measure(name, build, example, route, args.repeat)
            if name.startswith("zoo ") and "export_ms" in r:
                zoo[route] += r["export_ms"]
            ms = f"{r['export_ms']:.0f} (n={r['samples']})" if "export_ms" in r else ""
            out.append(f"| {name} | {route} | {r['exports']} | {ms} | {r.get('nodes', '')} | {r.get('imports', '')} | "
                       f"{r.get('forward', '')} | {r.get('blocked', '').replace('|', '/')} |")
    sys.stdout.write("\n".join(out) + "\n")
    if zoo["torchscript"]:
        sys.stdout.write(f"\nzoo export time, sum of medians: torchscript {zoo['torchscript']:.0f} ms, dynamo "
                         f"{zoo['dynamo']:.0f} ms, dynamo/torchscript x{zoo['dynamo'] / zoo['torchscript']:.1f}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
