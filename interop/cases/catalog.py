"""THE registry of everything under test: every operator configuration, the model zoo's
networks, the inference-contract checks and the property-based edge-value checks, all as
:class:`~interop.cases.case.Case` objects. The pytest suites, the asv benchmarks and the
reports all read it; nothing else declares a case.

Importing this module is cheap and has no side effect: it builds :class:`OperatorConfig`
objects only (no JSON parsed, no torch, no Aidge). Cases are built on demand:
:func:`operator_cases` (or :func:`interop.cases.build_cases` on one config),
:func:`model_cases`, :func:`contract_cases`, :func:`property_cases`.

Each operator: a torch module in ``interop/zoo/operators/<file>.py`` (named by string so
nothing is imported here), its cases in ``configs/<Op>.json`` (or ``manual_cases``), the
Aidge node type(s) its imported graph must hold (``"Conv2D|PaddedConv2D"``: either; a
padded convolution or pooling imports as Aidge's Padded* meta-operator), where useful a
``specs_to_kwargs`` function next to the module, and a tolerance only when it needs a
looser one than the comparator's default (with the reason). Known Aidge defects are not
declared here but in :mod:`interop.cases.expected_failures` (one table).

Adding an operator: a torch module file, a JSON file, one ``_op(...)`` line below (docs/testing.md,
"Adding an operator").
"""
from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path
from typing import Any

from .case import Case
from .config import OperatorConfig, build_cases
from .config_dir import CONFIG_DIR, config_folder_problem  # where the configurations live
from .case import on_backend

__all__ = ["OPERATOR_CONFIGS", "CONFIG_DIR", "operator_cases", "operator_config", "model_cases",
           "model_specs", "contract_cases", "property_cases", "MODEL_CONFIGURATIONS", "CONTRACT_SIDES",
           "PROPERTY_OPERATORS", "PROPERTY_VALUE_SETS", "PROPERTY_SHAPE"]

_ZOO = "interop.zoo.operators"


class _Lazy:
    """A function named ``"module:function"``, imported on first call (keeps this module
    free of torch imports)."""

    def __init__(self, target: str):
        self.target = target
        self._fn = None

    def __call__(self, *args, **kwargs):
        if self._fn is None:
            module, _, name = self.target.partition(":")
            self._fn = getattr(importlib.import_module(module), name)
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<lazy {self.target}>"


def _op(name: str, module: str, aidge_types: Any, *, cls: str | None = None, json: bool = True,
        specs: bool = False, **kwargs: Any) -> OperatorConfig:
    if isinstance(aidge_types, str) and ":" in aidge_types:
        aidge_types = _Lazy(aidge_types)
    elif isinstance(aidge_types, str):
        aidge_types = (aidge_types,)
    return OperatorConfig(
        name=name,
        op_class=f"{_ZOO}.{module}:{cls or name}",
        json_path=CONFIG_DIR / f"{name}.json" if json else None,
        specs_to_kwargs=_Lazy(f"{_ZOO}.{module}:specs_to_kwargs") if specs else None,
        aidge_types=aidge_types,
        **kwargs,
    )


def _manual(name: str, module: str, aidge_types, cases: list[tuple[str, dict, Any, bool]]) -> OperatorConfig:
    op_class = f"{_ZOO}.{module}:{name}"
    return OperatorConfig(
        name=name,
        op_class=op_class,
        manual_cases=[Case(id=path, op_class=op_class, torch_kwargs=kw, input_size=size, test_backward=train)
                      for path, kw, size, train in cases],
        aidge_types=aidge_types,
    )


_NO_TORCH_EQUIVALENT = (
    "{op}: Aidge 0.10.1 has a Python factory (aidge_core.{factory}) and an ONNX importer (custom op "
    "{factory}), but PyTorch has no equivalent operator: it is an integer-only, shift-based approximation "
    "of {ref} on quantised values (input_scale/output_scale), so there is no reference to compare with")

_X = (2, 3, 8, 8)

