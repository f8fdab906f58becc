"""Keeping the expected-failure table from a run's records: a proposal reviewed as a diff.

:func:`propose` reads one run (``records.jsonl`` + ``session.json``) against the table
(:mod:`interop.cases.failure_table`) for the run's Aidge release and proposes, never applies:

- **add**: new rows for the run's unexpected failures, of every source and backend, one row per
  reason (Aidge operator, phase, category, quote, attribution, backend, dtype); the quote is
  stripped of per-sample shapes, byte counts and addresses (:func:`.triage.quote_of`); OpInfo
  selectors say ``s*_`` for the sample index;
- **widen**: where a row of another release already says exactly this (same case, phase,
  category, its quote in the message), its ``aidge`` range is widened to the run's release
  instead of a new row;
- **edit**: a row whose case now fails with another message (Aidge reworded it), or in another
  category or phase, gets the new quote / category / phase;
- **fixed**: a row whose every case the run reached passed (strict XPASS): its range stops
  before the run's release ("fixed in X"), or the row goes when no release is left; a selector
  that only passing cases matched is dropped;
- **unreached**: rows of the release that no case of the run reached (listed, kept: the run may
  be a selection).

:func:`write_proposal` writes ``proposal.json`` (the whole new text of every changed file, with
the hash of the text it replaces) and ``proposal.diff`` (a unified diff, what a maintainer
reads) into the run's own folder; :func:`apply_proposal` writes the reviewed proposal into the
table, all its files or none: it refuses, naming the proposal and the key, a file outside the table
folder or reached through a link, a file that changed since, rows the table's own validator
refuses, a proposal nested too deeply; nothing is written until every file is checked.

This module is where these names are imported from (``python -m interop.triage``, the report, the
tests); the code lives in the modules it re-exports, by what each part does: :mod:`.triage_ranges`
(a row's release range widened or narrowed), :mod:`.triage_propose` (the proposal from a run's
records), :mod:`.triage_apply` (the proposal written and applied), :mod:`.triage_changelog` (the
changelog from one release to another) and :mod:`.triage_operators` (a row's Aidge operator from its
cases' records).
"""
from __future__ import annotations

from .triage_ranges import RELEASES, narrow, widen  # noqa: F401
from .triage_propose import Proposal, _case_of, _run_collects, propose, selector_of  # noqa: F401
from .triage_apply import (DIFF_FILE, MAX_PROPOSAL_BYTES, PROPOSAL_FILE, ProposalError, apply_proposal, proposal_diff,
                           write_proposal)  # noqa: F401
from .triage_changelog import release_diff  # noqa: F401
from .triage_operators import aidge_operator_of, apply_operator_changes, operator_changes, row_operators  # noqa: F401

__all__ = ["Proposal", "propose", "write_proposal", "apply_proposal", "release_diff", "widen", "narrow",
           "PROPOSAL_FILE", "DIFF_FILE", "ProposalError"]
