"""``python -m interop.cases.aidge_table [DIR|FILE ...] [--markdown]``: what the suite makes
of a directory of Aidge benchmark configurations (default: the installed aidge-benchmark
package's), one row per file: file, operation, cases (positive + negative), how many run
(the rest are skipped, with the reason), how many run with a reduced batch (the size
policy), and the torch reference or why there is none.

Exit status: 0 when every file reads, 1 when one does not (each such file named on stderr
with the case and key the reader stopped at), 2 on a bad command line. Reads the files
only: no torch, no Aidge.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from .aidge_benchmark import read_benchmark_file
from .aidge_configs import config_files, config_root, file_cases
from .aidge_operations import operation_entry
from .config import ConfigError

__all__ = ["file_rows", "format_rows", "main"]

COLUMNS = ("file", "operation", "cases", "pos", "neg", "run", "reduced", "torch reference / why not")


def _why(cases, entry) -> str:
    if entry.unmapped:
        return f"unmapped: {entry.unmapped}"
    reasons = Counter(c.skip_reason.split(": ", 1)[-1] for c in cases if c.skip_reason)
    text = entry.torch
    if reasons:
        text += "; skipped: " + "; ".join(f"{n} x {r}" for r, n in reasons.items())
    return text


def file_rows(targets: list[str | Path] | None = None) -> tuple[list[dict], list[ConfigError]]:
    """One row per readable file, and the errors of the files that are not."""
    paths: list[tuple[Path, Path | None]] = []
    for target in targets or [None]:
        root = config_root(target)
        paths.extend((path, root) for path in config_files(target))
    rows, errors = [], []
    for path, root in paths:
        try:
            bfile = read_benchmark_file(path, within=root)
            cases = file_cases(bfile)
        except ConfigError as exc:
            errors.append(exc)
            continue
        entry = operation_entry(bfile.operation)
        neg = sum(1 for c in cases if c.params["negative"])
        rows.append({"file": path.name, "operation": bfile.operation, "cases": len(cases), "pos": len(cases) - neg,
                     "neg": neg, "run": sum(1 for c in cases if not c.skip_reason),
                     "reduced": sum(1 for c in cases if c.params["reduced_batch"] and not c.skip_reason),
                     "torch reference / why not": _why(cases, entry), "notes": list(bfile.notes)})
    return rows, errors


def format_rows(rows: list[dict], markdown: bool = False) -> str:
    if markdown:
        lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(str(r[c]).replace("|", "\\|") for c in COLUMNS) + " |" for r in rows]
    else:
        widths = [max([len(c)] + [len(str(r[c])) for r in rows]) if c != COLUMNS[-1] else 0 for c in COLUMNS]
        lines = ["  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths)).rstrip()]
        lines += ["  ".join(str(r[c]).ljust(w) for c, w in zip(COLUMNS, widths)).rstrip() for r in rows]
    total = {k: sum(r[k] for r in rows) for k in ("cases", "pos", "neg", "run", "reduced")}
    ops = len({r["operation"] for r in rows})
    unmapped = len({r["operation"] for r in rows if r["torch reference / why not"].startswith("unmapped")})
    lines.append(f"{len(rows)} files, {ops} operations ({unmapped} unmapped), {total['cases']} cases "
                 f"({total['pos']} positive, {total['neg']} negative), {total['run']} run "
                 f"({total['reduced']} with a reduced batch)")
    lines += [f"note: {r['file']}: {n}" for r in rows for n in r["notes"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m interop.cases.aidge_table", description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="directories or files (default: the installed aidge-benchmark's)")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = parser.parse_args(argv)
    try:
        rows, errors = file_rows(args.targets or None)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(format_rows(rows, args.markdown))
    for exc in errors:
        print(f"error: {exc}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
