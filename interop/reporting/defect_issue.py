"""An upstream report per defect, ready to paste: ``defects/<id>/ISSUE.md`` and ``standalone.py``.

For each entry of the ledger (:mod:`interop.reporting.ledger`) that has a reproducer, the run
directory gets ``defects/<id>/``:

- ``standalone.py``: one file that needs numpy, onnx and Aidge only, written from the smallest
  reproducer bundle (:mod:`interop.reproducers`): the graph as ``onnx.helper`` code
  (``make_node``, ``make_graph``, ``make_model``; constants as numpy literals), the inputs and the
  expected values as numpy literals (``np.array([...], dtype=np.float32).reshape(...)``) when each
  holds at most :data:`LITERAL_MAX_ELEMENTS` elements and the literals stay under
  :data:`LITERAL_MAX_CHARS`; a larger graph or value is read from the bundle's file of the same
  name, copied beside the script (``model.onnx``, ``test_data_set_0/<name>.pb``: ISSUE.md says
  which to attach). Then the harness of the bundle's own ``repro.py`` (what checked the bundle:
  import, compile, run, compare) and an entry point of its own: exit 1 while the defect is present,
  printing expected against actual, 0 once Aidge computes the expected values, 2 when it cannot
  run. No encoded blob; the suite's case ids and messages are not in it.
- ``ISSUE.md``: Aidge's side first: a title, the versions of exactly what ``standalone.py``
  imports (``importlib.metadata``) and the ``pip install`` line for them, what happens (for a
  value or shape mismatch, what ``standalone.py`` prints on the attached graph: its expected and
  actual values, never the whole model's), Aidge's own words, the graph (each node: op, inputs
  with shapes and dtypes, attributes), how to run it, the script inline when the issue stays under
  :data:`INLINE_LIMIT` characters (GitHub's limit on an issue's body is 65,536) and, else, which
  files to attach; then the defect's impact, and last, marked as the suite's own and not needed to
  reproduce, "Affected cases in aidge-interop": its ledger id, the check that saw it and its words,
  the test ids.

Nothing is written outside ``<run>/defects/`` (each file atomically); a bundle that cannot be read
leaves a report without the graph or the script, saying why.

This module is where these names are imported from (the ledger, the report, the tests); the code lives
in the modules it re-exports, by what each part does: :mod:`.defect_issue_literals` (values as Python
source), :mod:`.defect_issue_script` (``standalone.py``), :mod:`.defect_issue_text` (``ISSUE.md``) and
:mod:`.defect_issue_write` (writing both into the run, running the script).
"""
from __future__ import annotations

from .defect_issue_literals import array_literal  # noqa: F401
from .defect_issue_script import (LITERAL_MAX_CHARS, LITERAL_MAX_ELEMENTS, _BODY_MARK, _graph_code, standalone_parts,
                                  standalone_script)  # noqa: F401
from .defect_issue_text import DISTRIBUTIONS, INLINE_LIMIT, issue_text, script_versions  # noqa: F401
from .defect_issue_write import (ISSUES_DIR, RUN_KINDS, RUN_TIMEOUT_S, run_standalone, versions_of,
                                 write_issues)  # noqa: F401

__all__ = ["write_issues", "issue_text", "standalone_script", "standalone_parts", "script_versions", "run_standalone",
           "array_literal", "INLINE_LIMIT", "ISSUES_DIR", "LITERAL_MAX_ELEMENTS", "LITERAL_MAX_CHARS"]
