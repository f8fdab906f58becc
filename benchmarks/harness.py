"""asv's harness: :mod:`interop.reporting.bench_harness` (the cases, the torch/Aidge pair, the
correctness precheck, thread pinning, the Aidge/torch ratio; the report's timing pass times with
it too, from the installed package). This module is its thin user for asv, and *is* that module
once imported (``benchmarks.harness`` and ``interop.reporting.bench_harness`` are one module
object: a monkeypatch or a memo of either is the other's). What it adds for asv:

- the cases come from the JSON configurations of the checkout that holds this benchmark suite,
  not from the installed wheel of the benchmarked commit (which has no configs/): asv discovers
  the case ids once and uses them for every commit and environment (``INTEROP_CONFIG_DIR``);
- the harness's code is the checkout's too: where the installed ``interop`` is another commit's
  (asv benchmarking an earlier one), ``interop/reporting/bench_harness.py`` of this checkout is
  loaded by its path;
- a skipped case is said on stderr (asv shows it);
- the fork server is warmed up (:func:`~interop.reporting.bench_harness.warm_up`): each fork
  skips ~1 s of imports.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("INTEROP_CONFIG_DIR", str(_ROOT / "configs"))
_FILE = _ROOT / "interop" / "reporting" / "bench_harness.py"


def _load():
    """The harness: the package's module where the installed interop is this checkout's, else this
    checkout's file loaded by its path. Not one loader with the harness's ``_beside`` (which loads
    its parts by path the same way), because this one runs before any of the checkout's interop
    code is loaded (an earlier commit's installed interop has no such function to lend it), and
    while it runs ``benchmarks.harness`` is the harness being loaded, so the harness cannot import it."""
    try:
        spec = importlib.util.find_spec("interop.reporting.bench_harness")
    except ImportError:
        spec = None
    if spec is not None and spec.origin and Path(spec.origin).resolve() == _FILE:
        return importlib.import_module("interop.reporting.bench_harness")
    spec = importlib.util.spec_from_file_location(__name__, _FILE)  # another commit's interop is installed
    module = importlib.util.module_from_spec(spec)
    sys.modules[__name__] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(__name__, None)
        raise
    return module


_harness = _load()
_harness.on_skip = lambda line: print(line, file=sys.stderr)
_harness.warm_up()
sys.modules[__name__] = _harness  # one module: ``from benchmarks import harness`` is the package's
