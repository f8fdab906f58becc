"""What :class:`~interop.equivalence.tester.ModelTester`'s timings read beside their samples: Aidge's own
scheduler seconds inside a model (an AidgeModule or a wrapper holding some), aidge_core's version and
how many pytest-xdist workers shared the machine (the JSON line of :attr:`ModelTester.BENCH_LOG_FILE
<interop.equivalence.tester.ModelTester.BENCH_LOG_FILE>`)."""
from __future__ import annotations

import os
from importlib.metadata import version

import torch


def _test_workers() -> int:
    """How many pytest-xdist workers run tests in this session (1 outside xdist or pytest)."""
    try:
        return max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1))
    except ValueError:
        return 1


def _aidge_seconds(model) -> float | None:
    """Seconds spent in Aidge's scheduler so far by ``model`` (an AidgeModule) or by the
    AidgeModules inside it (a wrapper such as the operator suite's input-range module);
    None when it holds none."""
    from ..bridge import AidgeModule, ExportCppModule

    backends = (AidgeModule, ExportCppModule)  # ExportCppModule: the compiled model_forward's own time
    if isinstance(model, backends):
        return model.aidge_time_s
    if not isinstance(model, torch.nn.Module):
        return None
    found = [m.aidge_time_s for m in model.modules() if isinstance(m, backends)]
    return sum(found) if found else None


def _own_seconds(model, before: float | None) -> float | None:
    """Aidge's scheduler seconds spent by ``model`` since ``before`` (from
    :func:`_aidge_seconds`), or None."""
    after = _aidge_seconds(model)
    return None if before is None or after is None else after - before


def _aidge_version() -> str | None:
    try:
        return version("aidge_core")
    except Exception:
        return None