_CONFIGS: list[OperatorConfig] = [
    # pooling
    _op("MaxPool2D", "maxpool2d", "MaxPooling2D|PaddedMaxPooling2D"),
    _op("AvgPool2D", "avgpool2d", "AvgPooling2D|PaddedAvgPooling2D"),
    _op("GlobalAveragePool", "global_average_pool", "GlobalAveragePooling"),
    # activations
    _op("ReLU", "relu", "ReLU"),
    _op("LeakyReLU", "leaky_relu", "LeakyReLU"),
    _op("Sigmoid", "sigmoid", "Sigmoid"),
    _op("Tanh", "tanh", "Tanh"),
    _op("GELU", "gelu", f"{_ZOO}.gelu:aidge_types"),
    _op("SiLU", "silu", ("Sigmoid", "Mul")),
    _op("Softmax", "softmax", "Softmax"),
    _op("LogSoftmax", "log_softmax", "LogSoftmax"),
    _op("Hardswish", "hardswish", "HardSwish"),
    _op("Hardsigmoid", "hardsigmoid", "HardSigmoid"),
    _op("Softplus", "softplus", "Softplus"),
    _op("ELU", "elu", "Elu"),
    _op("Clip", "clip", "Clip"),
    _op("Hardtanh", "hardtanh", "Clip"),
    # convolutions and FC
    _op("Conv1D", "conv1d", "Conv1D|PaddedConv1D", specs=True),
    _op("Conv2D", "conv2d", "Conv2D|PaddedConv2D", specs=True),
    _op("ConvDepthwise2D", "conv_depthwise2d", "ConvDepthWise2D|PaddedConvDepthWise2D", specs=True),
    _op("ConvTranspose2D", "conv_transpose2d", "ConvTranspose2D|PaddedConvTranspose2D", specs=True),
    _op("FC", "fc", f"{_ZOO}.fc:aidge_types", specs=True),
    # reductions
    _op("ReduceMean", "reduce_mean", "ReduceMean"),
    _op("ReduceSum", "reduce_sum", "ReduceSum"),
    _op("ReduceMax", "reduce_max", "ReduceMax"),
    _op("ReduceMin", "reduce_min", "ReduceMin"),
    # arithmetic
    _op("Add", "add", "Add"),
    _op("Sub", "sub", "Sub"),
    _op("Mul", "mul", "Mul"),
    _op("Div", "div", "Div"),
    _op("Pow", "pow", "Pow"),
    _op("Sqrt", "sqrt", "Sqrt"),
    _op("Exp", "exp", "Exp"),
    _op("Log", "log", "Ln"),
    _op("Abs", "abs", "Abs"),
    _op("Neg", "neg", "Neg"),
    _op("Erf", "erf", "Erf"),
    _op("Reciprocal", "reciprocal", "Reciprocal"),
    _op("MatMul", "matmul", "MatMul"),
    # normalisations
    _op("BatchNorm2D", "batchnorm2d", "BatchNorm2D", specs=True),
    _op("LayerNorm", "layer_norm", "LayerNorm", specs=True),
    _op("InstanceNorm", "instance_norm", "InstanceNorm", specs=True),
    _op("GroupNorm", "group_norm", "InstanceNorm", specs=True),
    # data movement
    _op("Pad", "pad", "Pad"),
    _op("Concat", "concat", "Concat"),
    _op("Split", "split", "Split"),
    _op("Slice", "slice", "Slice"),
    _op("Transpose", "transpose", "Transpose"),
    _op("Reshape", "reshape", "Reshape"),
    _op("Flatten", "flatten", f"{_ZOO}.flatten:aidge_types"),
    _op("Resize", "resize", "Resize"),
    _op("Gather", "gather", "Gather"),
    _manual("Embedding", "embedding", ("Gather",), [
        ("table_10x8_3_indices", {"num_embeddings": 10, "embedding_dim": 8, "indices": (1, 3, 5)}, (3, 8), True),
        ("table_16x4_repeated_indices", {"num_embeddings": 16, "embedding_dim": 4, "indices": (2, 2, 7, 2)}, (4, 4), True),
        ("table_5x16_all_rows", {"num_embeddings": 5, "embedding_dim": 16, "indices": (4, 3, 2, 1, 0)}, (5, 16), True),
        ("table_10x8_inference", {"num_embeddings": 10, "embedding_dim": 8, "indices": (0, 9)}, (2, 8), False),
    ]),
    _manual("Where", "where", ("Where",), [
        ("threshold_0_same_shape", {"threshold": 0.0}, [_X, _X], True),
        ("threshold_0.5_same_shape", {"threshold": 0.5}, [_X, _X], True),
        ("broadcast_other_channel", {"threshold": 0.0}, [_X, (3, 1, 1)], True),
        ("broadcast_condition_rank_2", {"threshold": 0.0}, [(1, 16), (4, 16)], True),
        ("rank_3_inference", {"threshold": -0.2}, [(2, 3, 16), (2, 3, 16)], False),
    ]),
    # Aidge-specific operators without a PyTorch counterpart
    _op("ShiftGELU", "shift_gelu", "SDShiftGELU", ignored_attrs=frozenset({"input_scale", "output_scale"}),
        skip_all=_NO_TORCH_EQUIVALENT.format(op="ShiftGELU", factory="SDShiftGELU", ref="GELU")),
    _op("ShiftMax", "shift_max", "SDShiftmax",
        ignored_attrs=frozenset({"input_scale", "output_scale", "shift", "axis"}),
        skip_all=_NO_TORCH_EQUIVALENT.format(op="ShiftMax", factory="SDShiftmax", ref="softmax")),
]

#: operator name -> configuration, in report order
OPERATOR_CONFIGS: dict[str, OperatorConfig] = {cfg.name: cfg for cfg in _CONFIGS}


