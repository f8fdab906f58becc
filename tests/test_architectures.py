"""Architectures nobody here wrote (MONAI, Hugging Face ``transformers``; tiny configurations,
random weights: :mod:`interop.zoo.architectures`), each in eval and in train mode, through the
check behind :func:`interop.verify` in a forked child: forward on two calls, then input and
parameter gradients, every mismatch attributed. Known failures are strict expected failures of
the one table (source ``architecture``), applied by the interop plugin at collection.

Ids: ``arch_<library>_<Class>[_<variant>]_<eval|train>`` (``-k arch_monai``,
``-k "arch_transformers and eval"``). The porting-readiness table is made from these
records: ``python -m interop.reporting.porting RUN_DIR``.
"""
from __future__ import annotations

import pytest

from interop.cases.architectures import architecture_cases


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "architecture_case" in metafunc.fixturenames:
        cases = architecture_cases(backend=metafunc.config.getoption("--backend"))
        metafunc.parametrize("architecture_case", [pytest.param(c, id=c.id) for c in cases], indirect=True)


@pytest.fixture
def architecture_case(request, aidge_backend):
    from interop.cases.architectures import prepare_libraries
    from interop.cases.suite import prepare_parent

    prepare_parent(aidge_backend)
    prepare_libraries(request.param)
    return request.param  # on its backend, its table row attached: the interop plugin, at collection


def test_architecture(architecture_case):
    from interop.cases.architectures import run_architecture_case
    from interop.cases.suite import CASE_TIMEOUT_S
    from interop.equivalence.isolation import run_isolated

    run_isolated(run_architecture_case, architecture_case, timeout=CASE_TIMEOUT_S)
