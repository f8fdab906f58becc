"""The expected failures (every known Aidge defect the suites run into) and the one lookup
that pytest, asv, ``verify`` and the reports use.

The table is data: JSON files under ``interop/cases/expected/<release>/``, one file per
source and reason, read, validated and indexed by :mod:`interop.cases.failure_table` (the
schema is there) and kept by ``python -m interop.triage`` from a run's records. Each row
names the Aidge operator responsible, the phase (``import`` / ``compile`` / ``forward`` /
``backward`` / ``step``), the category, Aidge's error text (quoted; for a numerical mismatch
the comparator's), the Aidge releases it applies to, a note, and the cases it concerns as
``"<Operator>:<label glob>"`` selectors. A case's *label* is its name inside its operator or
model (:attr:`interop.cases.case.Case.label`: ``attributes_kernel_square``, ``train``); a
selector matches the whole label or its tail after an ``_`` (``no_bias`` matches
``attr_no_bias`` and ``attr_batch_8_no_bias``), so a row does not depend on how a JSON file
groups its cases.

One lookup, :func:`expected_failure`, keyed by (case, phases, backend): among the rows of the
installed Aidge release covering the case on the backend whose phase the run reaches, the one
with the earliest phase (the run stops there). A case that does not train never reaches
``backward``/``step``: its forward stays verified.

Rows are strict: a covered case that passes is XPASS(strict), i.e. a failure, so a fixed
Aidge shows up. A failure that does not quote the row's text is a real failure. A failure
that quotes it but that the categoriser (:func:`interop.reporting.categorize`, the one place
that decides a category) puts in another category or phase is a real failure too
(:class:`ExpectedFailureMismatch`): the row must be corrected.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
from typing import Iterable, Iterator

# the one decider of what a failure is lives in the lowest layer (verify's Verdict reads it too)
from ..categories import CATEGORIES, FailureFacts, attribution_rule, failure_facts, row_attribution
from .case import PHASES, on_backend
from .failure_table import EXPORT_CATEGORY, ExpectedFailure
from . import failure_table
from .config_dir import config_folder_problem
from .failure_table import SHARD_RUN, TableError, TableIndex

__all__ = [
    "CATEGORIES",
    "PHASES",
    "ExpectedFailure",
    "ExpectedAidgeFailure",
    "ExpectedFailureMismatch",
    "EXPECTED_FAILURES",
    "EXPORT_CATEGORY",
    "expected_failure",
    "with_expected_failure",
    "expected_failure_guard",
    "quotes_failure",
    "disagreements",
    "xfail_marks",
    "phase_of",
    "FailureFacts",
    "failure_facts",
    "attribution_rule",
]




def case_dtype(case) -> str:
    """The dtype a case computes in, as rows name it (``float32`` unless its source says)."""
    return str((case.params or {}).get("dtype") or "float32")


class ExpectedAidgeFailure(Exception):
    """Raised when a case fails exactly as its table entry says (turned into XFAIL)."""


class ExpectedFailureMismatch(AssertionError):
    """A failure quotes an entry's error text, but the categoriser puts it in another
    category or phase than the entry says: the entry is wrong, the test fails."""


# ---------------------------------------------------------------------------------------
# The table: data files (interop/cases/expected/), the rows of the installed Aidge release
# ---------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _table():
    return failure_table.applicable(failure_table.load_table())


def suite_input_problem() -> str | None:
    """Why the suites cannot build their cases, in one line naming the file (and the row and
    key), or None: the expected-failure table does not load (a malformed file, a FIFO, a missing
    folder, ``INTEROP_AIDGE_RELEASE`` not a release) or the operator configuration folder is not
    there. Checked once when a session collects the suites (:mod:`interop.pytest_plugin`): it was
    every operator's ``<Op>_config_error``, blamed on ``configs/<Op>.json``, and with ``-k`` a
    run that said only "56 deselected"."""
    try:
        _table()
    except (TableError, ValueError) as exc:  # packaging's InvalidVersion is a ValueError
        return f"the expected-failure table cannot be loaded: {exc}"

    return config_folder_problem()


@functools.lru_cache(maxsize=1)
def _index():
    return TableIndex(_table())


def __getattr__(name: str):
    # EXPECTED_FAILURES: the rows of the installed release, read on first use (not at import)
    if name == "EXPECTED_FAILURES":
        return _table()
    if name == "OPINFO_SHARD_ENTRIES":  # the entries of the full run's shard (checked against that shard)

        return frozenset(id(e) for e in _table() if e.run == SHARD_RUN)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------------------
# The lookup
# ---------------------------------------------------------------------------------------
def expected_failure(case, backend: str | None = None, phases: Iterable[str] | None = None,
                     table: Iterable[ExpectedFailure] | None = None) -> ExpectedFailure | None:
    """The entry that decides ``case`` (a :class:`~interop.cases.case.Case`) on ``backend``
    (default: the case's) when the run goes through ``phases`` (default: the case's own
    phases; asv passes the phases up to the one it times): among the covering entries, the
    one with the earliest phase. None when the case is expected to pass. ``table``: these
    entries instead of the installed release's rows (indexed)."""
    backend = backend or case.backend
    reached = set(case.phases if phases is None else phases)
    candidates = _index().candidates(case.kind, case.operator) if table is None else table
    label, dtype = case.label, case_dtype(case)
    hits = [e for e in candidates if e.phase in reached and e.covers(case.kind, case.operator, label, backend, dtype)]
    return min(hits, key=lambda e: PHASES.index(e.phase), default=None)


