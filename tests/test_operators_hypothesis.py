"""Property-based operator test: elementwise and activation operators on edge-case inputs.

Each operator is wrapped once (module scope) and fed tensors from
:func:`interop.diagnostics.strategies.tensors` (zeros, constants, float32 extremes, smallest
normal and subnormal values, ordinary numbers; the ``nonfinite`` sets add NaN and +-Inf), plus one
tensor holding every edge value at once. Aidge's output is compared with torch's through
the shared comparator (float32's rtol, no atol: subnormals count; NaN must sit where torch
has NaN).

Test ids: ``hypothesis_<Operator>_<finite|nonfinite>``. A difference is a finding: a strict
entry of ``interop.expected_failures`` (operator section) quoting the comparator's message.
Runs are derandomised (the same examples every run) and keep no example database.
"""
from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from torch import nn

import interop
from interop.compare import assert_tensors_close
from interop.expected_failures import expected_failure_guard, lookup, xfail_marks
from interop.diagnostics.strategies import edge_values, shapes, tensors


class Elementwise(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


OPERATORS = {
    "ReLU": nn.ReLU,
    "LeakyReLU": lambda: nn.LeakyReLU(0.1),
    "Sigmoid": nn.Sigmoid,
    "Tanh": nn.Tanh,
    "Abs": lambda: Elementwise(torch.abs),
    "Neg": lambda: Elementwise(torch.neg),
    "Exp": lambda: Elementwise(torch.exp),
    "Sqrt": lambda: Elementwise(torch.sqrt),
    "Log": lambda: Elementwise(torch.log),
}
VALUE_SETS = {
    "finite": {},
    "nonfinite": {"allow_nan": True, "allow_infinity": True},
}
WRAP_SHAPE = (2, 3)
#: no absolute slack: with float32's default atol (1e-5) a kernel flushing subnormals (or any
#: value below 1e-5) to zero would pass unseen; rtol stays float32's default (1.3e-6)
ATOL = 0.0
PROPERTY = settings(max_examples=25, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "operator_case" not in metafunc.fixturenames:
        return
    backend = metafunc.config.getoption("--backend")
    params = []
    for op in OPERATORS:
        for values in VALUE_SETS:
            cid = f"hypothesis_{op}_{values}"
            entry = lookup(cid, backend)
            params.append(pytest.param((op, values, entry), id=cid, marks=xfail_marks(entry)))
    metafunc.parametrize("operator_case", params)


@pytest.fixture(scope="module")
def wrapped(aidge_backend):
    """Operator name -> (torch module, AidgeModule), wrapped once per module."""
    cache: dict[str, tuple[nn.Module, interop.AidgeModule]] = {}

    def get(op: str):
        if op not in cache:
            module = OPERATORS[op]().eval()
            cache[op] = (module, interop.wrap(module, WRAP_SHAPE, backend=aidge_backend))
        return cache[op]

    return get


def test_operator_on_edge_cases(operator_case, wrapped):
    op, values, entry = operator_case
    flags = VALUE_SETS[values]
    every_edge = torch.tensor(edge_values(torch.float32, **flags), dtype=torch.float32)

    with expected_failure_guard(entry):
        torch_op, aidge_op = wrapped(op)

        def aidge_matches_torch(x):
            with torch.no_grad():
                expected = torch_op(x)
                actual = aidge_op(x)
            assert_tensors_close(actual, expected, atol=ATOL, msg=f"{op} on {values} inputs: Aidge (actual) vs torch (expected)")

        # the search first, so that a failure shrinks to a minimal example (e.g. tensor([nan]))...
        PROPERTY(given(tensors(shape=shapes(min_dims=1, max_dims=3, max_side=5), dtype=torch.float32,
                               **flags))(aidge_matches_torch))()
        # ...then every edge value at once, whatever the search drew
        aidge_matches_torch(every_edge)
