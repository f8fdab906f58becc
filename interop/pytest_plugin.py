"""pytest plugin of the interop suite (registered through the ``pytest11`` entry point).

Options:
  --backend {cpu,cuda}   the Aidge backend the equivalence suites run on
                         (default: $INTEROP_BACKEND or cpu)
"""
from __future__ import annotations

import os

import pytest

BACKENDS = ("cpu", "cuda")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("interop", "PyTorch <-> Aidge equivalence suite")
    group.addoption(
        "--backend",
        choices=BACKENDS,
        default=os.environ.get("INTEROP_BACKEND", "cpu"),
        help="Aidge backend the equivalence suites run on (default: $INTEROP_BACKEND or cpu)",
    )


@pytest.fixture(scope="session")
def aidge_backend(request: pytest.FixtureRequest) -> str:
    """The Aidge backend under test; CUDA cases skip with the probe's reason when unusable."""
    backend = request.config.getoption("--backend")
    if backend == "cuda":
        from .tensor_converter import cuda_available

        ok, reason = cuda_available()
        if not ok:
            pytest.skip(f"--backend=cuda: {reason}")
    return backend
