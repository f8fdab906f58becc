"""The noise floor of the asv benchmarks: the same commit benchmarked twice, side by side (a
script, not an asv module).

    python tools/noise_floor.py [--cases ID ...] [--runs 2] [--factor 1.5] [-a ATTR=VALUE ...]
    python tools/noise_floor.py --analyse results/noise-floor/<stamp> [...]   # earlier runs, pooled
    nox -s noise-floor [-- ARGS]

Runs ``asv run`` ``--runs`` times (default 3) on the working tree's HEAD, in the calling Python's
environment (``-E existing``: no environment to build; ``ASV_PYTHONPATH`` points at this
checkout), on a representative subset (:data:`DEFAULT_CASES`: microsecond-scale operator
cases, a larger operator case, two models; both phases), each run into its own results
directory (``results/noise-floor/<UTC time>/run<N>``, through a temporary copy of
asv.conf.json next to it). Then, per benchmark kind (``time_torch``, ``time_aidge``,
``time_bridge``, ``track_aidge_torch_ratio``), it prints the distribution of the run-to-run
ratios ``max(a/b, b/a)`` over every (case, phase) of every pair of runs: median, p95, max,
the share within 1.05x / 1.10x / 1.25x, and the share ``asv compare --factor F`` would flag
(asv's own test: over the factor *and* statistically different) for each ``--factor``.
``summary.json`` (written atomically) holds the same figures and the per-case ratios.
``-a repeat=50`` etc. is passed to ``asv run`` (try benchmark attributes without editing
``benchmarks/harness.py``).

The figure asv.conf.json's ``regressions_thresholds`` and the ``--factor`` of docs/benchmarks.md are set
from (docs/benchmarks.md): a change smaller than the noise floor is not a regression.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "asv.conf.json"
#: operator cases of microseconds (ReLU, Hardsigmoid: the issue's worst outlier, Add of two
#: inputs), a larger operator case, a model of a millisecond and its training step
DEFAULT_CASES = ("ReLU_rank_2", "Hardsigmoid_rank_4", "Add_broadcast_same_shape", "Conv2D_attributes_in_channels_8",
                 "LeNet_eval", "LeNet_train")
KINDS = ("time_torch", "time_aidge", "time_bridge", "track_aidge_torch_ratio")
WITHIN = (1.05, 1.10, 1.25)
_NAME = re.compile(r"^(?P<module>\w+)\.(?P<phase>Forward|Backward)\.(?P<kind>\w+)\('(?P<case>[^']+)'\)$")


def bench_regex(cases) -> str:
    """asv's ``--bench`` regex selecting every benchmark of ``cases``, both phases."""
    return (r"^(operators|models)\.(Forward|Backward)\.\w+\('(" + "|".join(re.escape(c) for c in cases) + r")'\)$")


def _asv_config(results_dir: Path) -> dict:
    from asv import util  # asv reads its config with // comments

    conf = util.load_json(str(CONFIG), js_comments=True)
    conf["results_dir"] = os.path.relpath(results_dir, ROOT)
    return conf


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    tmp.write_text(text)
    os.replace(tmp, path)


