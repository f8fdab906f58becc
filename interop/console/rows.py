"""Saved console output read back as rows of the records' shape: ``analyze_results.py``'s
documented path, and the only place that reads a failure's category, phase and operator out
of a test's text (:func:`text_run` hands the rows to :func:`interop.reporting.build_report`).

A run of this suite writes records (:mod:`interop.records`): the report, the support matrix,
the trend and the merge read those. A pytest output saved on its own (``pytest -ra > out.txt``,
piped into ``analyze_results.py``) has only its text: :func:`rows_from_console` turns each
:class:`~interop.reporting.pytest_output.TestResult` into a row with the same keys as a record,
reading what the text shows (:func:`~interop.categories.categorize`, the tag of an
expected failure, an AidgeError's ``Aidge <phase> failed (operator X)``, an AidgeCrash's words,
the comparator's figures). What the text does not show stays None: the configuration file of an
Aidge benchmark case is then guessed from the installed file names
(:mod:`interop.reporting.aidge_files`), a killed process is told apart only by the signal its
message names.
"""
from __future__ import annotations

import re
from typing import Any

from ..categories import AIDGE_FAILURE_RE, CRASH_MESSAGE_RE, SLOWER_RE, what_differs
from .pytest_output import WORKER_CRASH_RE, PytestRun, TestResult
from ..records.sources import attribution_of, source_of
from ..reporting.report import TextRun

__all__ = ["rows_from_console", "console_skip_lines", "text_run"]

_CASE_PREFIX = re.compile(r"^aidge\.\S+: ")
_AIDGE_WHERE = re.compile(r"operator (?P<op>[\w<>]+)")
_TAG_PARTS = re.compile(r"^(?:\[XPASS\(strict\)\]\s*)?\[(?P<cat>[^\]]+)\] (?P<op>\S+) (?P<phase>\w+): "
                        r"(?P<error>[^\n]*?)(?: \[attribution \w+\])?$", re.M)
_EQUIV_HEAD = re.compile(r"^\[(?P<case>[^,\]]+)(?:, (?:epoch|call) (?P<epoch>\d+))?\] (?P<head>.*?)(?: \[seed \d+\])?$")
_WHAT_PHASE = (("weights after", "step"), ("input grad", "backward"), ("grad of", "backward"),
               ("initial weights", "export"), ("parameter", "export"), ("loss", "forward"),
               ("output", "forward"))
_MISMATCHED = re.compile(r"Mismatched elements: (\d+ / \d+)")
_GREATEST = re.compile(r"Greatest absolute difference: (\S+)")
_SHAPES = re.compile(r"Shapes do not match[^\n]*")
_SIGNATURE = (re.compile(r"^\[[^\]]*\] "), re.compile(r" between model1 \([^)]*\) and model2 \([^)]*\)"),
              re.compile(r" \[seed \d+\]$"))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _signature(error: str) -> str:
    """An error without what differs from case to case (``[case, epoch N]``, the model
    classes, the seed), so that cases failing the same way group together."""
    for pattern in _SIGNATURE:
        error = pattern.sub("", error)
    return error.strip()


