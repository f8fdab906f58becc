"""The changelog of the expected-failure table from one Aidge release to another, as defects
(:func:`release_diff`, ``python -m interop.triage diff OLD NEW``). Part of the table triage (:mod:`.triage_propose`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..categories import row_attribution
from ..cases import failure_table as ft
from ..registry.identify import identify_row

__all__ = ["release_diff"]


def release_diff(old: str, new: str, table_dir: str | Path | None = None, backend: str | None = "cpu",
                 all_runs: bool = False) -> str:
    """Markdown: the changelog from Aidge ``old`` to ``new`` as defects (:mod:`.ledger`): each row
    names its defect (a row that names none: the id of its own signature, :func:`interop.registry.identify.row_signature`).
    A defect is *fixed* when rows of it hold on ``old`` and none on ``new``, *new* when the reverse,
    *changed* when it holds on both but its rows differ (reworded, cases added or gone), and holds
    otherwise. Over the rows of ``backend`` (None: all) and of the default run (``all_runs``: the rows
    of other runs too, such as an OpInfo shard's), so that only what both releases were measured on
    is compared; the rows attributed to the export or to precision are no Aidge defect and are left out."""
    every = ft.load_table(table_dir)
    table = [e for e in every if (all_runs or not e.run) and row_attribution(e.attribution, e.category, e.phase) == "aidge" and (
        backend is None or e.backend is None or backend == e.backend
        or (isinstance(e.backend, tuple) and backend in e.backend))]
    # only the sources both releases' runs were checked on (a source with rows for each of them)
    checked = {e.kind for e in table if ft.release_matches(e.aidge, old)} & \
        {e.kind for e in table if ft.release_matches(e.aidge, new)}
    unchecked = sorted({e.kind for e in table} - checked)
    table = [e for e in table if e.kind in checked]
    defects: dict[str, dict[str, Any]] = {}
    for e in table:
        ident = identify_row(e)
        did = ident["id"]
        d = defects.setdefault(did, {"id": did, "title": ident["title"], "component": ident["component"],
                                     "old": [], "new": []})
        for release, key in ((old, "old"), (new, "new")):
            if ft.release_matches(e.aidge, release):
                d[key].append(e)
    fixed = [d for d in defects.values() if d["old"] and not d["new"]]
    added = [d for d in defects.values() if d["new"] and not d["old"]]
    both = [d for d in defects.values() if d["old"] and d["new"]]
    changed = [d for d in both if {id(e) for e in d["old"]} != {id(e) for e in d["new"]}]
    n_old = sum(1 for d in defects.values() if d["old"])
    n_new = sum(1 for d in defects.values() if d["new"])
    rows_old = sum(len(d["old"]) for d in defects.values())
    rows_new = sum(len(d["new"]) for d in defects.values())
    lines = [f"Aidge defects on {old}: {n_old} ({rows_old} rows); on {new}: {n_new} ({rows_new} rows). "
             f"Fixed in {new}: {len(fixed)}; new in {new}: {len(added)}; holding on both: {len(both)}, "
             f"{len(changed)} of them changed"
             + (f" (backend {backend}" if backend else " (every backend")
             + (", every run" if all_runs else ", the default run's rows; the rows of other runs, such as the full "
                                               "OpInfo run's shard, are left out")
             + f"; the {sum(1 for e in every if (e.attribution or 'aidge') != 'aidge')} rows attributed to the export "
               f"or to precision are no Aidge defect). Sources compared: {', '.join(sorted(checked))}"
             + (f"; left out, as no run of {old} checked them: {', '.join(unchecked)}" if unchecked else "")
             + f". Table: {len(every)} rows in all.", ""]

    def cases(entries) -> int:
        return sum(len(e.cases) for e in entries)

    def table_of(items, key: str, header: str) -> None:
        lines.append(f"**{header}: {len(items)}**")
        lines.append("")
        if not items:
            return
        lines.extend(["| defect | component | what | rows | selectors | quote |", "|---|---|---|---|---|---|"])
        for d in sorted(items, key=lambda d: (-cases(d[key]), d["id"])):
            e = d[key][0]
            quote = e.quotes[0].replace("|", "\\|")
            quote = quote if len(quote) <= 70 else quote[:67] + "..."
            sources = ", ".join(sorted({x.kind for x in d[key]}))
            lines.append(f"| {d['id']} | {d['component']} | {d['title']} ({sources}) | {len(d[key])} | "
                         f"{cases(d[key])} | {quote} |")
        lines.append("")

    table_of(fixed, "old", f"Defects fixed in {new} (rows of {old}, none on {new})")
    table_of(added, "new", f"Defects new in {new} (rows of {new}, none on {old})")
    lines.append(f"**Defects changed from {old} to {new} (rows of both releases, not the same rows): {len(changed)}**")
    lines.append("")
    if changed:
        lines.extend(["| defect | what | rows on " + old + " | rows on " + new + " | selectors " + old + " -> " + new + " |",
                      "|---|---|---|---|---|"])
        for d in sorted(changed, key=lambda d: (-cases(d["new"]), d["id"])):
            lines.append(f"| {d['id']} | {d['title']} | {len(d['old'])} | {len(d['new'])} | "
                         f"{cases(d['old'])} -> {cases(d['new'])} |")
        lines.append("")
    return "\n".join(lines)
