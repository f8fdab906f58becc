"""What a failure is, read from the typed exception that carries it: :func:`finding_of`.

The category, phase, Aidge operator and node, attribution and the comparator's figures are
decided where the exception is raised (:mod:`interop.errors`, ``EquivalenceError``,
``ConfigError``...) and carried as attributes; the category, phase and attribution are read
through :func:`interop.cases.expected_failures.failure_facts`, the one decider the guard uses
too. An exception of another library (a torch error, a plain ``assert`` in a unit test) carries
none: its category then comes from :func:`interop.reporting.categorize` of its text, and it is
marked ``decided: "text"``.

An expected failure (:class:`~interop.cases.expected_failures.ExpectedAidgeFailure`) is read
from its table entry (category, phase, operator, quote, attribution) and from the failure it
wraps (the run's own mismatch figures, node, signal): an xfail keeps what this run measured.
"""
from __future__ import annotations

import linecache
from pathlib import Path
from typing import Any

from ..categories import failure_facts, row_attribution

__all__ = ["finding_of", "entry_fields", "first_line", "MESSAGE_LIMIT"]

#: characters of a failure's full text kept in a record (a traceback of a crashed child can be long)
MESSAGE_LIMIT = 20_000


def first_line(text: str) -> str:
    text = (text or "").strip()
    return text.splitlines()[0] if text else ""


def _error_of(exc: BaseException, category: str) -> str:
    """One line naming the defect, the same for every case failing the same way."""
    what = getattr(exc, "what", None)
    if isinstance(what, str) and what:
        mismatch = getattr(exc, "mismatch", None) or {}
        if mismatch and mismatch.get("n_mismatched") is None:
            return f"{what}: shapes or structure differ"
        return f"{what} differs" if not what.endswith(" speed") else first_line(str(exc)).split("] ", 1)[-1]
    aidge = getattr(exc, "aidge_message", None)
    if isinstance(aidge, str) and aidge:
        # an AidgeCrash's innermost frame differs from case to case: it goes to the message only
        return first_line(aidge).split(" (innermost Python frame ")[0]
    if isinstance(exc, AssertionError) and category == "unknown":
        return _assertion_line(exc)
    line = first_line(str(exc))
    name = type(exc).__name__
    return line if line.startswith(name) or category not in ("unknown",) else f"{name}: {line}"


#: characters of an unclassified assertion's one line
ASSERTION_LIMIT = 300


def _assertion_line(exc: AssertionError) -> str:
    """A failed ``assert`` in one line: its statement (the source line of the frame that raised
    it) and pytest's explanation, whitespace collapsed. pytest's message alone, cut at its first
    line, read ``assert ('aidge scheduler' == 'aidge scheduler'`` (issue 32)."""
    statement = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        statement = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno).strip()
    explanation = " ".join(str(exc).split())
    if statement.startswith("assert"):
        line = statement + (f" [{explanation}]" if explanation and explanation != statement else "")
    else:
        line = explanation or statement or "assert failed"
    line = f"AssertionError: {line}"
    return line if len(line) <= ASSERTION_LIMIT else line[:ASSERTION_LIMIT - 3] + "..."


def finding_of(exc: BaseException | None) -> dict[str, Any]:
    """The record fields of a failure: ``category``, ``decided``, ``phase``, ``aidge_operator``,
    ``aidge_node``, ``attribution``, ``error`` (one line), ``message`` (the full text, capped
    at :data:`MESSAGE_LIMIT`), ``exc_type``, ``mismatch``, ``seed``, ``signal``,
    ``timed_out``, and for an expected failure ``expected`` (the table entry)."""
    if exc is None:
        return {}
    entry = getattr(exc, "entry", None)
    inner = exc.__cause__ if entry is not None and exc.__cause__ is not None else exc
    facts = failure_facts(inner)  # the one decider: the guard and the report read the same
    category, decided, phase = facts.category, facts.decided, facts.phase
    out: dict[str, Any] = {
        "category": category,
        "decided": decided,
        "phase": phase,
        "aidge_operator": _typed(inner, "operator", str),
        "aidge_node": _typed(inner, "node", str),
        "attribution": facts.attribution,
        "attribution_reason": _typed(inner, "attribution_reason", str),
        "error": _error_of(inner, category),
        "message": str(exc)[:MESSAGE_LIMIT],
        "exc_type": f"{type(inner).__module__}.{type(inner).__qualname__}",
        "mismatch": _typed(inner, "mismatch", dict),
        "seed": _typed(inner, "seed", int),
        "epoch": _typed(inner, "epoch", int),
        "signal": _typed(inner, "signal", str),
        "timed_out": bool(getattr(inner, "timed_out", False)),
    }
    if entry is not None:
        # the table decided this one: its category and phase were checked against the failure
        out.update(category=entry.category, phase=entry.phase, aidge_operator=entry.operator,
                   attribution=row_attribution(entry.attribution, entry.category, entry.phase),
                   decided="table", expected=entry_fields(entry))
    return out


def _typed(obj: Any, name: str, kind: type) -> Any:
    """``obj.name`` when it is a ``kind`` (what a record can hold), else None."""
    value = getattr(obj, name, None)
    return value if isinstance(value, kind) else None


def entry_fields(entry: Any) -> dict[str, Any]:
    """An expected-failure table entry as a record holds it."""
    return {"operator": entry.operator, "phase": entry.phase, "category": entry.category, "quote": entry.error,
            "attribution": entry.attribution, "note": entry.note, "defect": entry.defect,
            "detected_by": getattr(entry, "detected_by", None),
            "row": _row_ref(entry)}


def _row_ref(entry: Any) -> str | None:
    """``<release folder>/<file>#<row index>`` of a table entry (what the ledger joins a defect's rows by)."""
    file, index = getattr(entry, "file", ""), getattr(entry, "index", -1)
    if not file or not isinstance(index, int) or index < 0:
        return None
    path = Path(str(file))
    return f"{path.parent.name}/{path.name}#{index}"
