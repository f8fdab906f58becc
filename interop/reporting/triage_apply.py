"""A triage proposal written and applied: :func:`write_proposal` (``proposal.json`` and the
``proposal.diff`` a maintainer reads, in the run's folder) and :func:`apply_proposal` (the reviewed
proposal into the table, all its files or none, every file checked first; :class:`ProposalError` for a
proposal it refuses: naming the proposal and the key, a file outside the table folder or reached through
a link, a file that changed since, rows the table's own validator refuses, a proposal nested too deeply;
nothing is written until every file is checked). Part of the table triage (``python -m interop.triage``);
the proposal is made by :mod:`.triage_propose`.
"""
from __future__ import annotations

import dataclasses
import difflib
import json
import os
from pathlib import Path
from typing import Any

from ..cases import failure_table as ft
from ..reading import UnsafeInputError, confined, loads_json, read_confined, read_user_bytes
from ..records.store import write_atomically
from .triage_propose import Proposal, _sha

__all__ = ["PROPOSAL_FILE", "DIFF_FILE", "MAX_PROPOSAL_BYTES", "ProposalError", "proposal_diff", "write_proposal",
           "apply_proposal"]

PROPOSAL_FILE = "proposal.json"
DIFF_FILE = "proposal.diff"


def proposal_diff(proposal: Proposal) -> str:
    out = []
    for path, (_, new_text) in sorted(proposal.files.items()):
        old = Path(path).read_text(encoding="utf-8").splitlines(keepends=True) if Path(path).exists() else []
        rel = _relative(path, proposal.table_dir)
        out.extend(difflib.unified_diff(old, new_text.splitlines(keepends=True), f"a/{rel}", f"b/{rel}"))
    return "".join(out)


def _relative(path: str, table_dir: str) -> str:
    try:
        return str(Path(path).relative_to(Path(table_dir).parent))
    except ValueError:
        return path


