"""Running operator cases under pytest: the generated tests, the fixture factory, the
per-case object the fixture yields, the "is the operator really in the Aidge graph" check
and the isolated, expected-failure-aware execution of a case.

The operator suite (``tests/test_operators.py``) is generated from the catalog: one test
function ``test_<Op>_interop`` per operator (:func:`operator_test`), parametrised over the
operator's cases (ids = case ids), so a catalog line is all it takes to test an operator.
A user's own suite can still write the documented pair by hand::

    conv2d_case = make_operator_fixture(OPERATOR_CONFIGS["Conv2D"])

    def test_Conv2D_interop(conv2d_case):
        run_operator_case(conv2d_case, check_equivalence)

``check_equivalence(case)`` runs in a forked child (:func:`interop.equivalence.isolation.run_isolated`),
and the Aidge model is only built (exported, imported, compiled) when the child first
reads ``case["aidge_model"]``: a crash inside Aidge, even at compile time, ends as an
:class:`~interop.errors.AidgeCrash` failure of that one case.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Callable, Iterator

import torch

from ..bridge import generic_nodes
from ..env import read as read_env
from ..errors import InteropError
from .case import Case
from .config import ConfigError, OperatorConfig, build_cases
from ..bridge import runtime as rt, wrap
from ..bridge.cuda import cuda_available
from ..bridge.value_check import checks_deferred
from ..equivalence.isolation import run_isolated
from ..exporters import routes_not_collected
from ..stages import stage
from .catalog import OPERATOR_CONFIGS
from ..bridge import capture
from ..bridge.onnx_export import export_to_onnx
from ..equivalence.callable_check import check_callable

__all__ = [
    "OperatorCaseRun",
    "OperatorNotInGraphError",
    "InputRange",
    "make_operator_fixture",
    "operator_test",
    "operator_case_fixture",
    "operator_case_params",
    "assert_operator_in_graph",
    "run_operator_case",
    "CASE_TIMEOUT_S",
    "LEARNING_RATE",
    "prepare_parent",
]

#: seconds one isolated case may run before it is killed (a hang is a crash finding)
CASE_TIMEOUT_S = read_env("INTEROP_CASE_TIMEOUT")
#: run each case in a forked child (``INTEROP_ISOLATE=0`` runs in-process, e.g. under pdb;
#: a crash then takes the worker down)
ISOLATE = read_env("INTEROP_ISOLATE")
#: the SGD learning rate of both sides (ModelTester's default)
LEARNING_RATE = 0.01


class OperatorNotInGraphError(InteropError, AssertionError):
    """The imported Aidge graph does not hold the operator under test (folded away,
    decomposed into other nodes, or imported as a GenericOperator)."""

    @property
    def category(self) -> str:
        return "unsupported_operator" if "GenericOperator" in str(self) else "export_error (test strategy)"


class InputRange(torch.nn.Module):
    """``inner(*[lo + (hi - lo) * sigmoid(x) ...])``: maps random normal inputs onto the
    ranges an operator needs (Sqrt, Log, a Div denominator...) in torch, before the model,
    so the model (and the Aidge graph) holds the operator alone. The map is smooth and
    strictly increasing: input gradients stay informative on both sides. ``None`` leaves
    an input as it is."""

    def __init__(self, ranges, inner):
        super().__init__()
        self.ranges = list(ranges)
        self.inner = inner

    def forward(self, *inputs):
        mapped = [x if r is None else r[0] + (r[1] - r[0]) * torch.sigmoid(x)
                  for x, r in zip(inputs, self.ranges)]
        return self.inner(*mapped)

    @property
    def graph(self):
        """The wrapped AidgeModule's graph (what :func:`assert_operator_in_graph` reads)."""
        return self.inner.graph


