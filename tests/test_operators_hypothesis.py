"""Property-based operator test: elementwise and activation operators on edge-case inputs.

Each operator (the catalog's :data:`~interop.cases.catalog.PROPERTY_OPERATORS`, built from its
catalog module) is wrapped once (module scope) and fed tensors from
:func:`interop.diagnostics.strategies.tensors` (zeros, constants, float32 extremes, smallest normal and
subnormal values, ordinary numbers; the ``nonfinite`` sets add NaN and +-Inf), plus one
tensor holding every edge value at once. Aidge's output is compared with torch's through
the shared comparator (float32's rtol, no atol: subnormals count; NaN must sit where torch
has NaN).

Test ids: ``hypothesis_<Operator>_<finite|nonfinite>``. A difference is a finding: a strict
entry of ``interop.cases.expected_failures`` (kind ``property``) quoting the comparator's message.
Runs are derandomised (the same examples every run) and keep no example database.
"""
from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings

import interop
from interop.bridge.value_check import checks_deferred
from interop.cases.catalog import property_cases
from interop.diagnostics.strategies import edge_values, shapes, tensors
from interop.equivalence import assert_tensors_close

#: no absolute slack: with float32's default atol (1e-5) a kernel flushing subnormals (or any
#: value below 1e-5) to zero would pass unseen; rtol stays float32's default (1.3e-6)
ATOL = 0.0
PROPERTY = settings(max_examples=25, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "operator_case" not in metafunc.fixturenames:
        return
    cases = property_cases(backend=metafunc.config.getoption("--backend"))
    metafunc.parametrize("operator_case", [pytest.param(c, id=c.id)
                                           for c in cases])


@pytest.fixture(scope="module")
def wrapped(aidge_backend):
    """Case id -> (torch module, AidgeModule), wrapped once per module."""
    cache: dict[str, tuple[torch.nn.Module, interop.AidgeModule]] = {}

    def get(case):
        if case.operator not in cache:
            module = case.build_model()
            cache[case.operator] = (module, interop.wrap(module, case.input_size, backend=aidge_backend))
        return cache[case.operator]

    return get


def test_operator_on_edge_cases(operator_case, wrapped):
    case = operator_case
    op, values = case.operator, case.params["values"]
    flags = {k: v for k, v in case.params.items() if k != "values"}
    every_edge = torch.tensor(edge_values(torch.float32, **flags), dtype=torch.float32)

    torch_op, aidge_op = wrapped(case)

    def aidge_matches_torch(x):
        # the comparison is this test's own: the AidgeModule's first-call value check deferred.
        # Without it an example's outcome depended on the shared module's memory of checked
        # signatures (a new shape: ValueMismatchError; a shape an earlier example passed: the
        # comparator's AssertionError), and hypothesis's replay of the shrunk example could take
        # the other path: FlakyFailure when ReLU_nonfinite ran without ReLU_finite before it
        # (docs/testing.md, "Two flaky tests explained")
        with torch.no_grad(), checks_deferred():
            expected = torch_op(x)
            actual = aidge_op(x)
        assert_tensors_close(actual, expected, atol=ATOL, msg=f"{op} on {values} inputs: Aidge (actual) vs torch (expected)")

    # the search first, so that a failure shrinks to a minimal example (e.g. tensor([nan]))...
    PROPERTY(given(tensors(shape=shapes(min_dims=1, max_dims=3, max_side=5), dtype=torch.float32,
                           **flags))(aidge_matches_torch))()
    # ...then every edge value at once, whatever the search drew
    aidge_matches_torch(every_edge)