def _describe(result: TestResult, category: str) -> dict[str, Any]:
    """phase / aidge_operator / error (a signature shared by cases with the same defect) / detail."""
    message = result.message or ""
    operator, phase, error, detail = None, None, _first_line(message), None
    tag = _TAG_PARTS.match(message)
    aidge = AIDGE_FAILURE_RE.search(result.full_message)
    crash = CRASH_MESSAGE_RE.search(message)
    if tag:
        operator, phase, error = tag.group("op"), tag.group("phase"), _signature(tag.group("error"))
    elif WORKER_CRASH_RE.search(message):
        error = "the pytest-xdist worker running the case died (xdist does not report the signal)"
    elif crash:
        phase = crash.group("phase")
        error = f"process {crash.group('what')}" + (f" during {phase}" if phase else
                                                      f" {crash.group('outside')}" if crash.group("outside") else "")
        detail = f"innermost Python frame {crash.group('frame')}" if crash.group("frame") else None
    elif aidge:
        phase, error = aidge.group("phase"), aidge.group("msg").strip()
        where = _AIDGE_WHERE.search(aidge.group("where") or "")
        if where:
            operator = where.group("op")
    else:
        head = _EQUIV_HEAD.match(_first_line(message))
        if head:
            error = _signature(head.group("head"))
            what = what_differs(message) or ""
            phase = next((p for prefix, p in _WHAT_PHASE if what.startswith(prefix)), None)
            bits = []
            if head.group("epoch") is not None:
                bits.append(f"epoch {head.group('epoch')}")
            for pattern, fmt in ((_MISMATCHED, "{} elements"), (_GREATEST, "max abs diff {}")):
                found = pattern.search(message)
                if found:
                    bits.append(fmt.format(found.group(1)))
            shapes = _SHAPES.search(message)
            if shapes:
                bits.append(shapes.group(0))
            detail = ", ".join(bits) or None
        elif result.exc_type and not error.startswith(result.exc_type):
            error = f"{result.exc_type.rsplit('.', 1)[-1]}: {error}"
    slower = SLOWER_RE.search(message)
    if category == "slowdown_vs_torch" and phase is None and slower:
        phase = slower.group("phase")
    return {"aidge_operator": operator, "phase": phase, "error": error, "detail": detail}


def _skip_reasons(run: PytestRun) -> dict[str, str]:
    """case id -> reason, from ``-ra``'s ``SKIPPED [n] file:line: <case id>: reason`` lines (an
    Aidge configuration case names itself in its reason)."""
    reasons = {}
    for line in run.skip_lines:
        text = str(line.get("reason", ""))
        if text.startswith("aidge.") and ": " in text:
            case, _, why = text.partition(": ")
            reasons[case] = why
    return reasons


def rows_from_console(run: PytestRun) -> list[dict[str, Any]]:
    """One row per test of ``run``, with the keys of a record (what the text does not show: None)."""
    reasons = _skip_reasons(run)
    rows = []
    for result in run.results:
        row: dict[str, Any] = {
            "nodeid": result.nodeid, "case": result.case, "source": source_of(result.nodeid),
            "outcome": result.outcome, "xpass_strict": result.strict, "when": result.when,
            "operator": result.operator, "torch_op": None, "config_file": None, "backend": None, "dtype": None,
            "message": result.full_message, "exc_type": result.exc_type, "decided": "text",
            "category": None, "phase": None, "aidge_operator": None, "error": None, "detail": None,
            "attribution": None, "skip_reason": None, "mismatch": None, "signal": None}
        if result.outcome == "skipped":
            row["skip_reason"] = reasons.get(result.case) or (result.message or "").strip() or None
        category = result.category()
        if category is not None:
            row["category"] = category[0]
            row.update(_describe(result, category[0]))
            row["attribution"] = attribution_of(result.full_message, category[0])
            crash = CRASH_MESSAGE_RE.search(result.message or "")
            row["signal"] = crash.group("sig") if crash and crash.group("sig") else None
        rows.append(row)
    return rows


def console_skip_lines(run: PytestRun) -> list[dict[str, Any]]:
    """``-ra``'s ``SKIPPED [n] file:line: reason`` lines as ``{count, reason}``, an Aidge
    configuration case's id taken off its reason (one line per reason)."""
    return [{"count": s["count"], "reason": _CASE_PREFIX.sub("", s["reason"])} for s in run.skip_lines]


def text_run(run: PytestRun) -> TextRun:
    """What the report reads of ``run`` (:func:`interop.reporting.build_report`), as it reads a
    run's records: its rows (:func:`rows_from_console`), and what its text says of the run as a
    whole (pytest's counts and totals line, the duration, why it is incomplete, ``-ra``'s skips)."""
    return TextRun(rows_from_console(run), run.source, run.counts(), run.totals, run.duration_s, run.incomplete(),
                   console_skip_lines(run))
