"""The size of ``results/runs`` (:mod:`.run`): the warning line a run ends with when it holds more than
:data:`RUNS_WARN_BYTES` (:func:`runs_size_warning`), and ``--prune N`` (:func:`prune_runs`), which removes
the finished runs but the last N complete ones, ``latest``'s and the history's last of each backend."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from pathlib import Path

from .history import HISTORY_FILE, load_history


#: results/runs above this many bytes is said in a warning line at the end of every run (a default run is
#: about 190 MB: some ten runs); ``--prune N`` removes the older runs
RUNS_WARN_BYTES = 2 * 1024 ** 3


def _tree_bytes(root: Path) -> int:
    """The bytes of the files under ``root`` (links not followed, unreadable entries skipped)."""
    total = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def runs_size_warning(results: Path, bound: int = RUNS_WARN_BYTES) -> str | None:
    """A line when ``results/runs`` holds more than ``bound`` bytes (its total named), else None."""
    runs = results / "runs"
    if not runs.is_dir() or runs.is_symlink():
        return None
    total = _tree_bytes(runs)
    if total <= bound:
        return None
    return (f"interop.reporting.run: warning: {runs} holds {total / 1024 ** 3:.1f} GB (above {bound / 1024 ** 3:g} GB): "
            "python -m interop.reporting.run --prune N keeps the last N complete runs (and latest, and the last of "
            "each backend in the history) and removes the others")


def _protected_runs(results: Path) -> set[str]:
    """The runs ``--prune`` never removes: ``results/latest``'s, and the run of the last line of
    ``results/history.jsonl`` for each backend (and shard): the one each next report compares with."""
    keep: set[str] = set()
    link = results / "latest"
    if os.path.islink(link):
        keep.add(Path(os.readlink(link)).name)
    entries, _problems = load_history(results / HISTORY_FILE, results)
    last: dict[tuple, str] = {}
    for entry in entries:
        if entry.get("run"):
            last[(entry.get("backend"), entry.get("shard"))] = str(entry["run"])
    keep.update(last.values())
    return keep


def prune_runs(results: Path, keep: int) -> tuple[list[str], list[str]]:
    """Remove the run folders of ``results/runs`` but the last ``keep`` complete runs (name order:
    their UTC time) and :func:`_protected_runs`. Only finished runs (a readable ``run.json``) are
    removed: a run without one is running (or was killed before its report) and is left, as is
    anything that is not a plain folder (a link). Returns (removed, left because unfinished)."""
    runs = results / "runs"
    if not runs.is_dir() or runs.is_symlink():
        return [], []
    finished: dict[str, bool] = {}
    unfinished: list[str] = []
    for run_dir in sorted(runs.iterdir()):
        if run_dir.is_symlink() or not run_dir.is_dir():
            continue
        try:
            meta = json.loads((run_dir / "run.json").read_text())
            finished[run_dir.name] = bool(meta.get("complete")) if isinstance(meta, dict) else False
        except (OSError, ValueError):
            unfinished.append(run_dir.name)
    complete = [name for name, done in finished.items() if done]
    kept = set(complete[len(complete) - keep:] if keep > 0 else []) | _protected_runs(results)
    removed = []
    for name in finished:
        if name not in kept:
            shutil.rmtree(runs / name)
            removed.append(name)
    return removed, unfinished


def _prune_main(args: list[str], results: Path) -> int:
    """``--prune N``: :func:`prune_runs`, what it removed in one line, and the size left."""
    if len(args) != 1 or not args[0].isdigit():
        sys.stderr.write(f"interop.reporting.run: --prune {' '.join(args)!s}: expected one count, "
                         "--prune N (N >= 0: the complete runs kept besides latest and the history's last)\n")
        return 2
    removed, unfinished = prune_runs(results, int(args[0]))
    sys.stdout.write(f"interop.reporting.run: --prune {args[0]}: {len(removed)} run(s) removed from {results / 'runs'}"
                     + (f"; {len(unfinished)} without run.json left (running, or killed): "
                        f"{', '.join(unfinished)}" if unfinished else "")
                     + f"; {_tree_bytes(results / 'runs') / 1024 ** 2:.0f} MB left\n")
    return 0
