"""The case database: what is checked (:class:`Case`), where cases come from (operator
JSON configurations through :class:`OperatorConfig` / :func:`build_cases`, the model zoo,
the contract and property checks: :mod:`.catalog`), which of them are known Aidge defects
(:mod:`.expected_failures`, one table and one lookup) and how pytest runs an operator case
(:mod:`.suite`: :func:`~.suite.make_operator_fixture`, isolated runs).

``import interop.cases`` imports neither torch nor Aidge.
"""
from __future__ import annotations

from .attributes import SUPPORTED_ATTRS
from .case import Case, OperatorCase, case_id, case_seed
from .config import (INCLUDE_FORWARD_ONLY_CASES, LEAF_KEYS, PARAM_SPECS, ConfigError, OperatorConfig, build_cases,
                     detect_layout, load_config_file)

__all__ = ["Case", "OperatorCase", "OperatorConfig", "ConfigError", "build_cases", "case_id", "case_seed",
           "detect_layout", "load_config_file", "SUPPORTED_ATTRS", "INCLUDE_FORWARD_ONLY_CASES", "LEAF_KEYS",
           "PARAM_SPECS"]

