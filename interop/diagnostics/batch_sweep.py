"""Batch-size sweep: a model wrapped at one batch size, then called at batch+1, batch-1 and
the original batch again, forward and backward, each call checked against torch. The answer
may be right (``match``) or a loud error; a wrong answer without an error is ``SILENT WRONG``,
a dead process ``CRASH``. Each model runs in a forked child (an abort costs only its row).

    python -m interop.diagnostics.batch_sweep          # the zoo and the decoder graphs, a table

Used by ``tests/unit/test_fidelity.py`` (no silent wrong answer, no crash) and quoted in
``docs/fidelity.md``.
"""
from __future__ import annotations

import argparse
import dataclasses
from typing import Callable

import torch
from torch import nn

from ..equivalence.callable_module import as_module, other_inputs
from ..equivalence.isolation import run_isolated
from ..errors import AidgeCrash
from ..oracle.outputs import compare_outputs
from ..oracle.tolerance import SWEEP_SCREEN
from ..zoo.architectures import ARCHITECTURES
from ..zoo.models import MODEL_CASES, build_model

__all__ = ["SweepRow", "sweep_model", "sweep_isolated", "sweep_architecture", "sweep_architecture_isolated", "decoder_graphs", "zoo_graphs", "main"]

#: outcomes of one call
MATCH, LOUD, SILENT, CRASH = "match", "error", "SILENT WRONG", "CRASH"


@dataclasses.dataclass
class SweepRow:
    model: str
    wrapped_at: int
    #: batch -> (forward outcome, backward outcome, detail)
    calls: list[tuple[int, str, str, str]]

    @property
    def silent(self) -> bool:
        return any(SILENT in (f, b) for _, f, b, _ in self.calls)

    @property
    def crashed(self) -> bool:
        return any(CRASH in (f, b) for _, f, b, _ in self.calls)


class _UpsampleConv(nn.Sequential):
    def __init__(self):
        super().__init__(nn.Upsample(scale_factor=2, mode="bilinear"), nn.Conv2d(4, 2, 1))


class _UpsampleGroupNorm(nn.Sequential):
    def __init__(self):
        super().__init__(nn.Upsample(scale_factor=2, mode="nearest"), nn.GroupNorm(2, 4), nn.Conv2d(4, 4, 3, padding=1))


class _SkipDecoder(nn.Module):
    """A U-Net-like step: down, up (nearest), concatenated with the skip, a convolution."""

    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.fuse = nn.Conv2d(11, 4, 3, padding=1)

    def forward(self, x):
        return self.fuse(torch.cat([self.up(torch.relu(self.down(x))), x], dim=1))


class _TransposedDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 6, 3, stride=2, padding=1)
        self.dec = nn.ConvTranspose2d(6, 3, 2, stride=2)

    def forward(self, x):
        return torch.sigmoid(self.dec(torch.relu(self.enc(x))))


def decoder_graphs() -> list[tuple[str, Callable[[], nn.Module], tuple[int, ...]]]:
    """Decoder-style graphs: upsampling, GroupNorm after it, skip concatenations."""
    return [("Upsample_bilinear+Conv", _UpsampleConv, (2, 4, 4, 4)),
            ("Upsample_nearest+GroupNorm+Conv", _UpsampleGroupNorm, (2, 4, 4, 4)),
            ("SkipDecoder (down, up, cat)", _SkipDecoder, (2, 3, 8, 8)),
            ("ConvTranspose decoder", _TransposedDecoder, (2, 3, 8, 8))]


def zoo_graphs() -> list[tuple[str, Callable[[], nn.Module], tuple[int, ...]]]:
    return [(spec["name"], (lambda spec=spec: build_model(spec["model"])), tuple(spec["input_size"]))
            for spec in MODEL_CASES]


def _outcome(fn) -> tuple[str, str]:
    try:
        got, want = fn()
    except Exception as exc:  # noqa: BLE001 - a loud error is an acceptable answer
        return LOUD, f"{type(exc).__name__}: {str(exc).splitlines()[0][:150]}"
    if isinstance(want, str):  # torch itself refused
        return LOUD, want
    mismatches = compare_outputs(got, want, rtol=SWEEP_SCREEN.rtol, atol=SWEEP_SCREEN.atol, name="output")
    if mismatches:
        return SILENT, mismatches[0].message.splitlines()[0][:150]
    return MATCH, ""


