"""What changed between two benchmarked commits, each benchmark kind at its own factor, a ratio
row only where the two commits' time rows say so too (a script, not an asv module; ``nox -s
compare`` runs it).

    python tools/compare_changed.py main HEAD --factor track_aidge_torch_ratio=1.5 \\
        --factor time_bridge=2.5 --factor time_aidge=3 --factor time_torch=3.5 [--config asv.conf.json]

``asv compare`` takes one factor for every row and prints every row (``n/a`` ones included).
This runs it once at the smallest factor given (asv's own test: the change is over the factor
*and* the two commits' samples differ statistically; asv marks ``+`` worse, ``-`` better, ``!``
a new failure), then keeps a ``+``/``-`` row only where its change is over its own kind's factor
(asv's statistical test does not depend on the factor, so a time row kept here is exactly what
``asv compare --factor F`` of its kind flags). A new failure (``!``) is always kept.

A ``track_aidge_torch_ratio`` row has no samples in asv's results (a track benchmark stores one
number), so asv's statistical test never applies to it: asv flags it on the factor alone. Such a
row is kept only when the flag **repeats** in the commits' own ``time_aidge`` and ``time_torch``
rows of the same case and phase (timed in other processes): their ratio (time_aidge's change over
time_torch's) moves the same way, over the same factor. A one-blank-line commit benchmarked at load
7-8 flagged 3 ratio rows up to 2.68x (docs/noise-floor.md); a real change of Aidge's speed moves
both measurements. A ratio row without both time rows (one ``n/a`` or failed) is kept; a ratio row
the time rows do not repeat is listed apart, as unconfirmed, with both figures. Likewise a time row
over its factor is kept only when the two commits' spreads part: asv prints a time as its median
± half its interquartile range, and a row whose two intervals overlap is listed apart (asv's test
compares the medians' confidence intervals, which many samples make narrow even when a loaded
machine spreads the samples over 5x: ``559±2000μs`` -> ``131±100μs`` passed it).

It prints the kept rows, the unconfirmed ratio rows, then one line of counts: rows changed per
kind, how many asv flagged at the smallest factor that its kind's factor drops, and the ratio rows
the time rows did not repeat. Exit 0 (a comparison, not a gate: ``asv continuous`` is the gate).
"""
from __future__ import annotations

import argparse
import subprocess
import sys

#: a row of ``asv compare``'s table (tabulate's "github" format): change mark, before, after,
#: ratio (``~`` when not significant, ``n/a``), benchmark (``name [machine/env]`` with several environments)
_CELLS = ("mark", "before", "after", "ratio", "name")


def parse_row(line: str) -> dict | None:
    """The cells of one table row of ``asv compare`` output, or None (a header, a rule, a log line)."""
    line = line.strip()
    if not (line.startswith("|") and line.endswith("|")):
        return None
    cells = [c.strip() for c in line[1:-1].split("|")]
    if len(cells) != len(_CELLS) or cells[0] == "Change" or all(c and set(c) <= set("-:") for c in cells):
        return None  # not a row, the header, the rule under it
    return dict(zip(_CELLS, cells))


KINDS = ("track_aidge_torch_ratio", "time_bridge", "time_aidge", "time_torch")


def kind_of(name: str) -> str | None:
    """The benchmark kind (:data:`KINDS`, or another method name) of an asv row name
    (``operators.Forward.time_aidge('ReLU_rank_2')`` -> ``time_aidge``)."""
    method = name.split("(")[0].rsplit(".", 1)[-1]
    return method or None


def parse_factors(items) -> dict[str, float]:
    out = {}
    for item in items:
        kind, _, value = item.partition("=")
        if not value:
            raise SystemExit(f"--factor {item!r}: KIND=FACTOR (e.g. time_aidge=3)")
        out[kind.strip()] = float(value)
    return out


def _change(ratio_cell: str) -> float | None:
    """asv's ratio cell (after / before; ``~`` when not significant) as a number, None for ``n/a``."""
    try:
        return float(ratio_cell.lstrip("~"))
    except ValueError:
        return None


