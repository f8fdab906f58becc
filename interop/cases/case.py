"""The one case type of the suite: :class:`Case` (also exported as ``OperatorCase``, its
historical name).

A case is one thing to check, PyTorch against Aidge: an operator configuration
(``kind="operator"``, from a JSON file or manual cases), a network of the model zoo in eval
or train mode (``"model"``), one inference-contract check of a network (``"contract"``) or
one property-based edge-value check of an operator (``"property"``), or one case of Aidge's
own operator benchmark configurations (``"aidge_config"``, :mod:`interop.cases.aidge_configs`). Every case knows its
id (the pytest id, the asv parameter, the report key), how to build its torch module, its
inputs, the phases it runs, the backend it is built for, its tolerance and its expected
failure (from the one table, :mod:`interop.cases.expected_failures`).

pytest (``tests/test_*.py``), asv (``benchmarks/harness.py``) and the reports iterate the
same objects, all produced by :mod:`interop.cases.catalog`.

No torch or Aidge import at module level (the catalog stays cheap to import).
"""
from __future__ import annotations

import dataclasses
import importlib
import re
import zlib
from typing import Any, Mapping

from ..backends import FORWARD_ONLY_BACKENDS
from ..zoo.operators import TORCH_OPS

__all__ = ["Case", "OperatorCase", "KINDS", "SOURCE_OF_KIND", "PHASES", "TRAINING_PHASES", "FORWARD_ONLY_BACKENDS",
           "case_id",
           "case_seed", "resolve_class", "on_backend", "normalized_label"]

#: what a case checks (see the module docstring)
KINDS = ("operator", "model", "contract", "property", "aidge_config", "opinfo", "moduleinfo", "architecture",
         "onnx_backend")
#: the source each kind of case comes from, as the report names it (a record's ``source``): the
#: one place a case's source is decided (issue 46); a test that runs no case is named by its file
#: (:data:`interop.records.sources.SOURCES`)
SOURCE_OF_KIND = {
    "operator": "catalog JSON",
    "property": "catalog (hypothesis)",
    "opinfo": "OpInfo",
    "moduleinfo": "ModuleInfo",
    "architecture": "architectures (MONAI, transformers)",
    "aidge_config": "Aidge configs (aidge-benchmark)",
    "model": "model zoo",
    "contract": "model zoo (contract)",
    "onnx_backend": "ONNX backend tests",
}
assert set(SOURCE_OF_KIND) == set(KINDS)
#: the phases of one check, in the order a run goes through them
PHASES = ("export", "import", "compile", "forward", "backward", "step")
#: the phases only a case that trains runs
TRAINING_PHASES = ("backward", "step")


