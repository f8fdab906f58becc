"""The ledger's pages: ``defects.md`` (:func:`format_ledger_md`) and ``defects.html``
(:func:`format_ledger_html`), rendered from ``templates/defects.md.j2`` and ``defects.html.j2``
(:mod:`.pages`), and the lines they say of a defect's reach from torch (:func:`reached_text`,
:func:`torch_cell`). :mod:`.ledger` builds the entries and re-exports these names."""
from __future__ import annotations

from typing import Any

from .pages import render

__all__ = ["format_ledger_md", "format_ledger_html", "reached_text", "torch_cell"]


def reached_text(e: dict[str, Any]) -> str:
    """One line for a page: whether torch-driven cases reach the entry, how many, and the table's
    torch-driven rows; for an ONNX-only defect, what was measured of torch's exporters."""
    if e.get("reached_from_torch") is None:
        return "-"
    rows = ", ".join(f"{s} {n}" for s, n in (e.get("torch_rows") or {}).items())
    if e["reached_from_torch"]:
        return (f"yes: {e.get('torch_cases') or 0} torch-driven case(s) in this run"
                + (f"; table rows of {rows}" if rows else ""))
    return "no" + (f" (torch's exporters, measured: {e['torch_export']})" if e.get("torch_export") else "")


def torch_cell(e: dict[str, Any]) -> str:
    """The ledger table's "from torch" cell: ``yes N`` (this run's torch-driven cases), ``no``, or ``-``."""
    if e.get("reached_from_torch") is None:
        return "-"
    return f"yes {e.get('torch_cases') or 0}" if e["reached_from_torch"] else "no"


def _view(e: dict[str, Any]) -> dict[str, Any]:
    """What the pages say of one entry, every key present (an entry's optional fields as None)."""
    blocks = e.get("blocks") or {}
    blocked = list(blocks.get("architectures") or []) + list(blocks.get("models") or [])
    said = reached_text(e)
    view = {k: e.get(k) for k in ("id", "title", "component", "kind", "phase", "backend", "dtype", "evidence",
                                  "registered", "known", "new", "error", "aidge_said", "reproducer",
                                  "reproducer_nodes", "repro_line", "issue", "standalone", "since", "rows")}
    return view | {"cases": e.get("cases") or [], "sources": sorted((e.get("sources") or {}).items()),
                   "blocks": blocked, "blocked_count": len(blocked), "releases": e.get("releases") or [],
                   "torch_cell": torch_cell(e), "reached_text": said,
                   "reached": said if e.get("reached_from_torch") is not None else None,
                   "said": e.get("aidge_said") or e.get("error") or ""}


def format_ledger_md(ledger: list[dict[str, Any]], *, complete: bool = True, headline: str | None = None) -> str:
    """defects.md. Every record-borne field goes through :mod:`.text_escape` (prose escaped, quoted
    text in code spans, control characters as escapes): a message's ``<script>``, a ``|`` or an ESC
    byte stays text in the page and in a terminal."""
    by_kind: dict[str, int] = {}
    for e in ledger:
        by_kind[e["kind"]] = by_kind.get(e["kind"], 0) + 1
    news = [_view(e) for e in ledger if (e.get("since") or "").startswith("new since")]
    return render("defects.md.j2", entries=[_view(e) for e in ledger], headline=headline, complete=complete,
                  cases=sum(len(e["cases"]) for e in ledger),
                  by_kind=sorted(by_kind.items(), key=lambda kv: -kv[1]),
                  unexpected=sum(1 for e in ledger if e["new"] and not e["known"]),
                  news=news, news_since=news[0]["since"].capitalize() if news else None)


def format_ledger_html(ledger: list[dict[str, Any]], *, complete: bool = True, headline: str | None = None,
                       title: str = "Aidge defects") -> str:
    """One self-contained page (no script, style or font from the network): a row per defect, with
    an anchor per id (``defects.html#D-xxxxxxxx``), a search box and a filter by kind."""
    return render("defects.html.j2", page="defects.html", title=title, complete=complete, headline=headline,
                  kinds=sorted({e["kind"] for e in ledger}), entries=[_view(e) for e in ledger])
