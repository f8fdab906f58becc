"""The model suite: does Aidge compute what PyTorch computes on whole reference networks?

Every network of the model zoo runs in the two configurations the catalog expands it into
(:func:`interop.cases.catalog.model_cases`, also what asv times):

- ``<Name>_eval``: ``model.eval()``, EVAL export, forward only (several seeded batches);
  BatchNorm normalises with its running statistics on both sides.
- ``<Name>_train``: ``model.train()``, TRAINING export, then ``EPOCHS`` steps of forward,
  MSE loss, backward and one SGD step on each side (torch.optim.SGD for torch, Aidge's SGD
  for Aidge); outputs, loss, input gradients, every parameter gradient and every weight
  after the step are compared. For a BatchNorm network, *train* means what it means in
  torch: BatchNorm normalises with the statistics of the batch. (Freezing BatchNorm in eval
  mode would be fine-tuning, not training, and would hide Aidge's train-mode BatchNorm.)

``ModelTester`` runs the comparison (``max_slowdown_ratio=None``: speed is the benchmarks'
business, never a test verdict). Expected failures come from ``interop.cases.expected_failures``
(strict: a fixed Aidge turns them into XPASS(strict), a failure with another cause fails).

Select with ``-k``: ``pytest tests/test_models.py -k LeNet_eval``.
"""
from __future__ import annotations

import pytest
import torch

import interop
from interop.cases.case import FORWARD_ONLY_BACKENDS
from interop.cases.catalog import model_cases
from interop.cases.expected_failures import expected_failure
from interop.equivalence import assert_outputs_close
from interop.equivalence.tester import EquivalenceError
from interop.zoo.models import MODEL_CASES, model_case

#: steps per ``_train`` case (and seeded batches per ``_eval`` case)
EPOCHS = 3

_BATCHNORM = (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d, torch.nn.BatchNorm3d)


def _has_batchnorm(spec: dict) -> bool:
    return any(isinstance(m, _BATCHNORM) for m in spec["model"]().modules())


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise ``model_test_case`` over the catalog's model cases on the backend under
    test (``--backend``); the interop plugin gives each its expected failure's strict xfail."""
    if "model_test_case" not in metafunc.fixturenames:
        return
    cases = model_cases(backend=metafunc.config.getoption("--backend"))
    metafunc.parametrize("model_test_case", [
        pytest.param(c, id=c.id, marks=[pytest.mark.skip(reason=c.skip_reason)] if c.skip_reason else [])
        for c in cases])


def _skip_if_forward_only(backend: str, what: str) -> None:
    if backend in FORWARD_ONLY_BACKENDS:
        pytest.skip(f"not applicable on backend {backend!r} (inference only): {what}")


def test_model(model_test_case, aidge_backend: str) -> None:
    case = model_test_case
    model = case.build_model()
    try:
        aidge_model = interop.wrap(model, case.input_size, backend=case.backend, training=case.training)
    except interop.InteropError as exc:
        exc.add_note(f"case {case.id} ({type(model).__name__}) on backend {case.backend!r}")
        raise
    tester = interop.ModelTester(
        model, aidge_model, name=case.id, test_backward=case.test_backward,
        epochs=EPOCHS, max_slowdown_ratio=None, tolerance=case.tolerance)
    tester.test_multiple_step(case.input_size)


# --- the declarations themselves ------------------------------------------------------------
@pytest.mark.parametrize("case", MODEL_CASES, ids=[c["name"] for c in MODEL_CASES])
def test_declared_shapes_and_deterministic_construction(case: dict) -> None:
    rng_before = torch.get_rng_state()
    first, second = case["model"](), case["model"]()
    assert torch.equal(torch.get_rng_state(), rng_before), (
        f"model case {case['name']!r}: key 'model': building the model changed the global RNG")
    assert_outputs_close(dict(second.state_dict()), dict(first.state_dict()), rtol=0, atol=0,
                         name="state", msg=f"model case {case['name']!r}: key 'model' is not deterministic")
    first.eval()
    with torch.no_grad():
        out = first(torch.zeros(case["input_size"]))
    assert tuple(out.shape) == tuple(case["output_size"]), (
        f"model case {case['name']!r}: key 'output_size' is {tuple(case['output_size'])} but the model "
        f"returns {tuple(out.shape)} for input_size {tuple(case['input_size'])}")