def with_expected_failure(case, backend: str | None = None):
    """``case`` on ``backend`` (default: its own) with the entry that decides it there
    attached (:func:`expected_failure`): what the catalog, ``build_cases`` and the pytest
    fixtures hand out."""
    case = on_backend(case, backend or case.backend)
    return dataclasses.replace(case, expected_failure=expected_failure(case))


def phase_of(exc: BaseException) -> str | None:
    """The phase a failure happened in: an AidgeError's own, or the part of the
    equivalence check an EquivalenceError names (output/loss: forward, gradients: backward,
    weights after the step: step)."""
    return getattr(exc, "phase", None) or None  # EquivalenceError decides its own from what differs


#: what a memory-unsafe defect may end as (:attr:`ExpectedFailure.memory_unsafe`)
_MEMORY_UNSAFE = frozenset({"crash", "hang", "accepts_invalid_input"})
_ACCEPTED = "Aidge accepts invalid input"


def quotes_failure(entry: ExpectedFailure, text: str) -> bool:
    """Whether a failure's text quotes the entry (a memory-unsafe entry: also a run on garbage)."""
    return any(quote in text for quote in entry.quotes) or (entry.memory_unsafe and _ACCEPTED in text)


def disagreements(entry: ExpectedFailure, category: str | None, phase: str | None,
                  attribution: str | None) -> list[str]:
    """How a failure that quotes ``entry`` differs from it (empty: the entry says this failure):
    the guard's rule, and the triage tool's when it asks which row says a recorded failure."""
    wrong = []
    if entry.memory_unsafe and (category in _MEMORY_UNSAFE or category in entry.other_categories):
        category = entry.category  # the entry says why one heap faults, another loops or runs on
    if category != entry.category:
        wrong.append(f"category {category!r} (entry: {entry.category!r})")
    if phase not in (None, "unknown") and phase != entry.phase and not entry.memory_unsafe:  # a crash outside the bridge has no phase
        wrong.append(f"phase {phase!r} (entry: {entry.phase!r})")
    # a row without its own attribution says the rule's (Aidge's, in an Aidge category): a failure that
    # says it is the export's (an invalid exported graph, onnxruntime differing from torch too) disagrees
    said = row_attribution(entry.attribution, entry.category, entry.phase)
    if said and attribution and attribution != said:
        wrong.append(f"attribution {attribution!r} (entry: {said!r})")
    return wrong


def _check_entry(entry: ExpectedFailure, exc: BaseException) -> None:
    facts = failure_facts(exc)
    text, category, phase = str(exc), facts.category, facts.phase
    # the guard holds a row to what the failure says of itself, not to the rule's guess from its category
    attribution = facts.attribution if facts.stated else None
    wrong = disagreements(entry, category, phase, attribution)
    if wrong:
        mismatch = ExpectedFailureMismatch(
            f"this failure quotes the expected-failure entry {entry.operator} {list(entry.cases)} but the "
            f"categoriser gives it {' and '.join(wrong)}: correct the entry in "
            f"{entry.file or 'interop/cases/expected/'}\n--- actual failure ---\n{text}")
        # what the failure itself is, typed (the records and the triage tool read these, not the text)
        mismatch.category, mismatch.phase, mismatch.attribution = category, phase, attribution
        mismatch.operator = getattr(exc, "operator", None)
        raise mismatch from exc


@contextlib.contextmanager
def expected_failure_guard(entry: ExpectedFailure | None) -> Iterator[None]:
    """Inside: a failure whose message contains ``entry.error``, in the entry's category
    and phase, becomes :class:`ExpectedAidgeFailure` (what the strict xfail mark accepts);
    any other failure propagates unchanged and fails the test."""
    if entry is None:
        yield
        return
    try:
        yield
    except ExpectedAidgeFailure:
        raise  # already decided (a guard inside this one)
    except Exception as exc:  # AssertionError included
        if quotes_failure(entry, str(exc)):
            _check_entry(entry, exc)
            expected = ExpectedAidgeFailure(f"{entry.reason}\n--- actual failure ---\n{exc}")
            expected.entry = entry  # what the records read (interop.records.classify)
            raise expected from exc
        raise


def xfail_marks(entry: ExpectedFailure | None) -> list:
    """The pytest marks for a case: a strict xfail accepting only ExpectedAidgeFailure."""
    if entry is None:
        return []
    import pytest

    return [pytest.mark.xfail(reason=entry.reason, strict=True, raises=ExpectedAidgeFailure)]