def write_proposal(proposal: Proposal, directory: str | Path | None = None) -> tuple[Path, Path]:
    """``proposal.json`` and ``proposal.diff`` in ``directory`` (default: ``<run>/triage``)."""
    directory = Path(directory or Path(proposal.run_dir) / "triage")
    directory.mkdir(parents=True, exist_ok=True)
    data = dataclasses.asdict(proposal)
    data["counts"] = proposal.counts()
    write_atomically(directory / PROPOSAL_FILE, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    write_atomically(directory / DIFF_FILE, proposal_diff(proposal))
    return directory / PROPOSAL_FILE, directory / DIFF_FILE


#: the largest proposal read: 32 MiB (the whole table is 652 KB; a proposal holds the new text of
#: each file it changes, its rows before and after)
MAX_PROPOSAL_BYTES = 32 << 20


class ProposalError(ValueError):
    """A proposal that cannot be applied: one line naming the proposal, the key and why."""


def _proposal_files(path: Path, data: Any, table: Path) -> list[tuple[Path, str, str, str]]:
    """(file, its key in the proposal, sha of the text it replaces, new text) of each file the proposal names, each
    checked: a file of the table (``<table>/<release>/<name>.json``, inside it, no link out),
    two strings."""
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise ProposalError(f"{path}: not a triage proposal (no 'files' object)")
    out, seen = [], {}
    for file, value in data["files"].items():
        key = f"files[{file!r}]"
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
            raise ProposalError(f"{path}: {key}: [sha256 of the text it replaces, the new text] (two strings), got "
                                f"{type(value).__name__}")
        target = Path(os.path.abspath(table / file if not Path(file).is_absolute() else file))
        try:
            rel = target.relative_to(Path(os.path.abspath(table)))
        except ValueError:
            rel = None
        if rel is None or len(rel.parts) != 2 or rel.parts[0].startswith(".") or not rel.parts[1].endswith(".json") \
                or rel.parts[1].startswith("."):
            raise ProposalError(f"{path}: {key}: not a file of the table {table} (<release>/<name>.json inside it): "
                                "refused")
        try:
            confined(target, table, missing_ok=True)
        except (UnsafeInputError, OSError) as exc:
            raise ProposalError(f"{path}: {key}: {exc}: refused") from None
        if target in seen:
            raise ProposalError(f"{path}: {key}: the same file as files[{seen[target]!r}]")
        seen[target] = file
        out.append((target, key, value[0], value[1]))
    return out


def _table_of(path: Path, data: dict, table_dir: str | Path | None) -> Path:
    named = data.get("table_dir")
    if not isinstance(named, str) or not named:
        raise ProposalError(f"{path}: key 'table_dir': the table folder the proposal was made against (a string)")
    table = Path(table_dir) if table_dir is not None else Path(named)
    if Path(named).resolve() != table.resolve():
        raise ProposalError(f"{path}: key 'table_dir': made against the table {named}, not {table}: propose again "
                            f"against {table} (or apply it with --table {named})")
    if not table.is_dir():
        raise ProposalError(f"{path}: key 'table_dir': {table} is not a folder")
    return table


def apply_proposal(path: str | Path, table_dir: str | Path | None = None) -> list[str]:
    """Write a (reviewed) proposal into the table, all its files or none. ``table_dir``: the
    table it must have been made against (None: the one it names). Everything is checked before
    anything is written: each file is one of the table's (inside it, no link out), unchanged
    since the proposal was made, and its new rows load with the table's own validator (each
    new text is written to a temporary in its folder and read back by
    :func:`interop.cases.failure_table.read_table_file`); then every temporary is renamed into
    place (a failing rename puts back the files already renamed). Raises
    :class:`ProposalError` (a ``ValueError``), one line naming the proposal and the key, for
    any bad proposal; OSError when the table cannot be written. Returns the files written."""
    path = Path(path)
    try:
        data = loads_json(read_user_bytes(path, max_bytes=MAX_PROPOSAL_BYTES).decode("utf-8"), path)
    except UnsafeInputError as exc:
        raise ProposalError(str(exc)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProposalError(f"{path}: not a JSON file ({exc})") from None
    if not isinstance(data, dict):
        raise ProposalError(f"{path}: not a triage proposal (a JSON object), got {type(data).__name__}")
    table = _table_of(path, data, table_dir)
    files = _proposal_files(path, data, table)
    before: dict[Path, str | None] = {}
    for target, key, sha, text in files:
        try:
            now = read_confined(target, table, max_bytes=MAX_PROPOSAL_BYTES).decode("utf-8") \
                if os.path.lexists(target) else None
        except (UnsafeInputError, OSError, UnicodeDecodeError) as exc:
            raise ProposalError(f"{path}: {key}: {exc}: refused") from None
        if _sha(now or "") != sha:
            raise ProposalError(f"{path}: {key}: the file changed since the proposal was made: propose again")
        before[target] = now
        if text:
            try:
                loads_json(text, f"{path}: {key}")
            except UnsafeInputError as exc:
                raise ProposalError(str(exc)) from None
            except json.JSONDecodeError as exc:
                raise ProposalError(f"{path}: {key}: the new text is not JSON ({exc})") from None
    temporaries: dict[Path, Path] = {}
    made: list[Path] = []  # release folders created for the temporaries
    done: list[Path] = []
    try:
        for target, key, _, text in files:
            if not text:
                continue
            if not target.parent.is_dir():
                target.parent.mkdir()
                made.append(target.parent)
            tmp = target.with_name(f".{target.name}.{os.getpid()}.proposed")
            write_atomically(tmp, text, root=table)
            temporaries[target] = tmp
            try:
                ft.read_table_file(tmp)
            except ft.TableError as exc:
                why = " ".join(str(exc).replace(str(tmp), str(target)).split())
                raise ProposalError(f"{path}: {key}: its rows do not load: {why}") from None
        written = []
        for target, _, _, text in files:  # every file checked: now all of them, or none
            if text:
                os.replace(temporaries.pop(target), target)
            elif before[target] is not None:
                target.unlink()
            else:
                continue
            done.append(target)
            written.append(str(target))
    except BaseException:
        for target in done:  # put back what was renamed before the failure
            if before[target] is None:
                target.unlink(missing_ok=True)
            else:
                write_atomically(target, before[target], root=table)
        raise
    finally:
        for tmp in temporaries.values():
            tmp.unlink(missing_ok=True)
        for folder in made:
            if not done:
                try:
                    folder.rmdir()
                except OSError:
                    pass
    ft.forget_loaded()
    try:
        ft.load_table(table)  # the whole table still loads and validates
    except ft.TableError as exc:
        raise ProposalError(f"{path}: applied, but the table no longer loads: {exc}") from None
    return written