# --- exporting a model must not change it ------------------------------------------------------
@pytest.mark.parametrize("training", [False, True], ids=["eval", "train"])
def test_wrap_leaves_model_state_unchanged(training: bool, aidge_backend: str) -> None:
    """``wrap`` (whose TRAINING export runs a forward pass) leaves every parameter and buffer
    (BatchNorm running statistics and ``num_batches_tracked`` included) and every module's
    mode as they were, and the Aidge side starts from that same state."""
    if training:
        _skip_if_forward_only(aidge_backend, "a training export")
    case = model_case("ResNet")
    model = case["model"]()
    model.train(training)
    state_before = {k: v.clone() for k, v in model.state_dict().items()}
    assert any(k.endswith("running_mean") for k in state_before), "ResNet has no BatchNorm: test is void"
    modes_before = {name: m.training for name, m in model.named_modules()}

    aidge_model = interop.wrap(model, case["input_size"], backend=aidge_backend, training=training)

    assert_outputs_close(dict(model.state_dict()), state_before, rtol=0, atol=0, name="state",
                         msg=f"wrap(training={training}) changed the torch model's state")
    assert {name: m.training for name, m in model.named_modules()} == modes_before, (
        f"wrap(training={training}) changed a module's train/eval mode")
    aidge_state = {**dict(aidge_model.named_parameters()), **dict(aidge_model.named_buffers())}
    assert_outputs_close(aidge_state, state_before, rtol=0, atol=0, name="state",
                         msg=f"wrap(training={training}): the AidgeModule does not start from the torch state")


# --- the diagnosis behind the BatchNorm ``_train`` expected failures ---------------------------
@pytest.mark.parametrize("case", [c for c in MODEL_CASES if _has_batchnorm(c)],
                         ids=[c["name"] for c in MODEL_CASES if _has_batchnorm(c)])
def test_batchnorm_training_forward_cause(case: dict, aidge_backend: str) -> None:
    """The ``<Name>_train`` entries of interop.cases.expected_failures blame BatchNorm2D: Aidge's
    train-mode graph computes torch's *eval-mode* output (running statistics), not the
    train-mode one (batch statistics). Checked here so the entries stay true: if Aidge
    starts normalising with batch statistics, this test fails and the entries must go."""
    _skip_if_forward_only(aidge_backend, "a train-mode forward")
    (train,) = [c for c in model_cases(backend=aidge_backend) if c.id == f"{case['name']}_train"]
    entry = expected_failure(train)
    if entry is None or entry.operator != "BatchNorm2D" or entry.phase != "forward":
        pytest.skip(f"no BatchNorm2D forward entry for {case['name']}_train on {aidge_backend}")
    model = case["model"]()
    model.train()
    aidge_model = interop.wrap(model, case["input_size"], backend=aidge_backend, training=True)
    x = torch.randn(case["input_size"], generator=torch.Generator().manual_seed(0))
    from interop.bridge.value_check import checks_deferred

    with torch.no_grad():
        with checks_deferred():  # this diagnosis reads Aidge's wrong value itself (issue 45's check refuses it)
            aidge_out = aidge_model(x)
        model.eval()
        eval_out = model(x)
        model.train()
        train_out = model(x)
    assert_outputs_close(aidge_out, eval_out, rtol=1e-3, atol=1e-4, msg=(
        f"{train.id}: Aidge's train-mode output no longer equals torch's eval-mode output: "
        "the BatchNorm2D diagnosis of this expected failure is stale"))
    assert interop.compare_outputs(aidge_out, train_out, rtol=1e-3, atol=1e-4), (
        f"{train.id}: Aidge's train-mode output now matches torch's train-mode output")


# --- the suite can fail, and says where ----------------------------------------------------------
def test_training_divergence_is_reported_as_such(aidge_backend: str) -> None:
    """Forward and gradients agree but the SGD steps do not (Aidge steps with twice the
    learning rate): the failure names the weights after the step, the parameter and the
    size of the difference, not an output or a gradient."""
    _skip_if_forward_only(aidge_backend, "SGD steps")
    case = model_case("LeNet")
    model = case["model"]()
    aidge_model = interop.wrap(model, case["input_size"], backend=aidge_backend)
    tester = interop.ModelTester(model, aidge_model, name="LeNet_lr_mismatch", epochs=EPOCHS,
                                 learning_rate=0.01, max_slowdown_ratio=None)
    aidge_model.attach_optimizer(lr=0.02)  # the tester keeps an optimiser already attached
    with pytest.raises(EquivalenceError) as info:
        tester.test_multiple_step(case["input_size"])
    err = info.value
    assert err.epoch == 0 and err.what.startswith("weights after the SGD step: "), str(err)
    message = str(err)
    assert "Greatest absolute difference" in message and f"seed {err.seed}" in message, message
