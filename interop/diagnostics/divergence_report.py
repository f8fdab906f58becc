"""What :func:`~interop.diagnostics.divergence.localize_divergence` returns, and how it reads.

A :class:`DivergenceReport` holds one :class:`LayerDivergence` row per layer matched on
both sides, the layers found on one side only and the final outputs' mismatches; its text
is a headline, the first diverging layer with where its error starts, and a table::

    Divergence: 1 of 6 layers exceed tolerance (rtol=0.0001, atol=0.0001). First: 'fc1' (Linear)
      'fc1' became Aidge node(s) fc1_Gemm (FC); inputs=ok: the error starts inside this layer
    layer  type    max abs   max rel   inputs
    conv1  Conv2d  0         0         ok
    fc1    Linear  0.213     0.457     ok      <- exceeds

:func:`hint_line` condenses a report to the one line that
:func:`~interop.diagnostics.divergence.first_divergence_hint` adds to failure messages.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Sequence

from .. import equivalence as compare  # the comparator (interop.equivalence re-exports it)

__all__ = [
    "LayerDivergence",
    "DivergenceReport",
    "DivergenceError",
    "hint_line",
]


@dataclasses.dataclass
class LayerDivergence:
    """One layer compared on both sides."""

    layer: str  # the layer's name in model_a ("<root>" for a leaf root module)
    type: str  # torch module type (or Aidge node types for an Aidge reference)
    counterpart: str  # what it was compared with in model_b
    max_abs: float
    max_rel: float
    exceeds: bool
    inputs_ok: bool | None  # None: the inputs could not be compared
    note: str = ""
    mismatch: compare.Mismatch | None = None

    @property
    def inputs(self) -> str:
        return {True: "ok", False: "DIFF", None: "?"}[self.inputs_ok]


@dataclasses.dataclass
class DivergenceReport:
    """Layer-by-layer comparison of ``model_a`` (reference) and ``model_b``."""

    name_a: str
    name_b: str
    rtol: float
    atol: float
    layers: list[LayerDivergence]
    only_in_a: list[str]
    only_in_b: list[str]
    output_mismatches: list[compare.Mismatch]

    @property
    def diverging(self) -> list[LayerDivergence]:
        return [row for row in self.layers if row.exceeds]

    @property
    def first(self) -> LayerDivergence | None:
        """The first layer (in model_a's execution order) beyond tolerance, or None."""
        rows = self.diverging
        return rows[0] if rows else None

    @property
    def diverged(self) -> bool:
        return bool(self.diverging or self.output_mismatches)

    @property
    def headline(self) -> str:
        tol = f"rtol={self.rtol:g}, atol={self.atol:g}"
        n, bad = len(self.layers), self.diverging
        outputs = "the final outputs differ" if self.output_mismatches else "the final outputs are close"
        if not self.layers:
            return (f"Divergence unknown: no layer of {self.name_a} could be matched in {self.name_b}; "
                    f"{outputs} ({tol})")
        if bad:
            first = bad[0]
            return (f"Divergence: {len(bad)} of {n} layers exceed tolerance ({tol}). "
                    f"First: {first.layer!r} ({first.type})")
        if self.output_mismatches:
            return (f"Divergence outside the matched layers: all {n} matched layers are within tolerance "
                    f"({tol}) but the final outputs differ: look at functional operations between layers "
                    f"and at the layers found on one side only")
        return f"No divergence: {n} of {n} layers within tolerance ({tol}); {outputs}"

    def __str__(self) -> str:
        lines = [self.headline]
        first = self.first
        if first is not None:
            where = ("the error starts inside this layer" if first.inputs_ok else
                     "the difference entered before this layer (in an unmatched operation)"
                     if first.inputs_ok is False else "its inputs could not be compared")
            lines.append(f"  {first.layer!r} -> {first.counterpart}; inputs={first.inputs}: {where}")
        if self.layers:
            lines.append("")
            lines += _table(self.layers)
        if self.only_in_a:
            lines.append(f"Only in {self.name_a}: {', '.join(self.only_in_a)}")
        if self.only_in_b:
            lines.append(f"Only in {self.name_b}: {', '.join(self.only_in_b)}")
        if self.output_mismatches:
            worst = max((m.max_abs for m in self.output_mismatches if m.max_abs is not None), default=math.nan)
            lines.append(f"Final outputs: {len(self.output_mismatches)} mismatch(es), max abs {_num(worst)}")
        return "\n".join(lines)

    def raise_if_diverged(self) -> None:
        if self.diverged:
            raise DivergenceError(self)


class DivergenceError(AssertionError):
    def __init__(self, report: DivergenceReport):
        self.report = report
        super().__init__(str(report))


def _num(x: float | None) -> str:
    if x is None:
        return "-"
    if x == 0:
        return "0"
    return f"{x:.3g}"


def _table(rows: Sequence[LayerDivergence]) -> list[str]:
    header = ["layer", "type", "max abs", "max rel", "inputs"]
    body = [[r.layer, r.type, _num(r.max_abs), _num(r.max_rel), r.inputs] for r in rows]
    widths = [max(len(str(c[i])) for c in [header, *body]) for i in range(len(header))]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    for row, cells in zip(rows, body):
        line = "  ".join(c.ljust(w) for c, w in zip(cells, widths))
        extra = []
        if row.exceeds:
            extra.append("<- exceeds")
        if row.note:
            extra.append(f"({row.note})")
        out.append((line + ("  " + " ".join(extra) if extra else "")).rstrip())
    return out


def hint_line(report: DivergenceReport) -> str:
    """One line naming the report's first diverging layer and its counterpart; ``""`` when
    no layer exceeds tolerance and nothing says the layers could not be matched."""
    first = report.first
    if first is None:
        if report.output_mismatches and not report.layers:
            return "First diverging layer: unknown (no layer could be matched to an Aidge node)"
        return ""
    return (f"First diverging layer: {first.layer!r} ({first.type}) -> {first.counterpart}: "
            f"max abs {_num(first.max_abs)}, max rel {_num(first.max_rel)}, inputs={first.inputs} "
            f"({len(report.diverging)} of {len(report.layers)} layers exceed "
            f"rtol={report.rtol:g}, atol={report.atol:g})")
