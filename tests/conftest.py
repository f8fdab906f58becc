"""Suite-wide settings: where results land, the Aidge backend under test."""
from __future__ import annotations

import os
from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parent.parent / "results"
# ModelTester's JSONL log (benchmarks.jsonl) goes to results/ unless the caller says otherwise.
os.environ.setdefault("INTEROP_RESULTS_DIR", str(RESULTS_DIR))
