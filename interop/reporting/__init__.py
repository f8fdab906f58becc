"""Results analysis: what ``nox -s report`` and ``analyze_results.py`` print.

A run of the suite writes records (:mod:`interop.records`); everything here reads them:

- :mod:`~interop.reporting.report`: :func:`build_report` (a JSON-able dict) and
  :func:`format_report` (its text), from a run's records
- :mod:`~interop.reporting.support`: the support matrix (``support.json`` / ``.md`` / ``.html``)
- :mod:`~interop.reporting.history`: the trend (``results/history.jsonl``), run to run and
  Aidge release to release
- :mod:`~interop.reporting.run`: ``python -m interop.reporting.run [pytest args]`` and
  ``--merge DIR...``, one findings run in a directory of its own (not imported here)
- :mod:`~interop.records.benchmarks`: ModelTester's benchmark JSONL -> :class:`BenchData`
- :mod:`~interop.reporting.asv_results`: asv's Aidge/torch ratios of one commit ->
  :class:`AsvRatios` (the report's figure for the cases asv benchmarked)
- :mod:`~interop.reporting.triage`: proposed table rows for untriaged OpInfo failures

Text, for what has no records (``analyze_results.py``'s documented job: a saved pytest output):

- :mod:`~interop.categories`: the failure categories (emoji, kind, meaning) and
  :func:`categorize`, which tells a failure's category from its message
- :mod:`interop.console` (not imported here): pytest's console output read back, its results
  handed to :func:`build_report` as rows of the records' shape (a
  :class:`~interop.reporting.report.TextRun`); nothing in this package reads console text
- :mod:`~interop.reading`: :func:`read_text`, :class:`UnreadableInput`
"""
from __future__ import annotations

from .asv_results import AsvRatios, load_asv_ratios
from ..records.benchmarks import BenchData, parse_benchmarks
from ..categories import CATEGORY_TABLE, KINDS, categorize, kind_of
from ..reading import UnreadableInput, read_text
from ..records.sources import case_id, operator_of
from .report import TextRun, build_report
from .report_text import format_report

__all__ = [
    "CATEGORY_TABLE",
    "KINDS",
    "UnreadableInput",
    "TextRun",
    "BenchData",
    "AsvRatios",
    "load_asv_ratios",
    "categorize",
    "kind_of",
    "case_id",
    "operator_of",
    "parse_benchmarks",
    "read_text",
    "build_report",
    "format_report",
]
