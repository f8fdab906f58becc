"""A shim: the report's timing pass is :mod:`interop.reporting.timing_pass` (importable from the
installed package; ``python -m interop.reporting.timing_pass``). Kept for
``python -m tools.timing_pass`` and ``from tools import timing_pass``."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from interop.reporting.timing_pass import (BUDGET_S, DEFAULT_MAX_S, KINDS, METHOD, main,  # noqa: E402
                                           measure_case, wanted)

__all__ = ["BUDGET_S", "DEFAULT_MAX_S", "KINDS", "METHOD", "main", "measure_case", "wanted"]

if __name__ == "__main__":
    sys.exit(main())
