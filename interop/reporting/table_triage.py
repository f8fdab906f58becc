"""The two names :mod:`.run_analysis` still imports from here (``propose``, ``write_proposal``), until its
import reads them from :mod:`.triage_propose` and :mod:`.triage_apply`, where the table triage's code is
(``python -m interop.triage``); nothing else imports this module."""
from __future__ import annotations

from .triage_apply import write_proposal  # noqa: F401
from .triage_propose import propose  # noqa: F401
