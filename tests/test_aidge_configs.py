"""Aidge's own operator benchmark configurations (aidge-benchmark 0.10.1, or the directory
of ``--aidge-configs DIR``), case by case: the Aidge operator built from its factory with
the configuration's attributes against its torch reference; a negative case (``error``,
``expected_error``) must be rejected by Aidge. Each case runs in a forked child (a crash
is that case's ``crash`` failure); expected failures come from the one table
(:mod:`interop.cases.expected_failures`, strict). Ids ``aidge.<file>_<label path>``:
``-k aidge.conv2d`` selects a file. The size policy is in :mod:`interop.cases.aidge_configs`.
"""
from __future__ import annotations

import pytest

from interop.cases.aidge_benchmark import read_benchmark_file
from interop.cases.aidge_check import run_benchmark_case
from interop.cases.aidge_configs import config_files, config_root, file_cases
from interop.cases.case import FORWARD_ONLY_BACKENDS
from interop.cases.config import ConfigError
from interop.cases.suite import prepare_parent


def _params(directory, backend: str) -> list:
    try:
        files = config_files(directory)
        root = config_root(directory)
    except ConfigError as exc:
        return [pytest.param(exc, id="aidge_configs_error")]
    params = []
    for path in files:
        try:
            cases = file_cases(read_benchmark_file(path, within=root), backend=backend)
        except ConfigError as exc:
            params.append(pytest.param(exc, id=f"aidge.{path.stem}_config_error"))
            continue
        for case in cases:
            params.append(pytest.param(case, id=case.id))
    return params


def pytest_generate_tests(metafunc):
    if "aidge_config_case" in metafunc.fixturenames:
        config = metafunc.config
        metafunc.parametrize("aidge_config_case",
                             _params(config.getoption("--aidge-configs"), config.getoption("--backend")))


def test_aidge_config(aidge_config_case, aidge_backend, request, record_property):
    if isinstance(aidge_config_case, Exception):
        raise aidge_config_case
    if aidge_config_case.skip_reason:  # the id in the reason: the report groups skips per file
        pytest.skip(f"{aidge_config_case.id}: {aidge_config_case.skip_reason}")
    if aidge_backend in FORWARD_ONLY_BACKENDS:
        pytest.skip(f"{aidge_config_case.id}: not run on backend {aidge_backend!r}: the check builds one Aidge node "
                    "and runs it with Aidge's Python scheduler, not through the C++ export")
    case = aidge_config_case  # on its backend, its table row attached: the interop plugin, at collection
    prepare_parent(aidge_backend)  # Aidge imported once per worker, not in every forked child
    result = run_benchmark_case(case)
    for key, value in result.items():
        record_property(key, value)
