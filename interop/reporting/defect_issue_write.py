"""An upstream report per defect, ready to paste: ``defects/<id>/ISSUE.md`` and ``standalone.py``.

For each entry of the ledger (:mod:`interop.reporting.ledger`) that has a reproducer, the run
directory gets ``defects/<id>/``:

- ``standalone.py``: one file that needs numpy, onnx and Aidge only, written from the smallest
  reproducer bundle (:mod:`interop.reproducers`): the graph as ``onnx.helper`` code
  (``make_node``, ``make_graph``, ``make_model``; constants as numpy literals), the inputs and the
  expected values as numpy literals (``np.array([...], dtype=np.float32).reshape(...)``) when each
  holds at most :data:`~.defect_issue_script.LITERAL_MAX_ELEMENTS` elements and the literals stay
  under :data:`~.defect_issue_script.LITERAL_MAX_CHARS`; a larger graph or value is read from the
  bundle's file of the same name, copied beside the script (``model.onnx``, ``test_data_set_0/<name>.pb``: ISSUE.md says
  which to attach). Then the harness of the bundle's own ``repro.py`` (what checked the bundle:
  import, compile, run, compare) and an entry point of its own: exit 1 while the defect is present,
  printing expected against actual, 0 once Aidge computes the expected values, 2 when it cannot
  run. No encoded blob; the suite's case ids and messages are not in it.
- ``ISSUE.md``: Aidge's side first: a title, the versions of exactly what ``standalone.py``
  imports (``importlib.metadata``) and the ``pip install`` line for them, what happens (for a
  value or shape mismatch, what ``standalone.py`` prints on the attached graph: its expected and
  actual values, never the whole model's), Aidge's own words, the graph (each node: op, inputs
  with shapes and dtypes, attributes), how to run it, the script inline when the issue stays under
  :data:`~.defect_issue_text.INLINE_LIMIT` characters (GitHub's limit on an issue's body is 65,536)
  and, else, which files to attach; then the defect's impact, and last, marked as the suite's own and not needed to
  reproduce, "Affected cases in aidge-interop": its ledger id, the check that saw it and its words,
  the test ids.

Nothing is written outside ``<run>/defects/`` (each file atomically); a bundle that cannot be read
leaves a report without the graph or the script, saying why.

Here: :func:`write_issues` writes both into the run, ``ISSUE.md`` from :mod:`.defect_issue_text` and
``standalone.py`` from :mod:`.defect_issue_script` (values as Python source: :mod:`.defect_issue_literals`),
with the bundle's files it reads beside it; :func:`run_standalone` runs a written script as its reader
does, and :func:`versions_of` reads the versions a run's session names.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ..reading import UnsafeInputError, confined
from ..records.store import write_atomically
from ..reproducers.run import run_fresh
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
