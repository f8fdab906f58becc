"""Where the suite's own time goes: a cost profile per case source and per stage (a script, and
the pytest plugin it loads into the sessions it starts).

    python tools/case_cost.py [--sources NAME,...] [--json OUT.json] [--compare BEFORE.json]
                                   [--pytest-args "--tb=native ..."] [--load SAVED.json]

For each source, one pytest session in a fresh process (no xdist, one thread:
``OMP_NUM_THREADS=1``, ``PYTHONHASHSEED=0``, no records), on a stable sample of the source's
cases (``--shard 1/N``: every case whose id hashes into the first of N shards; the N of each
source is in :data:`SOURCES`), with this module loaded as a plugin (``-p tools.case_cost``):

- **collection**: the seconds of pytest's collection of the source's file (building every case,
  expected failures attached, the shard selection), however many cases it then runs;
- **per case**: the wall time of pytest's whole protocol for the test (setup + call +
  teardown, as ``--durations`` counts it), split into the stages the code itself names
  (:mod:`interop.stages`: ``sample``, ``export``, ``export: value check``, ``torch``,
  ``import``, ``compile``, ``module setup``, ``aidge forward``, ``torch backward``,
  ``aidge backward``, ``compare``, ``attribution``, ``fork``: the forked child's round trip
  minus its work), and ``other``: what no stage names (pytest, fixtures, the expected-failure
  guard, the case's own Python);
- **startup**: the process's wall time minus collection and cases (interpreter, imports, the
  session's start and end).

Printed: per source, one Markdown table of its stages (cases in which the stage ran, median
and p10-p90 in ms over those cases, mean ms per case over all cases, share of the case time),
then one summary table of every source: cases run of cases collected, collection, startup,
mean and median case, and the estimated wall time of the whole source on 2 workers
(collection + startup + collected cases x mean case / 2; each xdist worker collects for
itself, so collection is not divided). ``--json`` writes the figures; ``--compare`` prints
them beside an earlier ``--json`` file (before/after on one machine).

What a figure rests on is printed with it (the case count). The profile times the code the
suites run (the stages are markers in it, timed only while this plugin collects), one case
at a time, on one core: run it on an idle machine.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT_ENV = "INTEROP_CASE_COST_OUT"

#: name -> (test file, extra environment, N of the --shard 1/N sample)
SOURCES: dict[str, tuple[str, dict[str, str], int]] = {
    "opinfo-full": ("tests/test_opinfo.py", {"INTEROP_OPINFO_SAMPLES": "all", "INTEROP_OPINFO_DTYPES": "all"}, 300),
    "opinfo": ("tests/test_opinfo.py", {}, 8),
    "moduleinfo": ("tests/test_moduleinfo.py", {}, 4),
    "architectures": ("tests/test_architectures.py", {}, 8),
    "operators": ("tests/test_operators.py", {}, 8),
    "aidge-configs": ("tests/test_aidge_configs.py", {}, 4),
    "models": ("tests/test_models.py", {}, 2),
}
WORKERS = 2


# --- the plugin (loaded with -p tools.case_cost into the sessions main() starts) ----------
def _write(record: dict) -> None:
    path = os.environ.get(OUT_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")


if os.environ.get(OUT_ENV):
    import pytest

    _DESELECTED = [0]
    _OUTCOMES = pytest.StashKey[list]()

    def pytest_deselected(items):
        _DESELECTED[0] += len(items)

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(session):
        start = time.perf_counter()
        try:
            return (yield)
        finally:
            _write({"collection_s": time.perf_counter() - start, "collected": len(session.items) + _DESELECTED[0],
                    "selected": len(session.items)})

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        from interop.stages import stage_times

        outcomes = item.stash.setdefault(_OUTCOMES, [])
        with stage_times() as times:
            start = time.perf_counter()
            try:
                return (yield)
            finally:
                wall = time.perf_counter() - start
                _write({"id": item.nodeid, "wall_s": wall, "stages": dict(times), "outcomes": outcomes})

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(item, call):
        report = yield
        outcome = "xfailed" if hasattr(report, "wasxfail") and report.skipped else report.outcome
        if call.when == "call" or outcome != "passed":
            item.stash.setdefault(_OUTCOMES, []).append(f"{call.when}:{outcome}")
        return report


# --- the script ---------------------------------------------------------------------------------
def _run_source(name: str, extra_args: list[str] = ()) -> dict:
    test_file, extra_env, n = SOURCES[name]
    with tempfile.TemporaryDirectory(prefix="case-cost-") as tmp:
        out = Path(tmp) / "cost.jsonl"
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONHASHSEED="0", **extra_env, **{OUT_ENV: str(out)})
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
        cmd = [sys.executable, "-m", "pytest", "-p", "tools.case_cost", "-p", "no:cacheprovider", "-p", "no:xdist",
               "-q", "--no-header", "-rN", "--records", "none", "--shard", f"1/{n}", *extra_args, test_file]
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        lines = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    collection = next((x for x in lines if "collection_s" in x), None)
    cases = [x for x in lines if "id" in x]
    if collection is None or proc.returncode not in (0, 1):
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
        raise SystemExit(f"{name}: pytest exited {proc.returncode} ({' '.join(cmd)}):\n{tail}")
    return {"source": name, "file": test_file, "env": extra_env, "shard": f"1/{n}", "wall_s": wall,
            "collection_s": collection["collection_s"], "collected": collection["collected"],
            "selected": collection["selected"], "cases": cases, "pytest_rc": proc.returncode,
            "summary": (proc.stdout.strip().splitlines() or [""])[-1]}


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))]


def stage_table(result: dict) -> list[dict]:
    """Per stage of one source: cases, median, p10, p90 (ms over the cases it ran in), mean ms
    per case (over all cases) and share of the summed case time; ``other`` last."""
    cases = result["cases"]
    total = sum(c["wall_s"] for c in cases) or 1e-12
    per_stage: dict[str, list[float]] = {}
    other = []
    for c in cases:
        for name, s in c["stages"].items():
            per_stage.setdefault(name, []).append(s)
        other.append(max(0.0, c["wall_s"] - sum(c["stages"].values())))
    rows = []
    for name, values in sorted(per_stage.items(), key=lambda kv: -sum(kv[1])) + [("other", other)]:
        rows.append({"stage": name, "cases": len(values), "median_ms": statistics.median(values) * 1e3,
                     "p10_ms": _pct(values, 0.1) * 1e3, "p90_ms": _pct(values, 0.9) * 1e3,
                     "mean_ms": sum(values) / max(1, len(cases)) * 1e3, "share": sum(values) / total})
    return rows


def summary(result: dict) -> dict:
    walls = [c["wall_s"] for c in result["cases"]] or [0.0]
    mean = sum(walls) / len(walls)
    startup = max(0.0, result["wall_s"] - result["collection_s"] - sum(walls))
    return {"source": result["source"], "cases": len(result["cases"]), "collected": result["collected"],
            "collection_s": result["collection_s"], "startup_s": startup, "mean_case_s": mean,
            "median_case_s": statistics.median(walls),
            "estimate_s": result["collection_s"] + startup + result["collected"] * mean / WORKERS}


def _fmt(x: float) -> str:
    """3 significant digits, never in scientific notation."""
    if x == 0:
        return "0"
    digits = max(0, 2 - int(f"{abs(x):e}".split("e")[1]))
    return f"{x:.{digits}f}"


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:02.0f} s" if seconds >= 60 else f"{seconds:.1f} s"


def print_report(results: list[dict], before: dict[str, dict] | None = None) -> None:
    for r in results:
        print(f"\n### {r['source']} ({r['file']}, {' '.join(f'{k}={v}' for k, v in r['env'].items()) or 'default selection'},"
              f" --shard {r['shard']}: {len(r['cases'])} of {r['collected']} cases; pytest: {r['summary']})\n")
        print("| stage | cases | median ms | p10-p90 ms | mean ms per case | share |")
        print("|---|---:|---:|---:|---:|---:|")
        for row in stage_table(r):
            print(f"| {row['stage']} | {row['cases']} | {_fmt(row['median_ms'])} | {_fmt(row['p10_ms'])}-"
                  f"{_fmt(row['p90_ms'])} | {_fmt(row['mean_ms'])} | {row['share'] * 100:.0f}% |")
    print(f"\n### Per source (estimate: collection + startup + collected cases x mean case / {WORKERS} workers)\n")
    head = "| source | cases run / collected | collection s | startup s | mean case ms | median case ms | estimate |"
    if before:
        head += " before: collection s | mean case ms | estimate |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for r in results:
        s = summary(r)
        line = (f"| {s['source']} | {s['cases']} / {s['collected']} | {_fmt(s['collection_s'])} | {_fmt(s['startup_s'])} | "
                f"{_fmt(s['mean_case_s'] * 1e3)} | {_fmt(s['median_case_s'] * 1e3)} | {_minutes(s['estimate_s'])} |")
        if before:
            b = before.get(s["source"])
            line += (f" {_fmt(b['collection_s'])} | {_fmt(b['mean_case_s'] * 1e3)} | {_minutes(b['estimate_s'])} |"
                     if b else " - | - | - |")
        print(line)


def print_stage_matrix(results: list[dict], before: list[dict]) -> None:
    """One table: per stage (rows) and source (columns), the mean ms per case before -> now
    (``-``: no such stage then: its time was in ``other``, or it did not run)."""
    old = {r["source"]: {row["stage"]: row["mean_ms"] for row in stage_table(r)} for r in before}
    now = {r["source"]: {row["stage"]: row["mean_ms"] for row in stage_table(r)} for r in results}
    sources = [r["source"] for r in results if r["source"] in old]
    stages: list[str] = []
    for table in [*old.values(), *now.values()]:
        stages += [s for s in table if s not in stages and s != "other"]
    print("\n### Mean ms per case, per stage and source: before -> now\n")
    print("| stage | " + " | ".join(sources) + " |")
    print("|---" * (len(sources) + 1) + "|")
    for name in [*stages, "other"]:
        cells = []
        for src in sources:
            a, b = old[src].get(name), now[src].get(name)
            cells.append("" if a is None and b is None else
                         f"{'-' if a is None else _fmt(a)} -> {'-' if b is None else _fmt(b)}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    cells = [f"{_fmt(summary(b)['mean_case_s'] * 1e3)} -> {_fmt(summary(r)['mean_case_s'] * 1e3)}"
             for src in sources for b in before for r in results if b["source"] == r["source"] == src]
    print("| **case (mean)** | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sources", default=",".join(SOURCES), help=f"comma list of {', '.join(SOURCES)}")
    parser.add_argument("--json", help="write the figures (per case and per source) to this file")
    parser.add_argument("--compare", help="an earlier --json file: its per-source figures beside these")
    parser.add_argument("--pytest-args", default="", help="more pytest arguments, one string (e.g. '--tb=native')")
    parser.add_argument("--load", metavar="JSON", help="print a saved --json profile instead of running one")
    args = parser.parse_args()
    names = [s.strip() for s in args.sources.split(",") if s.strip()]
    unknown = [s for s in names if s not in SOURCES]
    if unknown:
        parser.error(f"unknown source(s) {unknown}; known: {', '.join(SOURCES)}")
    before = earlier = None
    if args.compare:
        earlier = json.loads(Path(args.compare).read_text())
        before = {s["source"]: s for s in earlier["summary"]}
    if args.load:
        results = [r for r in json.loads(Path(args.load).read_text())["results"] if r["source"] in names]
    else:
        results = []
        for name in names:
            print(f"{name}: running ...", file=sys.stderr, flush=True)
            results.append(_run_source(name, shlex.split(args.pytest_args)))
    print_report(results, before)
    if earlier is not None:
        print_stage_matrix(results, earlier["results"])
    if args.json:
        path = Path(args.json)
        tmp = path.with_name(path.name + ".partial")
        tmp.write_text(json.dumps({"machine": os.uname().nodename, "date": time.strftime("%Y-%m-%d %H:%M"),
                                   "summary": [summary(r) for r in results],
                                   "stages": {r["source"]: stage_table(r) for r in results},
                                   "results": results}, indent=1))
        os.replace(tmp, path)


if __name__ == "__main__":
    main()
