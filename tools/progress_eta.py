"""How far the progress line's ETA is from the run's real end (issue 49).

    python tools/progress_eta.py [--every 5] [--cwd DIR] -- PYTEST ARGS

Starts ``python -m interop.reporting.run PYTEST ARGS`` in ``DIR`` (default: here; its
``results/latest`` is the last run whose durations weigh the ETA), and while it runs reads the
new run's part files every ``--every`` seconds with two :class:`interop.records.progress.Progress`:
one as ``nox -s report`` builds it (weighted by the last run's durations when it can), one without
a last run (the current rate only). When pytest's tests have ended (the last record), it prints for
each reading the predicted end (elapsed + ETA) over the real end, for both, and their range:
1.00 is exact, 0.5 said the run would end at half its real time. Nothing is asserted; the
run's own report is written as usual (in ``DIR/results``).

    python tools/progress_eta.py --replay RUN_DIR --previous PREV_RUN_DIR [--every 30] [--live LOG]

Replays a finished run instead (nothing is started, nothing written): its timeline is rebuilt from
``RUN_DIR/records.jsonl`` (a test's end: its record's ``time``; its start: that less its
``duration_s``, pytest's setup + call + teardown), and fed through the same
:meth:`Progress.take` a live poll uses, on a simulated clock ticking every ``--every`` seconds from
the run's start (the run directory's name: when it was made, just before pytest started), with
``previous=PREV_RUN_DIR`` and without a last run. What the run's files do not keep, and how it is
approximated: the part files (``records.d``) are gone once the run is combined, so the ``start``
lines are the record's ``time`` less ``duration_s`` (the real line is written a little earlier,
before setup's fixtures); the ``collected`` line is not kept either: its count is the records'
number and its per-file counts the records' (a complete run: the same), written at the first
test's start (a worker writes it after its collection, before its first test); a line is read
when its time has passed (the live poll may read it up to a write later). ``--live LOG``: the
``interop.reporting.run: ...`` lines of that run's console, their ETA over the same real end,
beside the replay's (they should agree with the replay's current-rate column).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from interop.records.progress import Progress, file_of  # noqa: E402


def _ts(text: str) -> float:
    return datetime.datetime.fromisoformat(text).timestamp()


def _run_start(run_dir: Path) -> float:
    """The run's start: its directory's name (``20261204T073145158016Z-...``), when it was made."""
    stamp = run_dir.name.split("-", 1)[0]
    return datetime.datetime.strptime(stamp, "%Y%m%dT%H%M%S%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def timeline(run_dir: Path) -> tuple[float, list[tuple[float, int, dict]]]:
    """(the run's start, [(time, order, part line)]) rebuilt from ``run_dir/records.jsonl`` (see
    the module's docstring): a ``start`` line and a ``record`` per test, one ``collected`` line."""
    records, path = [], run_dir / "records.jsonl"
    with path.open() as f:
        for number, raw in enumerate(f, 1):
            try:  # a line the replay cannot place is named, never skipped: the timeline would be wrong
                rec = json.loads(raw)
                if rec.get("event", "record") == "record" and isinstance(rec.get("nodeid"), str):
                    records.append((_ts(rec["time"]), rec))
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                raise SystemExit(f"progress_eta: {path}:{number}: not a record with a 'time' the replay can place "
                                 f"({type(exc).__name__}: {exc})") from None
    if not records:
        raise SystemExit(f"progress_eta: {path}: no records")
    events = []
    for end, rec in records:
        start = end - float(rec.get("duration_s") or 0.0)
        events.append((start, 1, {"event": "start", "nodeid": rec["nodeid"]}))
        events.append((end, 2, rec))
    files: dict[str, int] = {}
    for _, rec in records:
        files[file_of(rec["nodeid"])] = files.get(file_of(rec["nodeid"]), 0) + 1
    first = min(t for t, _, _ in events)
    events.append((first, 0, {"event": "collected", "count": len(records), "files": files}))
    events.sort(key=lambda e: (e[0], e[1]))
    return _run_start(run_dir), events


_UNITS = {"h": 3600, "min": 60, "s": 1}


def _seconds(text: str) -> float:
    return sum(float(n) * _UNITS[u] for n, u in re.findall(r"(\d+) (h|min|s)\b", text))


def live_lines(log: Path) -> list[tuple[float, int, float | None, str]]:
    """(elapsed, done, ETA s or None, how) of each progress line of a run's console log (a
    ``collecting`` line: done -1)."""
    out = []
    pattern = re.compile(r"interop\.reporting\.run: ([\d,]+) / [\d,]+ tests .*?"
                         r"(?:, ETA (.+?) (by the last run's durations|at the current rate))?, ([^,;]+) in\b")
    for line in log.read_text(errors="replace").splitlines():
        m = pattern.search(line)
        collecting = re.search(r"interop\.reporting\.run: collecting \((.+)\)", line)
        if collecting:
            out.append((_seconds(collecting.group(1)), -1, None, "collecting"))
        elif m:
            out.append((_seconds(m.group(4)), int(m.group(1).replace(",", "")),
                        _seconds(m.group(2)) if m.group(2) else None, m.group(3) or ""))
    return out


def _ranges(name: str, readings: list[tuple[float, float]], end: float) -> None:
    """Print the range of predicted end / real end over the whole run, from half-way, the last 10%."""
    for part, since in (("whole run", 0.0), ("from half-way", 0.5), ("last 10%", 0.9)):
        ratios = [r for now, r in readings if now >= since * end]
        if ratios:
            print(f"{name}, {part}: predicted end / real end {min(ratios):.2f}-{max(ratios):.2f} "
                  f"over {len(ratios)} readings")


def replay(run_dir: Path, previous: Path, every: float, log: Path | None) -> int:
    start, events = timeline(run_dir)
    clock = [start]
    weighted = Progress(run_dir, clock=lambda: clock[0], previous=previous)
    plain = Progress(run_dir, clock=lambda: clock[0], previous=None)
    end = max(t for t, kind, _ in events if kind == 2) - start
    n = sum(1 for _, kind, _ in events if kind == 2)
    print(f"replay of {run_dir.name}: {n} tests, the last ended {end:.0f} s after the run's start; "
          f"previous {previous.name}: {len(weighted.durations)} test durations, "
          f"fixed cost per test {weighted.overhead:.3f} s")
    live = live_lines(log) if log else []
    live_at = {round(e): (d, eta, how) for e, d, eta, how in live}
    print("elapsed  done/total  weighted(end ratio, how)              current rate (end ratio)"
          + ("   live: done, end ratio" if log else ""))
    # the live lines' own times when there is a log (a line every 30 s plus the poll's own
    # seconds: they drift by about a second every ten lines), else every ``every`` seconds
    ticks = [e for e, _, _, _ in live] if live else [k * every for k in range(1, int(end // every) + 2)]
    i = 0
    rw_all, rr_all, rl_all = [], [], []
    for tick in ticks:
        clock[0] = start + tick
        while i < len(events) and events[i][0] <= clock[0]:
            for p in (weighted, plain):
                p.take(events[i][2])
            i += 1
        weighted.line(), plain.line()
        now, done = tick, sum(weighted.outcomes.values())
        if not (weighted.collected and done < weighted.collected):
            continue
        (w, how), (r, _) = weighted.eta(), plain.eta()
        rw = (now + w) / end if w is not None else None
        rr = (now + r) / end if r is not None else None
        if rw is not None:
            rw_all.append((now, rw))
        if rr is not None:
            rr_all.append((now, rr))
        row = (f"{now:7.0f}  {done:5d}/{weighted.collected:<5d} " + (f"{rw:5.2f} {how:30s}" if rw is not None else " " * 37)
               + (f" {rr:5.2f}" if rr is not None else "  -"))
        if round(now) in live_at:
            d, eta, lhow = live_at[round(now)]
            rl = (now + eta) / end if eta is not None else None
            if rl is not None:
                rl_all.append((now, rl))
            row += (f"{'':16s}{d:5d}, " if d >= 0 else f"{'':16s}collecting, ") + (f"{rl:5.2f}" if rl is not None else "  -") + ("" if lhow in ("", "at the current rate") else " (weighted)")
        print(row)
    _ranges("weighted", rw_all, end)
    _ranges("current rate", rr_all, end)
    if log:
        _ranges("live log", rl_all, end)
        pairs = [(a, b) for (t1, a) in rr_all for (t2, b) in rl_all if t1 == t2]
        if pairs:
            diffs = sorted(abs(a - b) for a, b in pairs)
            print(f"replay's current rate vs the live log, |end ratio difference| over {len(pairs)} readings: "
                  f"median {diffs[len(diffs) // 2]:.3f}, max {diffs[-1]:.3f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/progress_eta.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=None, help="seconds between readings (5; --replay: 30)")
    parser.add_argument("--cwd", type=Path, default=Path.cwd())
    parser.add_argument("--replay", type=Path, metavar="RUN_DIR")
    parser.add_argument("--previous", type=Path, metavar="PREV_RUN_DIR")
    parser.add_argument("--live", type=Path, metavar="LOG")
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args(argv)
    if args.replay:
        if args.previous is None or not (args.previous / "records.jsonl").is_file():
            parser.error("--replay needs --previous PREV_RUN_DIR (a run directory with records.jsonl)")
        if not (args.replay / "records.jsonl").is_file():
            parser.error(f"--replay {args.replay}: no records.jsonl there")
        return replay(args.replay, args.previous, args.every or 30.0, args.live)
    if not args.pytest_args:
        parser.error("PYTEST ARGS are needed (or --replay RUN_DIR)")
    args.every = args.every or 5.0
    runs = args.cwd / "results" / "runs"
    before = set(runs.iterdir()) if runs.is_dir() else set()
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "interop.reporting.run", *args.pytest_args], cwd=args.cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ))
    run_dir = None
    while run_dir is None and proc.poll() is None:
        time.sleep(0.2)
        new = set(runs.iterdir()) - before if runs.is_dir() else set()
        run_dir = min(new) if new else None
    if run_dir is None:
        print("progress_eta: the run made no run directory", file=sys.stderr)
        return 2
    weighted, plain = Progress(run_dir), Progress(run_dir, previous=None)
    print(f"run {run_dir.name}; last run's durations: {len(weighted.durations)} test(s)")
    readings = []  # (elapsed, done, total, weighted eta, how, plain eta)
    last_done, last_change = -1, None
    while proc.poll() is None:
        time.sleep(args.every)
        for p in (weighted, plain):
            p.poll()
        weighted.line(), plain.line()
        done = sum(weighted.outcomes.values())
        now = time.monotonic() - started
        if done != last_done:
            last_done, last_change = done, now
        if weighted.collected and done < weighted.collected:
            (w, how), (r, _) = weighted.eta(), plain.eta()
            readings.append((now, done, weighted.collected, w, how, r))
    end = last_change  # the last record's reading: the tests' end (the analysis after it is no test)
    print(f"exit {proc.returncode}; tests ended at ~{end:.0f} s (within {args.every:g} s), {last_done} tests")
    print("elapsed  done/total  weighted(end ratio, how)              current rate (end ratio)")
    ratios_w, ratios_r = [], []
    for now, done, total, w, how, r in readings:
        rw = (now + w) / end if w is not None else None
        rr = (now + r) / end if r is not None else None
        if rw is not None:
            ratios_w.append(rw)
        if rr is not None:
            ratios_r.append(rr)
        print(f"{now:7.0f}  {done:5d}/{total:<5d} " + (f"{rw:5.2f} {how:30s}" if rw is not None else " " * 37)
              + (f" {rr:5.2f}" if rr is not None else "  -"))
    for name, ratios in (("weighted", ratios_w), ("current rate", ratios_r)):
        if ratios:
            print(f"{name}: predicted end / real end {min(ratios):.2f}-{max(ratios):.2f} over {len(ratios)} readings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