def run_asv(results_dir: Path, commit: str, regex: str, extra: list[str]) -> int:
    """One ``asv run`` of ``commit``'s benchmarks matching ``regex`` into ``results_dir``;
    asv's output goes to ``<results_dir>.log`` (asv lists every case of a benchmark class)."""
    config = ROOT / f"asv-noise-floor-{os.getpid()}.conf.json"  # asv resolves paths from its directory
    config.write_text(json.dumps(_asv_config(results_dir), indent=2) + "\n")
    env = dict(os.environ, ASV_PYTHONPATH=str(ROOT))  # asv drops PYTHONPATH: import this checkout
    env.setdefault("OMP_NUM_THREADS", "1")
    cmd = [sys.executable, "-m", "asv", "--config", config.name, "run", "-E", f"existing:{sys.executable}",
           "--set-commit-hash", commit, "--bench", regex, *extra]
    log = results_dir.with_name(results_dir.name + ".log")
    print(f"+ {' '.join(cmd)}  > {log}", flush=True)
    try:
        with log.open("w") as out:
            return subprocess.call(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    finally:
        config.unlink(missing_ok=True)


def load_run(results_dir: Path) -> dict[str, tuple]:
    """``{"operators.Forward.time_aidge('ReLU_rank_2')": (value, stats, samples)}`` of every
    result file under ``results_dir`` (one environment per run here)."""
    from asv.commands.compare import unroll_result
    from asv.results import Results

    out = {}
    for path in sorted(results_dir.glob("*/*.json")):
        if path.name in ("machine.json", "benchmarks.json"):
            continue
        result = Results.load(str(path))
        for key in result.get_all_result_keys():
            params = result.get_result_params(key)
            rows = unroll_result(key, params, result.get_result_value(key, params),
                                 result.get_result_stats(key, params), result.get_result_samples(key, params))
            for name, value, stats, samples in rows:
                out[name] = (value, stats, samples)
    return out


def _flagged(a: tuple, b: tuple, factor: float) -> bool:
    """Whether ``asv compare --factor factor`` marks the pair as a change (either way)."""
    try:
        from asv.commands.compare import _is_result_better
    except ImportError:  # another asv: the factor alone
        return max(a[0] / b[0], b[0] / a[0]) > factor
    ss_a, ss_b = (a[1], a[2]), (b[1], b[2])
    return _is_result_better(a[0], b[0], ss_a, ss_b, factor) or _is_result_better(b[0], a[0], ss_b, ss_a, factor)


def _usable(entry: tuple | None) -> bool:
    return entry is not None and isinstance(entry[0], (int, float)) and math.isfinite(entry[0]) and entry[0] > 0


def compare_runs(groups: list[list[dict[str, tuple]]], factors) -> dict[str, dict]:
    """Per benchmark kind: the run-to-run ratios of every pair of runs of each group (the
    runs of one call), pooled, and their summary."""
    by_kind: dict[str, dict] = {k: {"pairs": []} for k in KINDS}
    for runs in groups:
        _add_pairs(by_kind, runs, factors)
    for kind, entry in by_kind.items():
        entry["summary"] = summarise([p["ratio"] for p in entry["pairs"]],
                                     {f"{f:g}": [p["flagged"][f"{f:g}"] for p in entry["pairs"]] for f in factors})
    return by_kind


def _add_pairs(by_kind: dict[str, dict], runs: list[dict[str, tuple]], factors) -> None:
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            for name in sorted(set(runs[i]) & set(runs[j])):
                m = _NAME.match(name)
                if not m or m["kind"] not in by_kind or not (_usable(runs[i][name]) and _usable(runs[j][name])):
                    continue
                a, b = runs[i][name], runs[j][name]
                by_kind[m["kind"]]["pairs"].append({
                    "case": m["case"], "phase": m["phase"].lower(), "runs": [i + 1, j + 1], "a": a[0], "b": b[0],
                    "ratio": max(a[0] / b[0], b[0] / a[0]),
                    "flagged": {f"{f:g}": _flagged(a, b, f) for f in factors}})


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def summarise(ratios: list[float], flagged: dict[str, list[bool]]) -> dict:
    if not ratios:
        return {"n": 0}
    return {"n": len(ratios), "median": statistics.median(ratios), "p95": _percentile(ratios, 0.95),
            "max": max(ratios), **{f"within_{w:g}": sum(r <= w for r in ratios) / len(ratios) for w in WITHIN},
            **{f"flagged_at_{f}": sum(v) / len(v) for f, v in flagged.items()}}


def format_table(by_kind: dict[str, dict], factors) -> str:
    head = (f"{'benchmark kind':<26}{'n':>4}{'median':>8}{'p95':>8}{'max':>8}"
            + "".join(f"{'<=' + format(w, 'g') + 'x':>9}" for w in WITHIN)
            + "".join(f"{'flag@' + format(f, 'g'):>10}" for f in factors))
    lines = [head, "-" * len(head)]
    for kind in KINDS:
        s = by_kind[kind]["summary"]
        if not s["n"]:
            lines.append(f"{kind:<26}{0:>4}  (no case timed in both runs)")
            continue
        lines.append(f"{kind:<26}{s['n']:>4}{s['median']:>8.3f}{s['p95']:>8.3f}{s['max']:>8.3f}"
                     + "".join(f"{s[f'within_{w:g}']:>9.0%}" for w in WITHIN)
                     + "".join(f"{s[f'flagged_at_{f:g}']:>10.0%}" for f in factors))
    return "\n".join(lines)


def worst_table(by_kind: dict[str, dict], n: int = 5) -> str:
    lines = []
    for kind in KINDS:
        for p in sorted(by_kind[kind]["pairs"], key=lambda p: -p["ratio"])[:n]:
            lines.append(f"  {kind:<24} {p['case']:<34} {p['phase']:<8} runs {p['runs'][0]}/{p['runs'][1]}: "
                         f"{p['a']:.3g} vs {p['b']:.3g}  x{p['ratio']:.3g}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", default=list(DEFAULT_CASES), metavar="ID")
    parser.add_argument("--runs", type=int, default=3, help="asv runs of the same commit (default 3)")
    parser.add_argument("--factor", type=float, nargs="+", default=[1.1, 1.25, 1.5, 2.0],
                        help="asv compare factors to report the flagged share for")
    parser.add_argument("--analyse", type=Path, nargs="+", metavar="DIR",
                        help="analyse the runs under each DIR (pairs within a DIR, pooled), run nothing")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "noise-floor")
    args, extra = parser.parse_known_args(argv)  # the rest goes to `asv run` (-a repeat=..., --show-stderr)
    extra = [a for a in extra if a != "--"]
    if args.runs < 2:
        parser.error("--runs must be 2 or more")
    if args.analyse:
        out = args.analyse[0]
        groups = [sorted(p for p in d.iterdir() if p.is_dir() and p.name.startswith("run")) for d in args.analyse]
    else:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.strip()
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        out = args.out / stamp
        out.mkdir(parents=True)
        groups = [[out / f"run{i + 1}" for i in range(args.runs)]]
        for run_dir in groups[0]:
            code = run_asv(run_dir, commit, bench_regex(args.cases), extra)
            if code != 0:
                print(f"noise_floor: asv run exited {code} (failed benchmarks are left out)", file=sys.stderr)
        write_atomically(out / "run.json", json.dumps({"commit": commit, "cases": args.cases, "asv_args": extra,
                                                       "runs": args.runs}, indent=2) + "\n")
    by_kind = compare_runs([[load_run(d) for d in group] for group in groups], args.factor)
    where = ", ".join(f"{len(g)} runs of {g[0].parent}" for g in groups if g)
    print(f"\nrun-to-run ratios max(a/b, b/a) of the same commit, every (case, phase) of {where}:\n"
          f"{format_table(by_kind, args.factor)}\n\nlargest:\n{worst_table(by_kind)}")
    if len(groups) == 1:  # a pooled analysis of several calls writes nothing
        write_atomically(out / "summary.json", json.dumps(by_kind, indent=2) + "\n")
        print(f"\n{out / 'summary.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
