"""Running a case as the suite does with a capture on, and its repro.py as an Aidge developer
does: the two steps every reproducer test shares (tests/unit/test_reproducer.py and
test_reproducer_*.py). POSIX only (a forked child), as the tests that import it say with their own skip."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interop.bridge import capture
from interop.equivalence.isolation import run_isolated
from interop.reproducers.bundle import write_bundle


def captured_case(tmp_path: Path, name: str, fn, timeout: float = 120) -> tuple[dict, BaseException]:
    """``fn`` run as a suite runs a case (a forked child) with a capture on; the bundle's meta.json
    and the failure the case raised (``fn`` must fail)."""
    folder = tmp_path / name
    capture.start(folder, name, write_bundle, tmp_path / "logs" / f"{name}.log")
    try:
        with pytest.raises(Exception) as info:
            run_isolated(fn, timeout=timeout)
    finally:
        capture.stop()
    return json.loads((folder / "meta.json").read_text()), info.value


def fresh_repro(folder: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python repro.py`` as an Aidge developer runs it: a new interpreter in isolated mode, where
    importing torch or interop fails."""
    code = ("import runpy, sys\nsys.modules['torch'] = None\nsys.modules['interop'] = None\n"
            "sys.argv = ['repro.py']\nrunpy.run_path('repro.py', run_name='__main__')\n")
    return subprocess.run([sys.executable, "-I", "-c", code], cwd=folder, capture_output=True, text=True,
                          timeout=timeout, env={"PATH": os.environ.get("PATH", ""), "OMP_NUM_THREADS": "1"})
