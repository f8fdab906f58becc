"""``INTEROP_SHARD=K/N``: the K-th of N disjoint, stable shards of every source.

One rule for every source (operators, OpInfo, ModuleInfo, architectures...), in two forms:

- by hash (the default): a test belongs to shard ``sha256(node id) % N + 1`` (not CRC-32: ids
  that differ in one character, ``ReLU_rank_2`` / ``ReLU_rank_4``, have CRCs of the same parity,
  measured: six such catalog ids all fell into shard 1 of 2): each test to exactly one shard, the
  same one on every machine and every backend (the node id holds no backend), whatever else is
  collected.
- balanced by duration (pytest-split's idea), when ``$INTEROP_SHARD_DURATIONS`` names the
  durations a previous run's records hold (a run directory, or the JSON ``{node id: seconds}``
  that ``python -m interop.records.shard durations RUN_DIR... --out FILE`` writes): the tests
  of that file go, longest first, each to the shard with the least seconds so far (ties: the
  lowest shard, then the node id; the same plan on every machine, from the file alone, whatever
  is collected); a test the file does not hold (a new one) keeps its hash shard. The shards of
  one run must read the same file (a CI pipeline hands it to every shard job as one artifact).

Shard membership is one decision, :func:`shard_of` (and :func:`in_shard`), for both shard
variables. ``INTEROP_OPINFO_SHARD=K/N`` (:func:`opinfo_shard`) keeps the K-th of N shards of the
OpInfo cases before they are built (``cases/opinfo.py``: 2,000 of the full run's 30,000 cases
built instead of all), keyed by the case id with the ``crc32`` hash: its table rows (run ``opinfo
shard 1/15``, ``failure_table.NAMED_RUNS``) were triaged on exactly that shard's cases, and another
hash would leave them unreached. The two variables together, or ``INTEROP_OPINFO_SHARD`` with
``--shard``, are refused, naming both (a run's shard count is what ``--merge`` checks; the OpInfo
shard is not recorded in it, so shards of an intersection could be merged with another selection).

The plugin deselects the other shards' tests at collection (pytest prints them as
``deselected``); ``nox -s report -- --merge DIR...`` combines the shards' records into one
report and one support matrix.
"""
from __future__ import annotations

import hashlib
import heapq
import json
import math
import os
import zlib
from pathlib import Path
from typing import Callable, Iterable, Mapping
import argparse
import sys

from ..env import SHARD_ENV, given, parse_k_of_n, read as env_shard
from ..reading import UnsafeInputError, read_confined

__all__ = ["SHARD_ENV", "OPINFO_SHARD_ENV", "DURATIONS_ENV", "HASHES", "shard_from_env", "opinfo_shard", "shard_of",
           "in_shard", "parse_shard", "balanced_plan", "load_durations", "durations_of_runs", "shard_rule", "plan_totals"]

#: the durations that balance the shards (a run directory or a ``{node id: seconds}`` JSON file)
DURATIONS_ENV = "INTEROP_SHARD_DURATIONS"
#: the OpInfo source's own shard of its cases (``K/N``), applied before they are built
OPINFO_SHARD_ENV = "INTEROP_OPINFO_SHARD"
#: the hashes a shard is computed with: ``sha256`` of the node id for ``INTEROP_SHARD``; ``crc32``
#: of the case id for ``INTEROP_OPINFO_SHARD`` only (kept: its table rows were triaged on it)
HASHES: dict[str, Callable[[str], int]] = {
    "sha256": lambda key: int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"),
    "crc32": lambda key: zlib.crc32(key.encode()),
}
#: the largest durations file read (a full run's 40,000 ids take ~4 MB)
MAX_DURATIONS_BYTES = 64 * 1024 * 1024


def shard_from_env() -> tuple[int, int] | None:
    """``(K, N)`` of ``$INTEROP_SHARD``, None when unset; a ValueError naming it when malformed."""
    return env_shard(SHARD_ENV)


def opinfo_shard(every_source: str | None = None) -> tuple[int, int] | None:
    """``(K, N)`` of ``$INTEROP_OPINFO_SHARD``, None when unset; a ValueError naming it when
    malformed, and naming both settings when another shard is in force beside it: ``every_source``
    (the session's ``--shard``, as ``"option --shard='1/2'"``), else ``$INTEROP_SHARD``. Together
    they would select the intersection of two unrelated hashes (in 4e189b7, when both were CRC-32
    of related ids: 100 of 100 cases deselected), never what either asks for."""
    selected = env_shard(OPINFO_SHARD_ENV)
    if selected is None:
        return None
    other = every_source or (f"{SHARD_ENV}={given(SHARD_ENV)!r}" if env_shard(SHARD_ENV) is not None else None)
    if other:
        raise ValueError(f"environment variables {OPINFO_SHARD_ENV}={given(OPINFO_SHARD_ENV)!r} and {other} "
                         f"are both set: they shard by different hashes and together select almost nothing; set one "
                         f"({SHARD_ENV} or --shard shards every source, {OPINFO_SHARD_ENV} the OpInfo selection "
                         f"alone, as its table rows were made)")
    return selected


def parse_shard(raw: str, source: str) -> tuple[int, int]:
    """``K/N`` given as an option (``--shard``): ``(K, N)``, else a ValueError naming ``source``."""
    return parse_k_of_n(raw, source)


