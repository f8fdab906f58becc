"""torch's two routes to ONNX, by the names ``wrap(exporter=...)``, ``verify``, the suites'
``--exporter`` and asv take, and the collector that tells the records which route a case
took. Names only: nothing here imports torch (the pytest plugin reads it before anything
heavy is imported); the exports themselves are :mod:`interop.bridge.onnx_export`'s.

- ``"torchscript"``: ``torch.onnx.export(dynamo=False)``, the TorchScript tracer;
- ``"dynamo"``: ``torch.onnx.export(dynamo=True)`` (torch 2.13's default; ``torch.export``
  + onnxscript's torchlib);
- ``"auto"``: each route of :data:`AUTO_ORDER` until one exports and (``wrap``, outside a
  harness's ``checks_deferred()``) Aidge takes its graph (docs/exporters.md).
"""
from __future__ import annotations

import contextlib
import os
import threading

from .env import read

__all__ = ["EXPORTERS", "EXPORTER_CHOICES", "AUTO_ORDER", "EXPORTER_ENV", "default_exporter", "check_exporter",
           "export_routes", "note_routes"]

#: torch's two ONNX exporters, by the name ``wrap(exporter=...)`` takes
EXPORTERS = ("torchscript", "dynamo")
#: what ``exporter=`` accepts: a route, or ``"auto"``
EXPORTER_CHOICES = (*EXPORTERS, "auto")
#: the routes ``"auto"`` tries, in order, keeping the first that exports: TorchScript first
#: because it exports the zoo many times faster (docs/exporters.md, measured) and its graphs
#: are the ones the expected-failure table was built on; dynamo where TorchScript fails
#: (``scaled_dot_product_attention``, ``aten::diff``...)
AUTO_ORDER = ("torchscript", "dynamo")
#: the route ``wrap()`` takes when given none (the suites' ``--exporter`` sets it)
EXPORTER_ENV = "INTEROP_EXPORTER"


def check_exporter(exporter: str) -> str:
    """``exporter`` when it is one of :data:`EXPORTER_CHOICES`, else ValueError."""
    if exporter not in EXPORTER_CHOICES:
        raise ValueError(f"exporter must be one of {EXPORTER_CHOICES}, got {exporter!r}")
    return exporter


def default_exporter() -> str:
    """``$INTEROP_EXPORTER`` (checked), else ``"auto"``."""
    return read(EXPORTER_ENV)  # declared in interop.env.VARIABLES: checked there, "auto" when unset


_routes = threading.local()


@contextlib.contextmanager
def export_routes():
    """Collect the route of every export this thread makes inside the block (also those made
    by a child of :func:`~interop.equivalence.isolation.run_isolated`, which sends them back):
    yields a list of ``(route or None, {failed route: error}, ONNX node count or None)``, one
    per export, in order (``None``: no route exported). The records read it to say which route
    a case took and how many nodes its graph has."""
    collected: list[tuple[str | None, dict[str, str], int | None]] = []
    stack = _routes.__dict__.setdefault("stack", [])
    stack.append(collected)
    try:
        yield collected
    finally:
        stack.remove(collected)


@contextlib.contextmanager
def routes_not_collected():
    """Exports made in this thread inside the block reach no collector (a worker's warm-up
    export is no case's)."""
    saved = getattr(_routes, "stack", None)
    _routes.stack = []
    try:
        yield
    finally:
        if saved is None:
            del _routes.stack
        else:
            _routes.stack = saved


def note_routes(entries) -> None:
    """Add export route entries to every collector open in this thread (:func:`export_routes`)."""
    for collected in getattr(_routes, "stack", ()):
        collected.extend(entries)
