"""The operator equivalence suite: every operator of the catalog (:mod:`interop.cases.catalog`),
case by case, PyTorch against Aidge through :class:`interop.ModelTester` (forward; loss,
backward, gradients and an SGD step when the case trains; over several epochs so that state
carried from one call to the next is tested too).

The tests are generated from the catalog: one test function ``test_<Op>_interop`` per
operator, parametrised over its cases, ids ``<Op>_<case path>``
(``test_Conv2D_interop[Conv2D_attributes_kernel_square]``), so ``-k Conv2D`` selects an
operator and a new catalog line is tested with no edit here. Each case runs in a forked
child (a crash inside Aidge fails that case with category ``crash``), first checks that the
imported Aidge graph really holds the operator under test, and expected failures come from
:mod:`interop.cases.expected_failures` (strict). A case whose backward is an expected failure
still has its forward verified on two calls with different inputs first.
"""
from __future__ import annotations

import pytest

from interop.cases.catalog import OPERATOR_CONFIGS
from interop.cases.suite import OperatorCaseRun, assert_operator_in_graph, operator_case_fixture, operator_test

operator_case = pytest.fixture(name="operator_case")(operator_case_fixture)

#: several epochs, so state carried between calls (weights after a step, buffers) is tested
EPOCHS = 3
#: forward calls verified before a backward that is an expected failure
FORWARD_CALLS = 2


def check_equivalence(case: OperatorCaseRun) -> None:
    """The body of every operator test; runs in the isolated child process."""
    from interop import ModelTester

    assert_operator_in_graph(case["aidge_model"], case["aidge_types"], operator=case["case"].operator)
    entry = case["expected_failure"]
    if case["test_backward"] and entry is not None:
        # a known failure: verify the forward first, on two calls with different inputs (a
        # known backward failure would stop the training run before its second forward)
        ModelTester(case["torch_model"], case["aidge_model"], name=case["name"], test_backward=False,
                    epochs=FORWARD_CALLS, benchmark=False, max_slowdown_ratio=None,
                    tolerance=case["case"].tolerance).test_multiple_step(case["input_size"])
    ModelTester(case["torch_model"], case["aidge_model"], name=case["name"], test_backward=case["test_backward"],
                epochs=EPOCHS, max_slowdown_ratio=None,
                tolerance=case["case"].tolerance).test_multiple_step(case["input_size"], case["output_size"])


for _config in OPERATOR_CONFIGS.values():
    globals()[f"test_{_config.name}_interop"] = operator_test(_config, check_equivalence)
del _config