class OperatorCaseRun(Mapping):
    """What an operator fixture yields: a read-only mapping with ``name``, ``torch_model``,
    ``aidge_model``, ``input_size``, ``output_size``, ``test_backward`` (plus ``case``,
    ``config``, ``backend``, ``aidge_types``, ``expected_failure``).

    ``aidge_model`` is built on first access (``interop.wrap`` on the case's backend, with
    an Aidge SGD attached when the case trains), so that it is built inside the isolated
    child. With input ranges, both models are wrapped in the same :class:`InputRange`.
    """

    _KEYS = ("name", "torch_model", "aidge_model", "input_size", "output_size", "test_backward",
             "case", "config", "backend", "aidge_types", "expected_failure")

    def __init__(self, case: Case, config: OperatorConfig | None, backend: str = "cpu",
                 expected_failure=None):
        self.case = case
        self.config = config
        self.backend = backend
        self.expected_failure = expected_failure
        self._inner_torch = None
        self._torch_model = None
        self._aidge_model = None

    def __getitem__(self, key: str) -> Any:
        if key == "name":
            return self.case.id
        if key == "torch_model":
            return self._torch()
        if key == "aidge_model":
            return self._aidge()
        if key == "input_size":
            return self.case.input_size
        if key == "output_size":
            return self.case.output_size
        if key == "test_backward":
            return self.case.test_backward
        if key == "aidge_types":
            return self.case.aidge_types
        if key in ("case", "config", "backend", "expected_failure"):
            return getattr(self, key)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._KEYS)

    def __len__(self) -> int:
        return len(self._KEYS)

    def __repr__(self) -> str:
        return f"OperatorCaseRun({self.case.id!r}, backend={self.backend!r})"

    # -- models ------------------------------------------------------------------------
    def _torch(self):
        if self._torch_model is None:
            self._inner_torch = self.case.build_model()
            self._torch_model = self._ranged(self._inner_torch)
        return self._torch_model

    def _aidge(self):
        if self._aidge_model is None:
            self._torch()
            try:
                # the suite compares every call with torch (ModelTester) and measures known defects:
                # wrap() neither refuses them nor warns (issue 45)
                with checks_deferred():
                    am = wrap(self._inner_torch, self.case.input_sizes, backend=self.backend)
            except InteropError as exc:  # generation/compile errors name the case too
                exc.add_note(f"case {self.case.id} (operator {self.case.operator}, torch module "
                             f"{type(self._inner_torch).__name__}) on backend {self.backend!r}")
                raise
            if self.case.test_backward and any(p.requires_grad for p in am.parameters()):
                am.attach_optimizer(lr=LEARNING_RATE)
            self._aidge_model = self._ranged(am)
        return self._aidge_model

    def _ranged(self, model):
        if not self.case.input_ranges:
            return model
        ranges = list(self.case.input_ranges) + [None] * (len(self.case.input_sizes) - len(self.case.input_ranges))
        return InputRange(ranges, model)


def assert_operator_in_graph(aidge_model, expected_types, *, operator: str = "") -> None:
    """The Aidge graph of ``aidge_model`` holds no GenericOperator and a node of every type
    in ``expected_types`` (an entry ``"Conv2D|PaddedConv2D"`` accepts either), else
    :class:`OperatorNotInGraphError`.

    That Aidge can compute the dims of every node is checked by ``wrap()`` itself
    (:func:`interop.bridge.check_dims_forwarded`).
    """
    graph = aidge_model.graph
    nodes = list(graph.get_nodes())
    generic = sorted({n.type() for n in generic_nodes(graph)})  # wrap() already refuses them
    present = sorted({n.type() for n in nodes})
    label = f"{operator}: " if operator else ""
    if generic:
        raise OperatorNotInGraphError(f"{label}the Aidge graph holds GenericOperator node(s) {generic} "
                                      f"(no native Aidge operator); node types: {present}")
    if not expected_types:
        raise OperatorNotInGraphError(f"{label}no expected Aidge node type declared (OperatorConfig.aidge_types)")
    missing = [t for t in expected_types if not set(t.split("|")) & set(present)]
    if missing:
        raise OperatorNotInGraphError(f"{label}operator under test not in the imported Aidge graph: expected "
                                      f"node type(s) {missing}, found {present}")


def run_operator_case(case_run: OperatorCaseRun, body: Callable[[OperatorCaseRun], Any], *,
                      isolate: bool | None = None, timeout: float | None = None) -> Any:
    """``body(case_run)`` in a forked child (``isolate``). Under pytest, the interop plugin
    runs the test under the expected-failure guard of the case's table row (a failure quoting
    it becomes :class:`~interop.cases.expected_failures.ExpectedAidgeFailure`, what the strict
    xfail accepts)."""
    isolate = ISOLATE if isolate is None else isolate
    if isolate:
        return run_isolated(body, case_run, timeout=CASE_TIMEOUT_S if timeout is None else timeout)
    return body(case_run)


def prepare_parent(backend: str) -> None:
    """Import what every child needs once, in the parent, so forks start warm (a second
    call costs nothing)."""
    if backend in _PREPARED:
        return

    with stage("worker setup"):
        _prepare_parent(backend)
    _PREPARED.add(backend)


_PREPARED: set[str] = set()


def _prepare_parent(backend: str) -> None:
    rt.load_backend(backend)
    rt.aidge_onnx()
    rt.aidge_learning()
    import onnx  # noqa: F401
    import torch.onnx  # noqa: F401

    try:  # the dynamo route's own imports (~1 s): paid here, not in each child that takes it
        import onnxscript  # noqa: F401
        from torch.onnx._internal.exporter import _core  # noqa: F401
    except ImportError:
        pass

    from .. import bridge  # noqa: F401
    from ..equivalence import tester  # noqa: F401

    # The first torch.optim.SGD of a process imports torch._dynamo (~1 s): pay it once here,
    # not in every child that trains.
    torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    _warm_up(backend)


