"""PyTorch's own module samples (ModuleInfo, float32, CPU) as cases: every entry of
:data:`interop.cases.moduleinfo.MODULEINFO_MODULES`, in eval and in train mode, its first sample
of each in the default run (all with ``INTEROP_MODULEINFO_SAMPLES=all``, ``nox -s moduleinfo``),
each through the check behind :func:`interop.verify` in a forked child: forward on two calls,
then input and parameter gradients, every mismatch attributed. Known failures are strict
expected failures of the one table (source ``moduleinfo``), applied by the interop plugin.

Ids: ``moduleinfo_<Module>_<eval|train>_s<index>_<arguments and shapes>`` (``-k moduleinfo_Conv2d``).
"""
from __future__ import annotations

import pytest

from interop.cases.moduleinfo import ModuleInfoUnavailable, moduleinfo_cases


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "moduleinfo_case" not in metafunc.fixturenames:
        return
    try:
        params = [pytest.param(c, id=c.id) for c in moduleinfo_cases(backend=metafunc.config.getoption("--backend"))]
    except ModuleInfoUnavailable as exc:  # one failing item; the other suites run
        params = [pytest.param(exc, id="moduleinfo_source_unavailable")]
    metafunc.parametrize("moduleinfo_case", params, indirect=True)


@pytest.fixture
def moduleinfo_case(request, aidge_backend):
    from interop.cases.suite import prepare_parent

    item = request.param
    if isinstance(item, Exception):
        raise item
    prepare_parent(aidge_backend)
    return item  # on its backend, its table row attached: the interop plugin, at collection


def test_moduleinfo(moduleinfo_case):
    from interop.cases.moduleinfo import run_moduleinfo_case
    from interop.cases.suite import CASE_TIMEOUT_S
    from interop.equivalence.isolation import run_isolated

    run_isolated(run_moduleinfo_case, moduleinfo_case, timeout=CASE_TIMEOUT_S)
