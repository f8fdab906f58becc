"""Each defect's upstream report written into its run (:func:`write_issues`): ``defects/<id>/ISSUE.md``
(:mod:`.defect_issue_text`) and ``standalone.py`` (:mod:`.defect_issue_script`) with the bundle's files
it reads beside it; :func:`run_standalone` runs a written script as its reader does, and
:func:`versions_of` reads the versions a run's session names. Part of :mod:`.defect_issue`.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ..reading import UnsafeInputError, confined
from ..records.store import write_atomically
from .defect_issue_script import standalone_parts
from .defect_issue_text import issue_text

__all__ = ["write_issues", "run_standalone", "versions_of", "ISSUES_DIR", "RUN_KINDS", "RUN_TIMEOUT_S"]

#: the folder of a run that holds one folder per defect
ISSUES_DIR = "defects"
#: the kinds whose ISSUE.md quotes what standalone.py prints (run once, in a fresh interpreter, as it is written)
RUN_KINDS = ("wrong values", "wrong shape")
RUN_TIMEOUT_S = 120


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def run_standalone(folder: Path, timeout: float = RUN_TIMEOUT_S) -> dict[str, Any]:
    """``folder/standalone.py`` run as its reader runs it, in a fresh interpreter (``python -I``, torch
    and interop unimportable): ``{"exit": status or None (timed out), "output": its output}``."""
    from ..reproducers.run import run_fresh

    done = run_fresh(Path(folder) / "standalone.py", timeout)
    if done["exit"] is None:
        return done
    lines = _ANSI.sub("", done["output"]).strip().splitlines()
    if len(lines) > 40:
        lines = lines[:10] + [f"... ({len(lines) - 30} lines)"] + lines[-20:]
    return {"exit": done["exit"], "output": "\n".join(line[:600] for line in lines)}


def _copy_beside(bundle: Path, folder: Path, names: list[str]) -> None:
    """The bundle's files ``names`` into ``folder`` (same relative paths), each through a temporary file."""
    for name in names:
        source = confined(bundle / name, bundle)
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        confined(target.parent, folder, kind="dir")
        tmp = target.with_name(f".{target.name}.{os.getpid()}.partial")
        tmp.unlink(missing_ok=True)
        tmp.write_bytes(source.read_bytes())
        os.replace(tmp, target)


def write_issues(run_dir: Path, ledger: list[dict[str, Any]], *, versions: dict[str, str] | None = None,
                 run: bool = True) -> int:
    """``<run>/defects/<id>/ISSUE.md`` (and ``standalone.py``, with the files it reads beside it, where a
    bundle exists) for every entry; sets each entry's ``issue`` (and ``standalone``) to the path relative
    to the run. ``run``: run each :data:`RUN_KINDS` entry's standalone.py once (:func:`run_standalone`)
    and quote what it prints. Returns the count."""
    run_dir = Path(run_dir)
    written = 0
    for entry in ledger:
        folder = confined(run_dir / ISSUES_DIR / entry["id"], run_dir, kind="dir", missing_ok=True)
        folder.mkdir(parents=True, exist_ok=True)
        confined(folder, run_dir, kind="dir")
        script, problem, attach, observed = None, None, [], None
        root = Path(entry["reproducer_root"]) if entry.get("reproducer_root") else run_dir  # merged: the source run
        bundle = root / entry["reproducer"] if entry.get("reproducer") else None
        if bundle is not None:
            try:
                confined(bundle, root, kind="dir")
                script, attach = standalone_parts(bundle, entry)
                _copy_beside(bundle, folder, attach)
            except (OSError, UnsafeInputError) as exc:
                problem = f"the reproducer bundle {entry['reproducer']} cannot be read ({exc})"
                bundle, script, attach = None, None, []
        else:
            problem = "no reproducer reproduced this defect in this run (see the affected cases' records)"
        if script is not None:
            write_atomically(folder / "standalone.py", script)
            entry["standalone"] = f"{ISSUES_DIR}/{entry['id']}/standalone.py"
            if run and entry.get("kind") in RUN_KINDS:
                observed = run_standalone(folder)
        shown = dict(entry, reproducer=None) if bundle is None else entry
        write_atomically(folder / "ISSUE.md", issue_text(shown, run_dir, versions=versions, script=script,
                                                         problem=problem, observed=observed, attach=attach))
        entry["issue"] = f"{ISSUES_DIR}/{entry['id']}/ISSUE.md"
        written += 1
    return written


def versions_of(run_dir: Path) -> dict[str, str]:
    """The versions a run's session.json names (where a package is not installed here, and Python's)."""
    try:
        session = json.loads((Path(run_dir) / "session.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    versions = session.get("versions") if isinstance(session, dict) else None
    out = {str(k): str(v) for k, v in versions.items()} if isinstance(versions, dict) else {}
    if isinstance(session, dict) and session.get("python"):
        out["python"] = str(session["python"])
    return out