_UNITS = {"ns": 1e-9, "μs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def spread(cell: str) -> tuple[float, float] | None:
    """asv's ``value±err`` cell (``559±2000μs``: the median and half its interquartile range) as the
    interval median -/+ err in seconds; None for a cell without ``±`` (a track's value, ``n/a``, ``failed``)."""
    import re

    m = re.fullmatch(r"([\d.]+)±([\d.]+)([a-zμ]+)", cell.strip())
    if not m or m.group(3) not in _UNITS:
        return None
    value, err, unit = float(m.group(1)), float(m.group(2)), _UNITS[m.group(3)]
    return (value - err) * unit, (value + err) * unit


def _case_key(name: str) -> tuple[str, str] | None:
    """(``group.Phase`` + the parameter and environment, kind) of an asv row name:
    ``operators.Forward.time_aidge('ReLU_rank_2')`` -> (``operators.Forward('ReLU_rank_2')``, ``time_aidge``)."""
    head, sep, rest = name.partition("(")
    prefix, _, kind = head.rpartition(".")
    return (prefix + sep + rest, kind) if kind else None


def filter_rows(text: str, factors: dict[str, float], confirm: bool = True) -> tuple[list[str], dict]:
    """The lines of ``asv compare`` output (``text``, with or without ``--only-changed``) kept at each
    kind's factor, and the counts: ``kept`` per kind, ``dropped`` per kind (flagged at the smallest
    factor, under its kind's), ``unconfirmed``: the ratio rows over their factor that the same case's
    time rows do not repeat (``confirm``; each ``(line, ratio change, the time rows' ratio change)``),
    ``overlapping``: the time rows over their factor whose two interquartile ranges overlap (``confirm``)."""
    smallest = min(factors.values())
    rows = [(line, parse_row(line)) for line in text.splitlines()]
    rows = [(line, row) for line, row in rows if row is not None]
    times = {}  # (case, kind) -> the after/before change of every row, flagged or not
    for _, row in rows:
        key = _case_key(row["name"])
        if key is not None:
            times[key] = _change(row["ratio"])
    kept, counts = [], {"kept": {}, "dropped": {}, "unconfirmed": [], "overlapping": []}
    for line, row in rows:
        if row["mark"] not in ("+", "-", "!"):
            continue
        kind = kind_of(row["name"])
        factor = factors.get(kind, smallest)
        if row["mark"] != "!":
            ratio = _change(row["ratio"])
            change = max(ratio, 1 / ratio) if ratio else float("inf")
            if change <= factor:  # asv flags a < b / factor: over the factor, strictly
                counts["dropped"][kind] = counts["dropped"].get(kind, 0) + 1
                continue
            before, after = spread(row["before"]), spread(row["after"])
            if confirm and before and after and before[0] <= after[1] and after[0] <= before[1]:
                # the two commits' interquartile ranges overlap: their medians moved, their samples
                # did not part (a loaded machine: 559±2000μs -> 131±100μs passed asv's test)
                counts["overlapping"].append(line)
                continue
            if confirm and kind == "track_aidge_torch_ratio" and ratio:
                case = _case_key(row["name"])[0]
                aidge, torch = times.get((case, "time_aidge")), times.get((case, "time_torch"))
                if aidge and torch:
                    implied = aidge / torch
                    if not (implied > factor if ratio > 1 else implied < 1 / factor):
                        counts["unconfirmed"].append((line, ratio, round(implied, 3)))
                        continue
        counts["kept"][kind] = counts["kept"].get(kind, 0) + 1
        kept.append(line)
    return kept, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("revisions", nargs=2, metavar="REV")
    parser.add_argument("--factor", action="append", default=[], metavar="KIND=F", required=True)
    parser.add_argument("--config", help="asv configuration (default: asv's, asv.conf.json)")
    parser.add_argument("--asv-output", help="read this saved `asv compare` output (the whole table, not "
                        "--only-changed, for the ratio rows' check) instead of running it")
    parser.add_argument("--no-confirm", action="store_true",
                        help="keep every row over its factor (no check of a ratio row against the time rows, "
                        "nor of a time row's spread)")
    args = parser.parse_args(argv)
    factors = parse_factors(args.factor)
    smallest = min(factors.values())
    if args.asv_output:
        with open(args.asv_output) as fh:
            text = fh.read()
    else:
        # the whole table: the ratio rows' check reads the time rows of the same case, flagged or not
        cmd = [sys.executable, "-m", "asv", *(["--config", args.config] if args.config else []), "compare",
               "--factor", f"{smallest:g}", "--sort", "ratio", *args.revisions]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.stderr.write(done.stdout + done.stderr)
            return done.returncode
        text = done.stdout
    kept, counts = filter_rows(text, factors, confirm=not args.no_confirm)
    said = ", ".join(f"{k} {v:g}x" for k, v in factors.items())
    print(f"Changed between {args.revisions[0]} and {args.revisions[1]} (each kind at its factor: {said}; "
          "asv's statistical test on; a ratio row only where the time rows repeat it):")
    if kept:
        print("| Change | Before | After | Ratio | Benchmark (Parameter) |\n|---|---|---|---|---|")
        print("\n".join(kept))
    else:
        print("  nothing over its kind's factor")
    if counts["unconfirmed"]:
        print(f"Ratio rows over {factors.get('track_aidge_torch_ratio', smallest):g}x that the same case's "
              "time_aidge / time_torch rows do not repeat (not counted as changed: read as load noise, or "
              "benchmark both commits again on a quiet machine):")
        for line, ratio, implied in counts["unconfirmed"]:
            print(f"  {parse_row(line)['name']}: ratio {ratio:g}, time rows {implied:g}")
    if counts["overlapping"]:
        print("Time rows over their factor whose two commits' interquartile ranges (median ± half of it, "
              "as asv prints them) overlap (not counted as changed):")
        for line in counts["overlapping"]:
            row = parse_row(line)
            print(f"  {row['name']}: {row['before']} -> {row['after']} ({row['ratio']})")
    kept_n = sum(counts["kept"].values())
    dropped = ", ".join(f"{k} {n}" for k, n in sorted(counts["dropped"].items())) or "none"
    print(f"{kept_n} rows changed; flagged by asv at {smallest:g}x but within their kind's factor: {dropped}; "
          f"ratio rows the time rows did not repeat: {len(counts['unconfirmed'])}; "
          f"time rows with overlapping spreads: {len(counts['overlapping'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