def _warm_up(backend: str) -> None:
    """One tiny case in this process, so that every forked child inherits what the first export,
    import, compile, forward, backward and comparison of a process build lazily (torch's
    exporter tables, Aidge's registries...): measured, an OpInfo case's export in the child went
    from 23 ms to 6.3 ms (docs/suite-cost.md).
    The whole check runs on the CPU backend only: on CUDA the parent must not initialise the
    device before forking, so only the export is warmed there. Its export route is no case's
    (:func:`~interop.exporters.routes_not_collected`); the RNG is left as it was; a failure here
    is left to the cases to report."""
    try:
        with routes_not_collected(), capture.suspended(), torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())
            x = torch.randn(2, 4)
            if backend == "cpu":
                check_callable(model, (x,), parameter_grads=True, name="worker warm-up")
            else:
                export_to_onnx(model, [x])
    except Exception:  # noqa: BLE001 - the cases report what is wrong with the stack
        pass


# --------------------------------------------------------------------------------------
# pytest: parameters, the fixture, the generated tests
# --------------------------------------------------------------------------------------
def operator_case_params(cfg: OperatorConfig) -> list:
    """``pytest.param`` per case of ``cfg`` (id = case id; the operator-wide skip as a
    mark). A configuration error does not stop collection: the operator then has a single
    parameter, ``<Op>_config_error``, that fails with the error naming file, case and key."""
    import pytest

    try:
        forced = [pytest.mark.interop_backend(cfg.backend)] if cfg.backend else []
        params = [pytest.param(c, id=c.id, marks=forced) for c in build_cases(cfg)]
    except ConfigError as exc:
        params = [pytest.param(exc, id=f"{cfg.name}_config_error")]
    except Exception as exc:  # an op_class that does not import, a bug in specs_to_kwargs...
        err = ConfigError(f"{type(exc).__name__}: {exc}", file=cfg.json_path, operator=cfg.name)
        params = [pytest.param(err, id=f"{cfg.name}_config_error")]
    if cfg.skip_all:
        params = [pytest.param(*p.values, id=p.id, marks=[pytest.mark.skip(reason=cfg.skip_all)]) for p in params]
    return params


def _case_run(request, config: OperatorConfig | None, backend: str):
    """What the fixtures yield for ``request.param``: the case as the pytest plugin attached it at
    collection (on its backend, with the table's row its strict xfail and guard read); no lookup
    here."""
    import pytest

    item = request.param
    if isinstance(item, Exception):
        raise item
    if config is not None and config.backend:  # the operator forces its backend (OperatorConfig.backend)
        backend = config.backend
        if backend == "cuda":
            ok, why = cuda_available()
            if not ok:
                pytest.skip(f"{item.id}: operator {config.name} runs on backend 'cuda' only: {why}")
    case = item
    if getattr(request.node, "interop_case", None) is not case or case.backend != backend:
        # the plugin attached the case for another backend (or not at all): never silently
        raise RuntimeError(f"{item.id}: the case was attached at collection for backend {case.backend!r}, the fixture "
                           f"runs it on {backend!r}: mark the parameter with pytest.mark.interop_backend(backend)")
    if case.skip_reason:
        pytest.skip(case.skip_reason)
    prepare_parent(backend)
    return OperatorCaseRun(case, config, backend, expected_failure=case.expected_failure)


def make_operator_fixture(cfg: OperatorConfig):
    """A pytest fixture parametrised over the cases of ``cfg`` (ids = case ids) that yields
    an :class:`OperatorCaseRun`: the operator-wide skip, else the strict xfail of the
    expected-failure table on the backend under test. Uses the ``aidge_backend`` fixture of
    the interop pytest plugin (``--backend``)."""
    import pytest

    @pytest.fixture(params=operator_case_params(cfg))
    def operator_case(request, aidge_backend):
        yield _case_run(request, cfg, aidge_backend)

    operator_case.__doc__ = f"The cases of operator {cfg.name} ({cfg.json_path or 'manual cases'})."
    return operator_case


def operator_case_fixture(request, aidge_backend):
    """The body of the ``operator_case`` fixture behind :func:`operator_test`: one operator
    case (``request.param``) as an :class:`OperatorCaseRun`. A plain function, so that
    importing this module needs no pytest (the asv environments have none); the test module
    declares the fixture: ``operator_case = pytest.fixture(name="operator_case")(operator_case_fixture)``."""
    item = request.param
    config = OPERATOR_CONFIGS.get(getattr(item, "operator", None))
    yield _case_run(request, config, aidge_backend)


def operator_test(cfg: OperatorConfig, body: Callable[[OperatorCaseRun], Any]):
    """The generated test of operator ``cfg``: ``test_<Op>_interop``, parametrised over its
    cases (ids = case ids), each running ``body`` through :func:`run_operator_case`. Bind it
    to a module-level name ``test_<Op>_interop`` (with the ``operator_case`` fixture,
    :func:`operator_case_fixture`, in the same module) and pytest collects it."""
    import pytest

    @pytest.mark.parametrize("operator_case", operator_case_params(cfg), indirect=True)
    def test(operator_case):
        run_operator_case(operator_case, body)

    test.__name__ = test.__qualname__ = f"test_{cfg.name}_interop"
    test.__doc__ = f"Every case of operator {cfg.name} ({cfg.json_path or 'manual cases'}), torch against Aidge."
    return test
