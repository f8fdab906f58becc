"""What changed between two benchmarked commits, each benchmark kind at its own factor (a
script, not an asv module; ``nox -s compare`` runs it).

    python benchmarks/compare_changed.py main HEAD --factor track_aidge_torch_ratio=1.5 \\
        --factor time_bridge=2.5 --factor time_aidge=3 --factor time_torch=3.5 [--config asv.conf.json]

``asv compare`` takes one factor for every row and prints every row (``n/a`` ones included).
This runs it once, ``--only-changed`` at the smallest factor given (asv's own test: the change
is over the factor *and* the two commits' samples differ statistically; ``--only-changed``
keeps the rows marked ``+`` worse, ``-`` better, ``!`` a new failure), then keeps a ``+``/``-``
row only where its change is over its own kind's factor (asv's statistical test does not depend
on the factor, so a row kept here is exactly what ``asv compare --factor F`` of its kind flags).
A new failure (``!``) is always kept. It prints the kept rows, then one line of counts: rows
compared, changed per kind, and how many asv flagged at the smallest factor that its kind's
factor drops. Exit 0 (a comparison, not a gate: ``asv continuous`` is the gate).
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


def filter_rows(text: str, factors: dict[str, float]) -> tuple[list[str], dict]:
    """The lines of ``asv compare --only-changed`` output (``text``) kept at each kind's factor,
    and the counts: ``kept`` per kind, ``dropped`` per kind (flagged at the smallest factor,
    under its kind's)."""
    smallest = min(factors.values())
    kept, counts = [], {"kept": {}, "dropped": {}}
    for line in text.splitlines():
        row = parse_row(line)
        if row is None or row["mark"] not in ("+", "-", "!"):
            continue
        kind = kind_of(row["name"])
        factor = factors.get(kind, smallest)
        if row["mark"] != "!":
            ratio = float(row["ratio"].lstrip("~"))
            change = max(ratio, 1 / ratio) if ratio > 0 else float("inf")
            if change <= factor:  # asv flags a < b / factor: over the factor, strictly
                counts["dropped"][kind] = counts["dropped"].get(kind, 0) + 1
                continue
        counts["kept"][kind] = counts["kept"].get(kind, 0) + 1
        kept.append(line)
    return kept, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("revisions", nargs=2, metavar="REV")
    parser.add_argument("--factor", action="append", default=[], metavar="KIND=F", required=True)
    parser.add_argument("--config", help="asv configuration (default: asv's, asv.conf.json)")
    parser.add_argument("--asv-output", help="read this saved `asv compare --only-changed` output instead of running it")
    args = parser.parse_args(argv)
    factors = parse_factors(args.factor)
    smallest = min(factors.values())
    if args.asv_output:
        with open(args.asv_output) as fh:
            text = fh.read()
    else:
        cmd = [sys.executable, "-m", "asv", *(["--config", args.config] if args.config else []), "compare",
               "--factor", f"{smallest:g}", "--only-changed", "--sort", "ratio", *args.revisions]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.stderr.write(done.stdout + done.stderr)
            return done.returncode
        text = done.stdout
    kept, counts = filter_rows(text, factors)
    said = ", ".join(f"{k} {v:g}x" for k, v in factors.items())
    print(f"Changed between {args.revisions[0]} and {args.revisions[1]} (each kind at its factor: {said}; "
          "asv's statistical test on):")
    if kept:
        print("| Change | Before | After | Ratio | Benchmark (Parameter) |\n|---|---|---|---|---|")
        print("\n".join(kept))
    else:
        print("  nothing over its kind's factor")
    kept_n = sum(counts["kept"].values())
    dropped = ", ".join(f"{k} {n}" for k, n in sorted(counts["dropped"].items())) or "none"
    print(f"{kept_n} rows changed; flagged by asv at {smallest:g}x but within their kind's factor: {dropped}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
