"""A record's outcome, said once: a strict XPASS (pytest reports a ``failed`` test whose expected
failure did not happen, ``xpass_strict``) is ``xpassed``, everything else its pytest outcome.

The rule is applied by the typed record's validator (:class:`interop.records.model.Record`),
so wherever a record is built or checked: where the plugin writes it
(:func:`interop.records.model.written`) and where the store reads it
(:func:`interop.records.model.checked`, for the runs written before 2026-12-04, whose strict
XPASS says ``failed``), and by :func:`normalized` for the progress line's part lines: every reader of records (report, support matrix, porting table, backends,
progress, triage, ledger) reads ``record["outcome"]`` and decides nothing. pytest's own summary
line counts a strict XPASS as ``failed``: :func:`pytest_outcome` says so, for the count check."""
from __future__ import annotations

from typing import Any

__all__ = ["outcome_of", "normalized", "pytest_outcome"]


def outcome_of(record: dict[str, Any]) -> str:
    """``xpassed`` for a strict XPASS, else the record's ``outcome`` (a string, ``None`` as ``"None"``)."""
    return "xpassed" if record.get("xpass_strict") else str(record.get("outcome"))


def normalized(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with its outcome said by :func:`outcome_of` (itself when it already is; else a new dict)."""
    if record.get("xpass_strict") and record.get("outcome") != "xpassed":
        return {**record, "outcome": "xpassed"}
    return record


def pytest_outcome(record: dict[str, Any]) -> Any:
    """The outcome pytest's summary line counts the record under (a strict XPASS: ``failed``)."""
    return "failed" if record.get("xpass_strict") else record.get("outcome")
