"""What the records plugin (:mod:`interop.records.plugin`) reads of one test: its case's fields (read
from the Case, never parsed from its id: :func:`case_fields`), its export routes (:func:`route_fields`),
a skip's reason, the signal that ended a dead xdist worker, and its outcome from its per-phase statuses."""
from __future__ import annotations

import signal as _signal
from typing import Any

import pytest

from ..cases.case import Case
from .classify import entry_fields
from .plugin_session import config_backend
from .sources import caseless_fields


def _case_of(item: pytest.Item) -> tuple[Any, str | None]:
    """(the Case the test runs, its backend). The fixture values come first: an operator case's
    fixture holds the case as it runs (on the backend under test, with that backend's expected
    failure), its parameter the catalog's (``cpu``). The backend: the case run's (an operator
    that forces its own), else the ``aidge_backend`` fixture's, else None (the ``--backend``)."""
    funcargs = getattr(item, "funcargs", {}) or {}
    values = list(funcargs.values()) + list(getattr(getattr(item, "callspec", None), "params", {}).values())
    for value in values:
        inner = value if isinstance(value, Case) else getattr(value, "case", None)
        if isinstance(inner, Case):
            backend = None if isinstance(value, Case) else getattr(value, "backend", None)
            fixture = funcargs.get("aidge_backend")
            return inner, backend or (fixture if isinstance(fixture, str) else None)
    return None, None


def case_fields(item: pytest.Item) -> dict[str, Any]:
    """The record's fields of the test's case, read from the case object (issue 46: nothing is
    parsed back from its id): source, case id, kind, operator, torch operator, label, dtype,
    backend, phases. A test that runs no case (a unit test, a tensor test) is named by its file
    and its test name (:func:`~interop.records.sources.caseless_fields`)."""
    case, backend = _case_of(item)
    if case is None:
        return caseless_fields(item.nodeid)
    config_file = case.source if isinstance(case.source, str) and case.source.endswith(".json") else None
    out: dict[str, Any] = dict(
        source=case.suite, case=case.id, kind=case.kind, operator=case.operator or None, torch_op=case.torch_op,
        label=case.label, aidge_types=list(case.aidge_types), config_file=config_file, case_key=case.path or None,
        backend=backend or config_backend(item.config), dtype=case.dtype, phases=list(case.phases))
    if case.expected_failure is not None:
        out["expected"] = entry_fields(case.expected_failure)
    return out


def _fields_or_error(item: pytest.Item) -> dict[str, Any]:
    try:
        return case_fields(item)
    except Exception as exc:  # a record without case fields rather than a lost test
        return {"fields_error": f"{type(exc).__name__}: {exc}"}


def _skip_reason(report) -> str | None:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
        return reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason
    return str(longrepr) if longrepr else None


def _signal_of(worker) -> str | None:
    """The signal that ended an xdist worker (its process is a child of the controller)."""
    popen = getattr(getattr(getattr(worker, "gateway", None), "_io", None), "popen", None)
    if popen is None:
        return None
    try:
        code = popen.wait(timeout=10)
    except Exception:
        return None
    if code is None or code >= 0:
        return None
    try:
        return _signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _new_state() -> dict[str, Any]:
    """What the plugin gathers of one test while it runs: its reports, its exception, its case,
    the export routes its wraps took (:func:`interop.exporters.export_routes`)."""
    return {"reports": [], "exc": None, "fields": {}, "routes": [], "notes": {}}


def route_fields(routes: list, exporter: str) -> dict[str, Any]:
    """The record's export fields: ``exporter`` (the session's choice), ``export_route`` (the
    route of the test's first export: the graph its case ran; None when no route exported),
    ``export_failed_routes`` (route -> torch's error, first line, for the routes that export
    tried and failed), ``onnx_nodes`` (the node count of the graph that route made)."""
    out: dict[str, Any] = {"exporter": exporter}
    if routes:
        route, failed, nodes = (tuple(routes[0]) + (None,))[:3]
        out["export_route"] = route
        if nodes is not None:
            out["onnx_nodes"] = nodes
        if failed:
            out["export_failed_routes"] = {r: (e.strip().splitlines() or [""])[0][:300] for r, e in failed.items()}
    return out


def _statuses(reports: Any) -> bool:
    """Whether ``reports`` is the plugin's list of per-phase statuses (what :func:`_outcome` reads)."""
    return isinstance(reports, list) and all(isinstance(r, dict) and isinstance(r.get("status"), (str, type(None)))
                                             for r in reports)


def _outcome(reports: list[dict[str, Any]]) -> str:
    """The test's outcome: its first status other than passed (pytest's words), else passed."""
    statuses = [r["status"] for r in reports if r["status"]]
    return next((s for s in statuses if s != "passed"), "passed" if statuses else "error")