def sweep_model(name: str, factory: Callable[[], nn.Module], size: tuple[int, ...], *, train: bool = False,
                seed: int = 0) -> SweepRow:
    """Wrap ``factory()`` (eval mode unless ``train``) at ``size``; call at the original batch,
    batch+1, batch-1 (when >= 1) and the original again; forward then input gradient."""
    from ..bridge import wrap

    model = factory().train(train)
    am = wrap(model, size)
    batch = size[0]
    gen = torch.Generator().manual_seed(seed)
    calls = []
    for b in [batch, batch + 1, batch - 1, batch]:
        if b < 1:
            continue
        x = torch.randn((b, *size[1:]), generator=gen)

        def forward(x=x):
            return am(x), model(x)

        def backward(x=x):
            xa, xt = x.clone().requires_grad_(), x.clone().requires_grad_()
            out_a, out_t = am(xa), model(xt)
            grad = torch.randn(out_t.shape, generator=torch.Generator().manual_seed(1))
            out_t.backward(grad)
            out_a.backward(grad)
            return xa.grad, xt.grad

        f, f_detail = _outcome(forward)
        bw, b_detail = _outcome(backward) if f == MATCH else ("-", "")
        calls.append((b, f, bw, f_detail or b_detail))
    return SweepRow(name, batch, calls)


def sweep_isolated(name: str, factory, size, **kwargs) -> SweepRow:
    """:func:`sweep_model` in a forked child: a crash is a ``CRASH`` row, not the end."""
    try:
        return run_isolated(sweep_model, name, factory, size, timeout=600, **kwargs)
    except AidgeCrash as exc:  # the child died: a CRASH row
        return SweepRow(name, size[0], [(size[0], CRASH, CRASH, str(exc).splitlines()[0][:150])])
    except Exception as exc:  # noqa: BLE001 - raised before any call (the model, wrap()): loud, not a crash
        return SweepRow(name, size[0], [(size[0], LOUD, "-", f"{type(exc).__name__}: {str(exc).splitlines()[0][:150]}")])


def _grow_batch(args, kwargs, extra: int):
    """The call ``(args, kwargs)`` with every batched tensor grown by ``extra`` rows along dim 0
    (its first rows repeated): the same call at batch+``extra``."""
    from torch.utils import _pytree as pytree

    def grow(t):
        if t.dim() == 0:
            return t
        return torch.cat([t, t[:extra]], 0) if extra <= t.shape[0] else t
    return pytree.tree_map_only(torch.Tensor, grow, (args, kwargs))


def _second_input(args, kwargs, seed: int):
    """Another input of the same shapes: float tensors drawn anew, token ids shifted by one (mod
    their largest value + 1), masks kept."""
    from torch.utils import _pytree as pytree

    gen = torch.Generator().manual_seed(seed)

    def other(t):
        if t.is_floating_point():
            return torch.randn(t.shape, generator=gen, dtype=t.dtype)
        if t.dtype == torch.int64 and t.numel() and int(t.max()) > 1:
            return (t + 1) % (int(t.max()) + 1)
        return t
    return pytree.tree_map_only(torch.Tensor, other, (args, kwargs))


def sweep_architecture(arch, *, exporter: str | None = None) -> SweepRow:
    """An architecture of :data:`interop.zoo.architectures.ARCHITECTURES` wrapped (eval) at its
    example call, then called at the same batch, at batch+1 and on a second input of the
    wrapped shapes; each forward compared with torch's on the same call (every output leaf)."""
    from ..bridge import wrap

    model = arch.build().eval()
    args, kwargs = arch.inputs()
    tensors = [t for t in (*args, *kwargs.values()) if isinstance(t, torch.Tensor)]
    batch = tensors[0].shape[0] if tensors and tensors[0].dim() else 1
    am = wrap(model, example_inputs=list(args), example_kwargs=kwargs or None, exporter=exporter)
    calls = []
    for label, (a, kw) in (("same", (args, kwargs)), ("batch+1", _grow_batch(args, kwargs, 1)),
                           ("second input", _second_input(args, kwargs, 7))):
        def forward(a=a, kw=kw):
            from torch.utils import _pytree as pytree

            with torch.no_grad():
                want = model(*a, **kw)
                got = am(*a, **kw)
            leaves = lambda o: [x for x in pytree.tree_leaves(o) if isinstance(x, torch.Tensor)]  # noqa: E731
            return leaves(got), leaves(want)

        f, detail = _outcome(forward)
        b = batch + 1 if label == "batch+1" else batch
        calls.append((b, f, "-", f"{label}: {detail}" if detail else label))
    return SweepRow(arch.name, batch, calls)


def sweep_architecture_isolated(arch, **kwargs) -> SweepRow:
    """:func:`sweep_architecture` in a forked child (a crash is a ``CRASH`` row)."""
    try:
        return run_isolated(sweep_architecture, arch, timeout=900, **kwargs)
    except AidgeCrash as exc:
        return SweepRow(arch.name, 0, [(0, CRASH, CRASH, str(exc).splitlines()[0][:150])])
    except Exception as exc:  # noqa: BLE001 - raised before any call (build, wrap()): loud, not a crash
        return SweepRow(arch.name, 0, [(0, LOUD, "-", f"{type(exc).__name__}: {str(exc).splitlines()[0][:150]}")])


