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
- :mod:`~interop.reporting.triage_propose`: the expected-failure table's changes a run proposes
  (``python -m interop.triage``)

Text, for what has no records (``analyze_results.py``'s documented job: a saved pytest output):

- :mod:`~interop.categories`: the failure categories (emoji, kind, meaning) and
  :func:`categorize`, which tells a failure's category from its message
- :mod:`interop.console` (not imported here): pytest's console output read back, its results
  handed to :func:`build_report` as rows of the records' shape (a
  :class:`~interop.reporting.report.TextRun`); nothing in this package reads console text
- :mod:`~interop.reading`: :func:`read_text`, :class:`UnreadableInput`
"""
from __future__ import annotations

from .._lazy import lazy_attributes

#: public name -> the module defining it, imported on first access: importing the package loads
#: none of them, so ``python -m interop.reporting.<module>`` runs a module the package has not
#: imported already (runpy warns and the module would exist twice), and costs nothing more
_EXPORTS = {  # relative to this package: ".x" is interop.x
    "AsvRatios": "asv_results", "load_asv_ratios": "asv_results",
    "BenchData": ".records.benchmarks", "parse_benchmarks": ".records.benchmarks",
    "CATEGORY_TABLE": ".categories", "KINDS": ".categories", "categorize": ".categories", "kind_of": ".categories",
    "UnreadableInput": ".reading", "read_text": ".reading",
    "case_id": ".records.sources", "operator_of": ".records.sources",
    "TextRun": "report", "build_report": "report",
    "format_report": "report_text",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_attributes(__name__, _EXPORTS)
