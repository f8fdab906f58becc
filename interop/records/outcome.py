"""A record's outcome, said once: a strict XPASS (pytest reports a ``failed`` test whose expected
failure did not happen, ``xpass_strict``) is ``xpassed``, everything else its pytest outcome.
Every reader of records (report, support matrix, porting table, backends, progress, triage)
asks here instead of deciding it again."""
from __future__ import annotations

from typing import Any

__all__ = ["outcome_of"]


def outcome_of(record: dict[str, Any]) -> str:
    """``xpassed`` for a strict XPASS, else the record's ``outcome`` (a string, ``None`` as ``"None"``)."""
    return "xpassed" if record.get("xpass_strict") else str(record.get("outcome"))
