"""The Aidge release ranges of the expected-failure table's rows, as triage edits them: :func:`widen` (a
range made to hold one more release), :func:`narrow` (a range without a release that fixed the row), and
:data:`RELEASES`, the releases the project follows, that a narrowed range is checked against. Part of
the table triage (:mod:`.triage_propose`, ``python -m interop.triage``).
"""
from __future__ import annotations

import json
from pathlib import Path

from ..cases import failure_table as ft

__all__ = ["RELEASES", "widen", "narrow"]

#: the Aidge releases the project follows (interop/aidge_releases.json, the one list; nox -s release-matrix):
#: what a narrowed range is checked against
RELEASES = tuple(json.loads((Path(__file__).resolve().parents[1] / "aidge_releases.json").read_text(encoding="utf-8"))
                 ["releases"])


# ---------------------------------------------------------------------------------------
# release ranges
# ---------------------------------------------------------------------------------------
def _alternatives(spec) -> list[str]:
    return [spec] if isinstance(spec, str) else list(spec)


def _pack(alternatives: list[str]):
    return alternatives[0] if len(alternatives) == 1 else alternatives


def _bounds(alternative: str, op: str) -> list[str]:
    return [s.strip()[len(op):] for s in alternative.split(",") if s.strip().startswith(op)
            and not s.strip().startswith(op + "=")]


def widen(spec, release: str):
    """``spec`` made to hold ``release`` too: a lower bound just above it moves down to it,
    else ``==release`` is added as an alternative."""
    from packaging.version import Version

    if ft.release_matches(spec, release):
        return spec
    alternatives = _alternatives(spec)
    for i, alt in enumerate(alternatives):
        lower = _bounds(alt, ">=")
        if len(lower) == 1 and Version(release) < Version(lower[0]):
            candidate = alt.replace(f">={lower[0]}", f">={release}")
            if ft.release_matches(candidate, release):
                alternatives[i] = candidate
                return _pack(alternatives)
    return _pack(alternatives + [f"=={release}"])


def narrow(spec, release: str, releases=RELEASES):
    """``spec`` without ``release`` (fixed there): ``==release`` alternatives go; where
    ``release`` is the first known release an alternative holds, it starts at the next one;
    where it is the newest, it ends before it (``<release``); else ``!=release``. None when no
    known release is left."""
    from packaging.version import Version

    known = sorted({*releases, release}, key=Version)
    out = []
    for alt in _alternatives(spec):
        if not ft.release_matches(alt, release):
            out.append(alt)
            continue
        if alt.strip() == f"=={release}":
            continue
        held = [r for r in known if ft.release_matches(alt, r)]
        rest = [r for r in held if r != release]
        if rest and held[0] == release and f">={release}" in alt:  # the first release it held: starts later
            out.append(alt.replace(f">={release}", f">={rest[0]}"))
        elif held and held[-1] == release:
            out.append(f"{alt},<{release}")
        else:
            out.append(f"{alt},!={release}")
    out = [alt for alt in out if any(ft.release_matches(alt, r) for r in known)]
    return _pack(out) if out else None
