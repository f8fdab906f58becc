"""``--merge`` (:mod:`.run`): the records of several runs (shards, machines, backends) into one new run.
Each source read (:func:`load_merge_source`), the sources whose records do not prove what they say
(:func:`merge_disagreements`) and the runs that do not belong together (:func:`merge_mismatches`) refused
(:class:`MergeRefused`), and the merged run written (:func:`merge_runs`: its records, its session, its
reproducer bundles rebuilt from their data by :mod:`.run_merge_bundles`)."""
from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

from ..env import parse_k_of_n
from ..reading import UnsafeInputError, confined, read_confined_json
from ..records.store import (MAX_RECORDS_BYTES, RECORDS_FILE, RunRecords, SCHEMA, disagreements, load_run,
                             outcome_of_reports, records_counts, write_run)
from .run_merge_bundles import MERGED_BUNDLES_DIR, _rebuild_bundles


#: the packages whose versions merged runs must share (torch without its local build tag: a cuda
#: machine's ``2.13.0+cu126`` and this one's ``2.13.0+cpu`` are one torch)
MERGE_VERSIONS = ("aidge_core", "aidge_backend_cpu", "aidge_onnx", "torch")
#: a run directory's name: ``<UTC time>-<commit>-...`` (:func:`new_run_dir`)
_RUN_NAME = re.compile(r"^\d{8}T\d+Z-(?P<commit>[0-9a-f]{4,40}|nogit)-")
#: the flag that merges runs that do not belong together, as a run marked mixed
MERGE_MISMATCHED = "--merge-mismatched"


class MergeRefused(ValueError):
    """Runs that do not belong together, each reason naming them."""

    def __init__(self, reasons: list[str]):
        self.reasons = reasons
        super().__init__("; ".join(reasons))


@dataclasses.dataclass
class MergeSource:
    """One run given to ``--merge``: its records (None: none could be read) and what says where
    it comes from (commit, versions, backend, shard, route to ONNX)."""

    path: Path
    run: RunRecords | None
    commit: str | None
    versions: dict[str, str]
    backend: str
    shard: tuple[int, int] | None
    exporters: tuple[str, ...]
    unreadable: str | None = None
    #: where its records disagree with each other or with its session's counts
    #: (:func:`interop.records.store.disagreements`): such a source is never merged
    disagrees: list[str] = dataclasses.field(default_factory=list)

    def summary(self) -> dict:
        return {"dir": str(self.path), "commit": self.commit, "versions": self.versions, "backend": self.backend,
                "shard": f"{self.shard[0]}/{self.shard[1]}" if self.shard else None, "exporters": list(self.exporters),
                "records": len(self.run.records) if self.run else 0,
                "complete": bool(self.run and self.run.complete), "unreadable": self.unreadable}


def _source_commit(path: Path, problems: list[str]) -> str | None:
    """The commit a run was made at: its run.json's ``commit``, else its directory's name."""
    meta = path / "run.json"
    if os.path.lexists(meta):
        try:
            doc = read_confined_json(meta, path)
        except (OSError, ValueError) as exc:
            problems.append(f"{meta}: unreadable ({getattr(exc, 'strerror', None) or exc})")
        else:
            if isinstance(doc, dict) and isinstance(doc.get("commit"), str):
                return doc["commit"]
            if isinstance(doc, dict) and doc.get("commit") is not None:
                problems.append(f"{meta}: key 'commit': a string, got {type(doc['commit']).__name__}")
    match = _RUN_NAME.match(Path(os.path.realpath(path)).name)
    return match.group("commit") if match else None


