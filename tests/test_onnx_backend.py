"""ONNX's own backend tests as cases (:mod:`interop.cases.onnx_conformance`): every node test of
the installed onnx and its shipped pytorch-converted, pytorch-operator, simple and light model
tests, Aidge run as an ONNX backend (:class:`interop.bridge.onnx_backend.AidgeBackend`) in a forked
child, each output compared with onnx's expected one by the oracle and every mismatch attributed
with onnxruntime on the same model. Known failures are strict expected failures of the one table
(kind ``onnx_backend``), applied by the interop plugin at collection; tests Aidge cannot be asked
(strings, sequences, optional types, other domains, random expected outputs) are skipped with
their reason.

Ids: ``onnx_<group>_<onnx test name>`` (``-k onnx_node_test_dropout``). ``INTEROP_ONNX_GROUPS``
(a comma list of node, pytorch-converted, pytorch-operator, simple, light) narrows the collection.
docs/onnx-conformance.md has the scoreboard and the cost.
"""
from __future__ import annotations

import pytest

from interop.cases.onnx_conformance import onnx_backend_cases


def _params():
    try:
        return [pytest.param(c, id=c.id) for c in onnx_backend_cases()]
    except ImportError as exc:  # onnx's backend tests missing: one failing item, the other suites run
        return [pytest.param(exc, id="onnx_backend_source_unavailable")]


@pytest.fixture(params=_params())
def onnx_backend_case(request, aidge_backend):
    from interop.cases.suite import prepare_parent

    item = request.param
    if isinstance(item, Exception):
        raise item
    if item.skip_reason:
        pytest.skip(item.skip_reason)
    prepare_parent(aidge_backend)
    return item  # on its backend, its table row attached: the interop plugin, at collection


def test_onnx_backend(onnx_backend_case):
    from interop.cases.onnx_conformance import run_onnx_backend_case
    from interop.cases.suite import CASE_TIMEOUT_S
    from interop.equivalence.isolation import run_isolated

    run_isolated(run_onnx_backend_case, onnx_backend_case, timeout=CASE_TIMEOUT_S)
