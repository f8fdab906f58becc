"""The defect registry: every known Aidge defect declared once, as data, under a name that never
changes (``interop/registry/defects.json``).

An entry holds: ``id`` (``D-`` and 8 hex digits; kept for ever, even when its pattern or title
is edited), ``title``, ``component`` (the Aidge library where the code that fails lives) and
``evidence`` (how that was decided: :func:`.components.component_of`), ``operator`` (Aidge's
type, or the ONNX op for an import gap), ``kind`` (the ledger's: no importer, no kernel, no
backward, wrong values, wrong shape, memory-unsafe, error...), ``phases`` (where it shows; empty:
any), ``backend``, and ``pattern``: Aidge's words as a regular expression (empty for a kind
without words: wrong values or shapes, where the operator and phase are the defect). Also
``aliases``: other ids that named the same defect before two entries were merged.

A failure matches an entry by kind, operator (its ``operators``: the variants of one Aidge
class, ``Conv2D`` / ``ConvDepthWise2D``), backend, phase and pattern; only an unmatched failure
gets a proposed entry (the ledger's signature hash, marked ``proposed``). ``check``, ``verify``,
``wrap``'s refusals, the records, the ledger and ``triage diff`` name a defect through
:func:`identify` (in :mod:`interop.reporting.ledger`), so the same defect has the same id and
title everywhere.

A registry file that cannot be read is an error naming the file, the entry and the key.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import re
from pathlib import Path
from typing import Any, Iterable, Sequence

from .components import component_of

__all__ = ["Defect", "RegistryError", "load", "match", "by_id", "dumps", "REGISTRY_PATH", "component_of", "ID_PATTERN"]

REGISTRY_PATH = Path(__file__).with_name("defects.json")
ID_PATTERN = re.compile(r"D-[0-9a-f]{8}")
_KEYS = {"id", "title", "component", "evidence", "operators", "kind", "phases", "backend", "pattern", "aliases",
         "note"}


class RegistryError(ValueError):
    """The registry file is not what it must be (the message names the file, entry and key)."""


@dataclasses.dataclass(frozen=True)
class Defect:
    id: str
    title: str
    component: str
    evidence: str
    operators: tuple[str, ...]
    kind: str
    phases: tuple[str, ...] = ()
    backend: str = "cpu"
    pattern: str = ""
    aliases: tuple[str, ...] = ()
    note: str = ""

    @property
    def operator(self) -> str:
        return self.operators[0] if self.operators else "?"

    def matches(self, *, kind: str, operator: str, phase: str | None, backend: str, error: str) -> bool:
        if kind != self.kind or backend != self.backend:
            return False
        if self.operators and operator not in self.operators:
            return False
        if self.phases and phase not in self.phases:
            return False
        return not self.pattern or re.search(self.pattern, " ".join(str(error or "").split())) is not None

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        for key in ("operators", "phases", "aliases"):
            out[key] = list(out[key])
        return out


def _entry(raw: Any, where: str) -> Defect:
    if not isinstance(raw, dict):
        raise RegistryError(f"{where}: an entry must be an object, got {type(raw).__name__}")
    unknown = set(raw) - _KEYS
    if unknown:
        raise RegistryError(f"{where}: unknown key(s) {sorted(unknown)} (keys: {sorted(_KEYS)})")
    for key in ("id", "title", "component", "kind"):
        if not isinstance(raw.get(key), str) or not raw.get(key):
            raise RegistryError(f"{where}: key {key!r} must be a non-empty string, got {raw.get(key)!r}")
    if not ID_PATTERN.fullmatch(raw["id"]):
        raise RegistryError(f"{where}: key 'id' must be D- and 8 hex digits, got {raw['id']!r}")
    for key in ("operators", "phases", "aliases"):
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RegistryError(f"{where}: key {key!r} must be a list of strings, got {value!r}")
    for key in ("evidence", "backend", "pattern", "note"):
        if key in raw and not isinstance(raw[key], str):
            raise RegistryError(f"{where}: key {key!r} must be a string, got {raw[key]!r}")
    try:
        re.compile(raw.get("pattern", ""))
    except re.error as exc:
        raise RegistryError(f"{where}: key 'pattern' is not a regular expression: {exc}") from None
    return Defect(id=raw["id"], title=raw["title"], component=raw["component"], evidence=raw.get("evidence", ""),
                  operators=tuple(raw.get("operators", [])), kind=raw["kind"], phases=tuple(raw.get("phases", [])),
                  backend=raw.get("backend", "cpu"), pattern=raw.get("pattern", ""),
                  aliases=tuple(raw.get("aliases", [])), note=raw.get("note", ""))


@functools.lru_cache(maxsize=8)
def _load(path: str, stamp: float) -> tuple[Defect, ...]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RegistryError(f"{path}: cannot read the defect registry: {exc}") from None
    entries = data.get("defects") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise RegistryError(f"{path}: the registry must be an object with a list 'defects'")
    out = tuple(_entry(raw, f"{path}, entry {k} ({raw.get('id') if isinstance(raw, dict) else '?'})")
                for k, raw in enumerate(entries))
    seen: dict[str, int] = {}
    for k, d in enumerate(out):
        for name in (d.id, *d.aliases):
            if name in seen:
                raise RegistryError(f"{path}, entry {k} ({d.id}): id {name!r} is already entry {seen[name]}'s")
            seen[name] = k
    return out


def load(path: str | Path | None = None) -> tuple[Defect, ...]:
    """The registry's entries (read once per file version)."""
    p = Path(path) if path is not None else REGISTRY_PATH
    try:
        stamp = p.stat().st_mtime
    except OSError as exc:
        raise RegistryError(f"{p}: cannot read the defect registry: {exc}") from None
    return _load(str(p), stamp)


def match(*, kind: str, operator: str, phase: str | None, backend: str, error: str,
          entries: Sequence[Defect] | None = None) -> Defect | None:
    """The registry entry a failure belongs to, or None (a new defect: the ledger proposes one)."""
    for d in (load() if entries is None else entries):
        if d.matches(kind=kind, operator=operator, phase=phase, backend=backend, error=error):
            return d
    return None


def dumps(entries: Sequence[dict[str, Any]]) -> str:
    """The registry file's text: one entry per line (a change to one defect is one line of diff)."""
    lines = [json.dumps(e, ensure_ascii=False) for e in entries]
    return '{"defects": [\n' + ",\n".join(lines) + "\n]}\n"


def by_id(name: str, entries: Iterable[Defect] | None = None) -> Defect | None:
    """The entry named ``name`` (its id or one of its aliases)."""
    for d in (load() if entries is None else entries):
        if name == d.id or name in d.aliases:
            return d
    return None
