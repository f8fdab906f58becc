"""The inference contract on every network of the model zoo, torch side and Aidge side.

Each network of the model zoo (the catalog's :func:`~interop.cases.catalog.contract_cases`) is put in eval mode and checked with
:func:`interop.check_inference_contract`, one test per check, on the torch model and on its
:class:`~interop.AidgeModule` (``--backend``). Test ids: ``<Model>_<side>_contract_<check>``
(``pytest tests/test_contract.py -k "Transformer and aidge"``).

A check that cannot run skips with the check's reason (``device_parity`` without another
device or Aidge backend; ``--torch-device=cpu`` never touches a GPU, on either side). An Aidge model failing a check is a
finding: a strict entry of ``interop.cases.expected_failures`` (kind ``contract``) quoting the failure.
"""
from __future__ import annotations

import pytest
import torch

import interop
from interop.cases.catalog import contract_cases
from interop.diagnostics import check_inference_contract, parity_devices

#: dtype_parity on the torch side compares the float32 model with its float64 copy
DTYPES = (torch.float64,)
SEED = 0


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "contract_case" not in metafunc.fixturenames:
        return
    cases = contract_cases(backend=metafunc.config.getoption("--backend"))
    metafunc.parametrize("contract_case", [pytest.param(c, id=c.id)
                                           for c in cases])


@pytest.fixture(scope="module")
def zoo_cache():
    """name -> (eval model, input, AidgeModule or None): built once per module."""
    return {}


def _prepared(cache: dict, case, side: str, backend: str):
    key = (case.operator, side, backend)
    if key not in cache:
        model = case.build_model()
        x = torch.randn(case.input_size, generator=torch.Generator().manual_seed(SEED))
        if side == "aidge":
            model = interop.wrap(model, case.input_size, backend=backend)
        cache[key] = (model, x)
    return cache[key]


def test_contract(contract_case, zoo_cache, aidge_backend, torch_device, request):
    case = contract_case
    side, check = case.params["side"], case.params["check"]
    model, x = _prepared(zoo_cache, case, side, case.backend)
    option = request.config.getoption("--torch-device")
    if side == "torch":
        model, x = model.to(torch_device), x.to(torch_device)
        devices = None if option == "auto" else parity_devices(option)  # None: every other device
    else:  # an AidgeModule is compared with its twin on the other Aidge backend
        devices = () if option == "cpu" else None
    report = check_inference_contract(model, x, raise_on_failure=False, checks=[check], dtypes=DTYPES,
                                      devices=devices)
    result = report[check]
    if result.status == "SKIP":
        pytest.skip(f"{check}: {result.reason}")
    report.raise_if_failed()