@dataclasses.dataclass(frozen=True)
class Case:
    """One equivalence case: ``op_class(**torch_kwargs)`` (or, for a model, the zero-argument
    factory ``op_class``) on seeded random inputs of ``input_size`` (one shape, or a list of
    shapes for several inputs)."""

    id: str
    #: a class, ``"package.module:Class"`` resolved on use, or (models) a zero-argument factory
    op_class: Any
    torch_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    input_size: Any = None
    output_size: Any = None
    #: the case runs loss, backward and an SGD step after the forward
    test_backward: bool = True
    #: the entry of the expected-failure table for this case on :attr:`backend` (strict)
    expected_failure: Any = None
    # --- filled by the catalog / build_cases ---
    #: catalog operator (``Conv2D``) or model name (``ResNet``)
    operator: str = ""
    #: where in its source the case sits (``attributes.kernel_square``; ``train`` for a model)
    path: str = ""
    #: the file or declaration it comes from
    source: str = ""
    #: one entry per data input: None or (lo, hi), see :class:`interop.cases.suite.InputRange`
    input_ranges: tuple = ()
    #: Aidge node types the imported graph must contain
    aidge_types: tuple[str, ...] = ()
    skip_reason: str | None = None
    kind: str = "operator"
    #: the torch module's mode when wrapped (and the ONNX export's); None: as constructed
    training: bool | None = None
    backend: str = "cpu"
    #: the :class:`~interop.oracle.tolerance.Tolerance` its verdicts use (None: the
    #: comparator's float32 default)
    tolerance: Any = None
    #: extra parameters of the kind (contract: ``side``, ``check``; property: ``values``)
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"case {self.id!r}: unknown kind {self.kind!r} (one of {KINDS})")

    @property
    def label(self) -> str:
        """The case's name inside its operator or model: the id without ``<operator>_``
        (``attributes_kernel_square``, ``train``); what expected-failure patterns match."""
        if self.path:
            return normalized_label(self.path)
        prefix = f"{self.operator}_"
        return self.id[len(prefix):] if self.operator and self.id.startswith(prefix) else self.id

    @property
    def suite(self) -> str:
        """The source the case comes from, as the report names it (``OpInfo``, ``catalog JSON``):
        :data:`SOURCE_OF_KIND` of its kind. (:attr:`source` is the file or declaration.)"""
        return SOURCE_OF_KIND[self.kind]

    @property
    def dtype(self) -> str:
        """The dtype the case computes in (``params["dtype"]``; float32 unless a source says)."""
        return str((self.params or {}).get("dtype") or "float32")

    @property
    def torch_op(self) -> str | None:
        """The torch operator as its user writes it: ``torch.nn.Conv2d``,
        ``torch.nn.functional.conv2d`` (OpInfo), the model's name for a model."""
        if self.kind == "opinfo":
            return f"torch.{self.operator}"
        if self.kind in ("model", "contract", "architecture"):
            return self.operator or None
        if self.kind in ("operator", "property"):
            if self.operator in TORCH_OPS:
                return TORCH_OPS[self.operator]
        op = self.op_class
        if isinstance(op, str):
            module, _, qualname = op.partition(":")
            return f"{module}.{qualname}" if qualname else module
        module, name = getattr(op, "__module__", "") or "", getattr(op, "__qualname__", "") or ""
        if module.startswith("torch.nn.modules"):
            return f"torch.nn.{name}"
        return f"{module}.{name}" if module and name else self.operator or None

    @property
    def phases(self) -> tuple[str, ...]:
        """The phases a run of this case goes through."""
        return PHASES if self.test_backward else tuple(p for p in PHASES if p not in TRAINING_PHASES)

    def model_class(self) -> Any:
        return resolve_class(self.op_class)

    def build_model(self):
        """A fresh torch module for this case, in its mode (:attr:`training`). Operator
        modules draw their weights from a seed derived from the case id; model factories
        seed themselves. The global RNG is left untouched."""
        import torch

        factory = self.model_class()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(case_seed(self.id))
            model = factory(**dict(self.torch_kwargs))
        if self.training is not None:
            model.train(self.training)
        return model

    @property
    def input_sizes(self) -> list[tuple[int, ...]]:
        s = self.input_size
        if s and isinstance(s[0], (list, tuple)):
            return [tuple(x) for x in s]
        return [tuple(s)]


def on_backend(case: Case, backend: str | None = None) -> Case:
    """``case`` as it runs on ``backend`` (default: its own). On a forward-only backend
    (:data:`FORWARD_ONLY_BACKENDS`): the module in eval mode and no training phases
    (``test_backward=False``, the skipped phases listed in ``params["not_applicable"]``); a
    case that is about training (a model's ``train`` configuration) is skipped as not
    applicable."""
    backend = backend or case.backend
    if backend != case.backend:
        case = dataclasses.replace(case, backend=backend)
    if backend not in FORWARD_ONLY_BACKENDS:
        return case
    dropped = TRAINING_PHASES if case.test_backward else ()
    skip = case.skip_reason
    if case.training and case.kind in ("model", "contract") and not skip:
        skip = (f"not applicable on backend {backend!r}: the case runs the model in train mode, and Aidge's C++ "
                "export runs inference only")
    params = dict(case.params, not_applicable=dropped) if dropped else case.params
    return dataclasses.replace(case, test_backward=False, training=False, skip_reason=skip, params=params)


#: the historical name of :class:`Case` (the operator suite's seed API)
OperatorCase = Case


def resolve_class(op_class: Any) -> Any:
    """A class or callable, or ``"package.module:Class"`` imported now."""
    if isinstance(op_class, str):
        module, _, qualname = op_class.partition(":")
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        return obj
    return op_class


def case_seed(case_id: str) -> int:
    return zlib.crc32(case_id.encode()) & 0x7FFFFFFF


def normalized_label(path: str) -> str:
    """``attributes.kernel square`` -> ``attributes_kernel_square`` (dots and spaces to ``_``)."""
    return re.sub(r"[.\s]+", "_", path.strip())


def case_id(operator: str, path: str) -> str:
    """``Conv2D`` + ``attributes.kernel square`` -> ``Conv2D_attributes_kernel_square``."""
    return f"{operator}_{normalized_label(path)}"