def load_merge_source(path: Path) -> MergeSource:
    """One source of a merge, read under the rules of :mod:`interop.records.store` (a link out,
    a FIFO, a field of the wrong type: named in its problems, never a traceback)."""
    unreadable = None
    records = path / RECORDS_FILE
    if os.path.lexists(records):
        try:
            size = confined(records, path).stat().st_size
        except (UnsafeInputError, OSError) as exc:
            unreadable = str(exc)
        else:
            if size > MAX_RECORDS_BYTES:
                unreadable = f"{records}: {size:,} bytes, above the limit of {MAX_RECORDS_BYTES:,} bytes for records"
    run = load_run(path)
    if run is None and unreadable is None:
        unreadable = f"{records}: no records.jsonl (not the directory of a records run)"
    session = run.session if run is not None else {}
    problems = run.problems if run is not None else []
    commit = _source_commit(path, problems)
    versions = {k: str(v).split("+")[0] if k == "torch" else str(v)
                for k, v in (session.get("versions") or {}).items() if k in MERGE_VERSIONS}
    shard = None
    if session.get("shard") is not None:
        try:
            shard = parse_k_of_n(str(session["shard"]), f"{path / 'session.json'}: key 'shard'")
        except ValueError as exc:
            problems.append(str(exc))
            unreadable = unreadable or str(exc)
    backends = {r.get("backend") or "cpu" for r in (run.records if run else [])}
    backend = session.get("backend") or (backends.pop() if len(backends) == 1 else "cpu")
    exporters = tuple(sorted({r.get("exporter") or "auto" for r in (run.records if run else []) if r.get("kind")}))
    disagrees = disagreements(run, str(path)) if run is not None else []
    return MergeSource(path, run, commit, versions, backend, shard, exporters, unreadable, disagrees)


#: the lines of one source's disagreements a refusal shows (then how many more)
MAX_DISAGREEMENTS_SHOWN = 10


def merge_disagreements(sources: list[MergeSource]) -> list[str]:
    """Why the records of these runs do not prove what they say, one line each (``DIR: nodeid: key
    ...``, at most :data:`MAX_DISAGREEMENTS_SHOWN` a source, then how many more): a record whose
    ``outcome`` is not what its per-phase statuses make it, a session whose counts are not its records'.
    A merge of such a run is refused, ``--merge-mismatched`` or not: it would report what nothing proves."""
    out: list[str] = []
    for source in sources:
        out += source.disagrees[:MAX_DISAGREEMENTS_SHOWN]
        if len(source.disagrees) > MAX_DISAGREEMENTS_SHOWN:
            out.append(f"{source.path}: and {len(source.disagrees) - MAX_DISAGREEMENTS_SHOWN} more records that "
                       "disagree with themselves or with session.json")
    return out


def _differs(label: str, sources: list[MergeSource], value) -> str | None:
    groups: dict[str, list[str]] = {}
    for source in sources:
        shown = value(source)
        groups.setdefault("unknown" if shown in (None, "", ()) else str(shown), []).append(str(source.path))
    if len(groups) < 2:
        return None
    return f"{label} differ: " + "; ".join(f"{v} ({', '.join(dirs)})" for v, dirs in groups.items())


def merge_mismatches(sources: list[MergeSource]) -> tuple[list[str], list[str]]:
    """(why these runs do not belong together, the shards missing): a source without readable
    records; a different commit, Aidge or torch version, route to ONNX; shards of different
    counts, one given twice, sharded beside unsharded runs of a backend, a missing shard. Each
    reason names the runs."""
    reasons = [f"{s.path}: {s.unreadable}" if not s.unreadable.startswith(str(s.path)) else s.unreadable
               for s in sources if s.unreadable]
    reasons += filter(None, [_differs("commits", sources, lambda s: s.commit)]
                      + [_differs(f"{k} versions", sources, lambda s, k=k: s.versions.get(k)) for k in MERGE_VERSIONS]
                      + [_differs("routes to ONNX (--exporter)", sources,
                                  lambda s: ",".join(s.exporters) if s.exporters else None)])
    missing: list[str] = []
    by_backend: dict[str, list[MergeSource]] = {}
    for source in sources:
        if not source.unreadable:
            by_backend.setdefault(source.backend, []).append(source)
    for backend, group in sorted(by_backend.items()):
        sharded = [s for s in group if s.shard]
        if not sharded:
            continue
        if len(sharded) < len(group):
            reasons.append(f"backend {backend}: sharded and unsharded runs together (unsharded: "
                           f"{', '.join(str(s.path) for s in group if not s.shard)})")
        counts = {s.shard[1] for s in sharded}
        if len(counts) > 1:
            reasons.append(f"backend {backend}: shard counts differ: "
                           + "; ".join(f"{s.shard[0]}/{s.shard[1]} ({s.path})" for s in sharded))
            continue
        (n,) = counts
        seen: dict[int, list[str]] = {}
        for s in sharded:
            seen.setdefault(s.shard[0], []).append(str(s.path))
        reasons += [f"backend {backend}: shard {k}/{n} given {len(dirs)} times ({', '.join(dirs)})"
                    for k, dirs in sorted(seen.items()) if len(dirs) > 1]
        gone = [f"{k}/{n}" for k in range(1, n + 1) if k not in seen]
        if gone:
            missing.append(f"backend {backend}: shard{'s' if len(gone) > 1 else ''} {', '.join(gone)} missing "
                           f"(given: {', '.join(f'{k}/{n}' for k in sorted(seen))})")
    return reasons + missing, missing