def sweep_moduleinfo_case(case) -> SweepRow:
    """A ModuleInfo case of the default selection (:func:`interop.cases.moduleinfo.moduleinfo_cases`)
    wrapped at its sample (its tensor arguments the graph's inputs, in its mode), called at the
    same batch, at batch+1 and on a second input (the sample's float values permuted, as
    ``verify``'s second call does), each forward compared with torch's on the same call."""
    from ..bridge import wrap
    from ..cases.moduleinfo import moduleinfo_sample

    module, args, kwargs = moduleinfo_sample(case)
    fn, tensors = as_module(module, args, kwargs)
    batch = tensors[0].shape[0] if tensors and tensors[0].dim() else 0
    am = wrap(fn, example_inputs=[t.detach() for t in tensors])
    calls = []
    for label, xs in (("same", tensors), ("batch+1", list(_grow_batch(tuple(tensors), {}, 1)[0])),
                      ("second input", other_inputs(tensors))):
        def forward(xs=xs):
            from torch.utils import _pytree as pytree

            with torch.no_grad(), torch.random.fork_rng(devices=[]):
                try:
                    want = fn(*[x.detach() for x in xs])
                except Exception as exc:  # noqa: BLE001 - torch refuses these inputs itself
                    return None, f"torch refuses: {type(exc).__name__}"
                got = am(*[x.detach() for x in xs])
            leaves = lambda o: [x for x in pytree.tree_leaves(o) if isinstance(x, torch.Tensor)]  # noqa: E731
            return leaves(got), leaves(want)

        f, detail = _outcome(forward)
        calls.append((batch + 1 if label == "batch+1" else batch, f, "-", f"{label}: {detail}" if detail else label))
    return SweepRow(case.id, batch, calls)


def sweep_moduleinfo_isolated(case) -> SweepRow:
    """:func:`sweep_moduleinfo_case` in a forked child (a crash is a ``CRASH`` row)."""
    try:
        return run_isolated(sweep_moduleinfo_case, case, timeout=300)
    except AidgeCrash as exc:
        return SweepRow(case.id, 0, [(0, CRASH, CRASH, str(exc).splitlines()[0][:150])])
    except Exception as exc:  # noqa: BLE001 - raised before any call (the sample, wrap()): loud, not a crash
        return SweepRow(case.id, 0, [(0, LOUD, "-", f"{type(exc).__name__}: {str(exc).splitlines()[0][:150]}")])


def format_table(rows: list[SweepRow]) -> str:
    lines = ["| model | wrapped at | called at | forward | backward | detail |", "|---|---|---|---|---|---|"]
    for row in rows:
        for b, f, bw, detail in row.calls:
            lines.append(f"| {row.model} | {row.wrapped_at} | {b} | {f} | {bw} | {detail.replace('|', '/')} |")
    silent = sum(row.silent for row in rows)
    crashed = sum(row.crashed for row in rows)
    lines.append("")
    lines.append(f"{len(rows)} models, {sum(len(r.calls) for r in rows)} calls: {silent} with a silent wrong "
                 f"answer, {crashed} crashed")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m interop.diagnostics.batch_sweep`` (the zoo and the decoder graphs) or
    ``--architectures [NAME ...]`` (the 40 architectures, or those named: wrapped at the example
    call, called at the same batch, at batch+1 and on a second input)."""
    parser = argparse.ArgumentParser(prog="python -m interop.diagnostics.batch_sweep")
    parser.add_argument("--architectures", nargs="*", default=None, metavar="NAME",
                        help="sweep the architectures (all when no name is given) instead of the zoo")
    parser.add_argument("--moduleinfo", action="store_true",
                        help="sweep the ModuleInfo default selection (its cases, as the suite selects them)")
    options = parser.parse_args(argv)
    if options.moduleinfo:
        from ..cases.moduleinfo import moduleinfo_cases

        rows = []
        for case in moduleinfo_cases():
            rows.append(sweep_moduleinfo_isolated(case))
            print(format_table(rows[-1:]).splitlines()[2:][:3], flush=True)
    elif options.architectures is not None:
        wanted = set(options.architectures)
        unknown = wanted - {a.name for a in ARCHITECTURES}
        if unknown:
            parser.error(f"unknown architecture(s): {', '.join(sorted(unknown))}")
        rows = []
        for arch in ARCHITECTURES:
            if wanted and arch.name not in wanted:
                continue
            rows.append(sweep_architecture_isolated(arch))
            print(format_table(rows[-1:]).splitlines()[2:][:3], flush=True)  # progress, one model at a time
    else:
        rows = [sweep_isolated(name, factory, size) for name, factory, size in zoo_graphs() + decoder_graphs()]
    print(format_table(rows))
    return 1 if any(r.silent or r.crashed for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
