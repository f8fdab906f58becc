"""PyTorch's own sample inputs (OpInfo, float32, CPU) as cases: every entry of
:data:`interop.cases.opinfo.OPINFO_OPS`, its first samples in the default run (all with
``INTEROP_OPINFO_SAMPLES=all``, ``nox -s opinfo``), each through the check behind
:func:`interop.verify` in a forked child: forward on two calls, then input gradients, every
mismatch attributed (aidge / export / precision). Known failures are strict expected
failures of the one table (kind ``opinfo``), with their attribution, applied by the interop
plugin at collection.

Ids: ``opinfo_<entry>_s<index>_<shapes and arguments>`` (``-k opinfo_nn.functional.conv2d``).
"""
from __future__ import annotations

import pytest

from interop.cases.opinfo import OpInfoUnavailable, opinfo_cases


def _params():
    try:
        return [pytest.param(c, id=c.id) for c in opinfo_cases()]
    except OpInfoUnavailable as exc:  # reported as one failing item; the other suites run
        return [pytest.param(exc, id="opinfo_source_unavailable")]


@pytest.fixture(params=_params())
def opinfo_case(request, aidge_backend):
    from interop.cases.suite import prepare_parent

    item = request.param
    if isinstance(item, Exception):
        raise item
    prepare_parent(aidge_backend)
    return item  # on its backend, its table row attached: the interop plugin, at collection


def test_opinfo(opinfo_case):
    from interop.cases.opinfo import run_opinfo_case
    from interop.cases.suite import CASE_TIMEOUT_S
    from interop.equivalence.isolation import run_isolated

    run_isolated(run_opinfo_case, opinfo_case, timeout=CASE_TIMEOUT_S)