def operator_config(name: str) -> OperatorConfig:
    try:
        return OPERATOR_CONFIGS[name]
    except KeyError:
        raise KeyError(f"no operator {name!r} in the catalog; known: {sorted(OPERATOR_CONFIGS)}") from None


def operator_cases(names: list[str] | None = None, *, backend: str = "cpu",
                   include_skipped: bool = False) -> list[Case]:
    """Every operator case of the catalog (or of ``names``), built from the configs for
    ``backend``. Cases of operator-wide skipped configs are left out unless ``include_skipped``."""
    out: list[Case] = []
    for name in names or list(OPERATOR_CONFIGS):
        cfg = operator_config(name)
        if cfg.skip_all and not include_skipped:
            continue
        out.extend(build_cases(cfg, backend=backend))
    return out


# --------------------------------------------------------------------------------------
# Models: the zoo's networks, each in eval and in train mode
# --------------------------------------------------------------------------------------
#: ``<Name>_eval``: eval mode, eval export, forward only; ``<Name>_train``: train mode
#: (BatchNorm on batch statistics), training export, backward and SGD steps when the
#: network declares ``test_backward``
MODEL_CONFIGURATIONS = ("eval", "train")


def model_specs() -> list[dict]:
    """The model zoo's declarations (``interop.zoo.models.MODEL_CASES``), or ``[]`` when
    the model zoo is not there."""
    name = "interop.zoo.models"
    try:
        if importlib.util.find_spec(name) is None:
            return []
    except ModuleNotFoundError:
        return []
    return list(getattr(importlib.import_module(name), "MODEL_CASES", []))


def _zoo_case(spec: dict, kind: str, label: str, **fields: Any) -> Case:
    """A case of the zoo network ``spec`` (``<Name>_<label>``)."""
    return on_backend(Case(
        id=f"{spec['name']}_{label}", op_class=spec["model"], input_size=tuple(spec["input_size"]),
        output_size=tuple(spec["output_size"]), operator=spec["name"], path=label, source="interop.zoo.models",
        kind=kind, tolerance=spec.get("tolerance"), **fields))


def model_cases(*, backend: str = "cpu") -> list[Case]:
    """Every network of the zoo in every configuration of :data:`MODEL_CONFIGURATIONS`."""
    out = []
    for spec in model_specs():
        for configuration in MODEL_CONFIGURATIONS:
            training = configuration == "train"
            out.append(_zoo_case(spec, "model", configuration, training=training, backend=backend,
                                 test_backward=training and bool(spec["test_backward"])))
    return out


# --------------------------------------------------------------------------------------
# The inference contract of every network, torch side and Aidge side
# --------------------------------------------------------------------------------------
CONTRACT_SIDES = ("torch", "aidge")


def contract_cases(*, backend: str = "cpu") -> list[Case]:
    """``<Model>_<side>_contract_<check>``: one check of
    :func:`interop.diagnostics.check_inference_contract` on the eval-mode network (torch
    side) or on its AidgeModule (aidge side)."""
    from ..diagnostics import CHECKS

    out = []
    for spec in model_specs():
        for side in CONTRACT_SIDES:
            for check in CHECKS:
                out.append(_zoo_case(spec, "contract", f"{side}_contract_{check}", training=False,
                                     backend=backend, test_backward=False, params={"side": side, "check": check}))
    return out


# --------------------------------------------------------------------------------------
# Property-based edge values: elementwise operators of the catalog
# --------------------------------------------------------------------------------------
#: operator -> torch keywords of its catalog module
PROPERTY_OPERATORS: dict[str, dict[str, Any]] = {
    "ReLU": {}, "LeakyReLU": {"negative_slope": 0.1}, "Sigmoid": {}, "Tanh": {}, "Abs": {}, "Neg": {},
    "Exp": {}, "Sqrt": {}, "Log": {},
}
#: value set -> flags of :func:`interop.diagnostics.strategies.tensors`
PROPERTY_VALUE_SETS: dict[str, dict[str, bool]] = {
    "finite": {},
    "nonfinite": {"allow_nan": True, "allow_infinity": True},
}
#: the shape the operator is wrapped with (the drawn tensors have other shapes)
PROPERTY_SHAPE = (2, 3)


def property_cases(*, backend: str = "cpu") -> list[Case]:
    """``hypothesis_<Op>_<values>``: an operator of the catalog on drawn edge values."""
    out = []
    for op, kwargs in PROPERTY_OPERATORS.items():
        cfg = operator_config(op)
        for values, flags in PROPERTY_VALUE_SETS.items():
            out.append(on_backend(Case(
                id=f"hypothesis_{op}_{values}", op_class=cfg.op_class, torch_kwargs=dict(kwargs),
                input_size=PROPERTY_SHAPE, test_backward=False, operator=op, path=values,
                source="interop.cases.catalog.PROPERTY_OPERATORS", kind="property", training=False,
                backend=backend, tolerance=cfg.tolerance, params={"values": values, **flags})))
    return out
