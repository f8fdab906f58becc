"""The report's section on Aidge's benchmark configurations (``tests/test_aidge_configs.py``,
case ids ``aidge.<file>_<label path>``): per file, its cases, passes, expected failures by
category, failures, and skips with their reasons (an unmapped operation, a case without a
torch reference, a case that runs at full size only).

A record names its case's file (``config_file``): the section reads it. A saved console output
does not, and a case id does not say where the file name ends (``aidge.conv_transpose2d_shape_N_1``):
there (``guess_files``) the file is the longest ``aidge.<stem>_`` prefix among the stems of the
installed aidge-benchmark package and of ``$INTEROP_AIDGE_CONFIGS``, else the id up to its first
``_`` (a guess: ``relu_mine.json`` and Aidge's ``relu.json`` cannot be told apart). Nothing here
imports torch, Aidge or aidge_benchmark (the package folder is found without importing it).
"""
from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path
from typing import Any

from ..env import read


__all__ = ["aidge_file_rows", "format_aidge_files", "PREFIX"]

PREFIX = "aidge."


def _known_stems() -> set[str]:
    folders = []
    spec = importlib.util.find_spec("aidge_benchmark")
    if spec is not None and spec.submodule_search_locations:
        folders += [Path(p) / "operations_config" for p in spec.submodule_search_locations]

    if (chosen := read("INTEROP_AIDGE_CONFIGS")) is not None:
        folders.append(chosen)
    return {p.stem for folder in folders if folder.is_dir() for p in folder.glob("*.json")}


def _file_of(case: str, stems: set[str]) -> str:
    rest = case[len(PREFIX):]
    matches = [s for s in stems if rest.startswith(s + "_")]
    return max(matches, key=len) if matches else rest.split("_", 1)[0]


def aidge_file_rows(rows: list[dict[str, Any]], *, guess_files: bool = False) -> list[dict[str, Any]]:
    """One row per configuration file met in ``rows`` (records, or console rows with
    ``guess_files``; empty when there is none)."""
    stems = _known_stems() if guess_files else set()
    out: dict[str, dict[str, Any]] = {}
    for result in rows:
        case = result.get("case") or ""
        if not case.startswith(PREFIX):
            continue
        if result.get("config_file"):
            file = Path(result["config_file"]).name
        elif guess_files:
            file = f"{_file_of(case, stems)}.json"
        else:
            file = "(no file recorded)"
        row = out.setdefault(file, {"file": file, "cases": 0, "passed": 0, "xfailed": Counter(),
                                    "failed": Counter(), "skipped": Counter()})
        row["cases"] += 1
        if result["outcome"] == "passed":
            row["passed"] += 1
        elif result["outcome"] == "skipped":
            reason = (result.get("skip_reason") or "no reason given").strip()
            row["skipped"][reason[len(case) + 2:] if reason.startswith(f"{case}: ") else reason] += 1
        else:
            category = result.get("category") or "unknown"
            row["xfailed" if result["outcome"] == "xfailed" else "failed"][category] += 1
    return [{**r, "xfailed": dict(r["xfailed"]), "failed": dict(r["failed"]), "skipped": dict(r["skipped"])}
            for _, r in sorted(out.items())]


def format_aidge_files(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return []
    total = Counter()
    for r in rows:
        total.update({"cases": r["cases"], "passed": r["passed"], "xfailed": sum(r["xfailed"].values()),
                      "failed": sum(r["failed"].values()), "skipped": sum(r["skipped"].values())})
    out = ["", f"== Aidge benchmark configurations: {len(rows)} files, {total['cases']} cases, {total['passed']} "
               f"passed, {total['xfailed']} expected failures, {total['failed']} failed, {total['skipped']} skipped =="]
    for r in rows:
        parts = [f"{r['passed']}/{r['cases']} passed"]
        if r["xfailed"]:
            parts.append("xfail " + ", ".join(f"{c} {n}" for c, n in sorted(r["xfailed"].items())))
        if r["failed"]:
            parts.append("FAILED " + ", ".join(f"{c} {n}" for c, n in sorted(r["failed"].items())))
        out.append(f"  {r['file']:<30} " + "; ".join(parts))
        for reason, n in r["skipped"].items():
            out.append(f"  {'':<30} skipped {n}: {reason[:150]}")
    return out