def shard_of(key: str, n: int, hash: str = "sha256") -> int:
    """The shard (1..n) of ``key`` (a node id; for ``INTEROP_OPINFO_SHARD`` a case id, with
    ``hash="crc32"``) by the hash rule: the one place shard membership is computed."""
    return HASHES[hash](key) % n + 1


def in_shard(key: str, selected: tuple[int, int] | None, hash: str = "sha256") -> bool:
    """Whether ``key`` belongs to shard ``selected`` ``(K, N)`` (None: no shard, every key)."""
    return selected is None or shard_of(key, selected[1], hash) == selected[0]


def balanced_plan(durations: Mapping[str, float], n: int) -> dict[str, int]:
    """``{node id: shard (1..n)}`` for every id of ``durations``: longest first, each to the shard
    with the least seconds so far (ties: the lowest shard; equal durations in node-id order)."""
    if n < 1:
        raise ValueError(f"shard count {n}: expected >= 1")
    totals = [(0.0, k) for k in range(1, n + 1)]
    heapq.heapify(totals)
    plan: dict[str, int] = {}
    for nodeid, seconds in sorted(durations.items(), key=lambda item: (-item[1], item[0])):
        total, k = heapq.heappop(totals)
        plan[nodeid] = k
        heapq.heappush(totals, (total + seconds, k))
    return plan


def plan_totals(durations: Mapping[str, float], n: int) -> list[float]:
    """The seconds each shard of :func:`balanced_plan` holds (index 0 is shard 1)."""
    totals = [0.0] * n
    for nodeid, k in balanced_plan(durations, n).items():
        totals[k - 1] += durations[nodeid]
    return totals


def _checked(doc: object, source: str) -> dict[str, float]:
    if not isinstance(doc, dict):
        raise ValueError(f"{source}: expected a JSON object {{node id: seconds}}, got {type(doc).__name__}")
    out: dict[str, float] = {}
    for key, value in doc.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ValueError(f"{source}: key {key!r}: expected a finite number of seconds >= 0, got {value!r}")
        out[key] = float(value)
    return out


def durations_of_runs(run_dirs: Iterable[Path]) -> tuple[dict[str, float], list[str]]:
    """``({node id: seconds}, problems)`` from the records of run directories (``duration_s``,
    the longest per node id over backends and runs); a directory without records is a problem."""
    from .store import load_run

    durations: dict[str, float] = {}
    problems: list[str] = []
    for run_dir in run_dirs:
        run = load_run(Path(run_dir))
        if run is None:
            problems.append(f"{run_dir}: no records.jsonl (not the directory of a records run)")
            continue
        problems.extend(run.problems)
        for rec in run.records:
            seconds = rec.get("duration_s")
            if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and math.isfinite(seconds) \
                    and seconds >= 0 and isinstance(rec.get("nodeid"), str):
                durations[rec["nodeid"]] = max(durations.get(rec["nodeid"], 0.0), float(seconds))
    return durations, problems


def load_durations(path: str | os.PathLike) -> dict[str, float]:
    """The durations at ``path``: a run directory (its records) or a ``{node id: seconds}`` JSON
    file; a ValueError naming the path when it is neither or holds no durations."""
    path = Path(path)
    if path.is_dir():
        durations, problems = durations_of_runs([path])
        if not durations:
            raise ValueError(f"{path}: no test durations in its records"
                             + (f" ({'; '.join(problems[:3])})" if problems else ""))
        return durations
    try:
        text = read_confined(path, path.parent, max_bytes=MAX_DURATIONS_BYTES)
    except (OSError, UnsafeInputError) as exc:
        raise ValueError(f"{path}: cannot read the shard durations ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        doc = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    return _checked(doc, str(path))


def shard_rule(n: int, durations_path: str | os.PathLike | None = None) -> Callable[[str], int]:
    """The shard (1..n) of a node id: balanced by the durations at ``durations_path`` for the
    ids it holds, the hash rule for every other id (and for all when there is no path)."""
    if not durations_path:
        return lambda nodeid: shard_of(nodeid, n)
    plan = balanced_plan(load_durations(durations_path), n)
    return lambda nodeid: plan.get(nodeid) or shard_of(nodeid, n)


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m interop.records.shard",
                                     description="the durations that balance INTEROP_SHARD (INTEROP_SHARD_DURATIONS)")
    sub = parser.add_subparsers(dest="command", required=True)
    write = sub.add_parser("durations", help="write {node id: seconds} from run directories' records")
    write.add_argument("runs", nargs="+", type=Path)
    write.add_argument("--out", type=Path, required=True)
    show = sub.add_parser("plan", help="the seconds each of N balanced shards holds")
    show.add_argument("durations", type=Path)
    show.add_argument("n", type=int)
    args = parser.parse_args(argv)
    if args.command == "durations":
        from .store import write_atomically

        durations, problems = durations_of_runs(args.runs)
        for problem in problems:
            sys.stderr.write(f"warning: {problem}\n")
        if not durations:
            sys.stderr.write(f"no test durations in {', '.join(map(str, args.runs))}: nothing written\n")
            return 2
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(args.out, json.dumps(durations, indent=0, sort_keys=True) + "\n")
        sys.stdout.write(f"{args.out}: {len(durations)} test durations, {sum(durations.values()):.0f} s in all\n")
        return 0
    try:
        durations = load_durations(args.durations)
        totals = plan_totals(durations, args.n)
    except ValueError as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    for k, total in enumerate(totals, 1):
        sys.stdout.write(f"shard {k}/{args.n}: {total:.1f} s\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