def merge_runs(sources: list[Path], run_dir: Path, *, mismatched: bool = False) -> dict:
    """The records of several runs (shards, machines, backends) into ``run_dir``: one record per
    (test, backend). Runs that do not belong together (:func:`merge_mismatches`) are refused
    (:class:`MergeRefused`, nothing written) unless ``mismatched``: the merged run is then
    marked ``mixed`` with the reasons. Complete when every source is and no shard is missing.
    Returns the merged session: ``merged`` names each source (dir, commit, versions, backend,
    shard, route, records), ``problems`` what went wrong reading them."""
    loaded = [s if isinstance(s, MergeSource) else load_merge_source(Path(s)) for s in sources]
    disagree = merge_disagreements(loaded)
    if disagree:  # never merged, mismatched or not
        raise MergeRefused(disagree)
    reasons, missing = merge_mismatches(loaded)
    if reasons and not mismatched:
        raise MergeRefused(reasons)
    return _write_merged(loaded, run_dir, reasons, missing)


def _write_merged(loaded: list[MergeSource], run_dir: Path, reasons: list[str], missing: list[str]) -> dict:
    """The merged run: its records, its session (counts recomputed from the records merged, each
    source's checked against its own session by :func:`merge_disagreements`) and its reproducer
    bundles, rebuilt from the sources' data (:func:`_rebuild_bundles`): each record's ``merged_from``
    is its source's folder of rebuilt bundles in the merged run (where the ledger finds its bundle),
    ``merged_source`` the run it came from."""
    problems: list[str] = [f"mixed merge ({MERGE_MISMATCHED}): {r}" for r in reasons]
    merged: dict[tuple[str, str], dict] = {}
    sessions = []
    counts: dict[str, int] = {}
    for index, source in enumerate(loaded, 1):
        run = source.run
        if run is None:
            sessions.append({"complete": False, "ended": f"{source.path}: no records", "source": str(source.path)})
            continue
        problems.extend(run.problems)
        sessions.append(dict(run.session, source=str(source.path)))
        for key, n in records_counts(run.records).items():
            counts[key] = counts.get(key, 0) + n
        root = run_dir / MERGED_BUNDLES_DIR / str(index)
        _rebuild_bundles(source.path, run.records, root, run_dir, problems)
        for rec in run.records:
            key = (rec["nodeid"], rec.get("backend") or "cpu")
            if key in merged:
                problems.append(f"{source.path}: {rec['nodeid']} on {key[1]} is recorded by an earlier source too "
                                "(overlapping shards?): the later record is kept")
            derived = outcome_of_reports(rec)  # what its statuses prove (merge_disagreements: the same)
            merged[key] = dict(rec, merged_from=str(root), merged_source=str(source.path),
                               **({"outcome": derived} if derived is not None and rec.get("reports") else {}))
    complete = bool(sessions) and all(s.get("complete") is True for s in sessions) and not missing
    ended = [str(s.get("ended")) for s in sessions if s.get("complete") is not True] + missing
    versions = {k: v for k, v in (sessions[0].get("versions") or {}).items()
                if all((s.get("versions") or {}).get(k) == v for s in sessions)} if sessions else {}
    commits = {s.commit for s in loaded}
    session = {"schema": SCHEMA, "merged_from": [str(s.path) for s in loaded], "complete": complete,
        "ended": "merged" if complete else "; ".join(ended),
        "pytest_counts": counts, "started": min((str(s.get("started")) for s in sessions if s.get("started")),
                                                default=None),
        "finished": max((str(s.get("finished")) for s in sessions if s.get("finished")), default=None),
        "versions": versions, "shard": None, "problems": problems, "commit": commits.pop() if len(commits) == 1 else None,
        "merged": [s.summary() for s in loaded], **({"mixed": reasons} if reasons else {}),
        "backend": ",".join(sorted({k[1] for k in merged})) or None, "sources": sessions}
    write_run(run_dir, [merged[k] for k in sorted(merged)], session)
    return session

