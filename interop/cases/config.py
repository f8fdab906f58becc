"""Operator configurations: how an operator is declared (:class:`OperatorConfig`) and how
its JSON configuration becomes cases (:func:`build_cases`, producing
:class:`~interop.cases.case.Case` objects).

JSON layouts (attribute names are Aidge's; see ``docs/aidge-notes.md``)
---------------------------------------------------------------------
``base_configuration: {attributes: {...}, input_specs: [{name, shape, dtype?, range?}]}``
plus ``test_configurations``, a tree of labelled cases; a *leaf* is a dict whose keys are
among :data:`LEAF_KEYS`. A case overrides the base: ``attributes`` by dict update (a
``null`` value drops the attribute), ``input_specs`` merged by ``name`` in base order (a
spec ``"shape": null`` drops that input, e.g. an optional bias).

- ``benchmark_ok``: cases under ``test_configurations.ok.{attr,shape}``; the negative cases
  under ``test_configurations.error`` are not equivalence cases and are ignored. Case paths
  start below ``ok`` (``attr.kernel_square``).
- ``benchmark_flat``: cases directly under ``test_configurations.{shape,attributes,sweeps,...}``
  (``attributes.kernel_square``).
- ``simple``: no ``base_configuration``; flat named leaves, each complete.
- ``manual``: no JSON; :attr:`OperatorConfig.manual_cases` lists :class:`Case` objects.
- Aidge's own benchmark format (top-level ``operation`` and ``format``, aidge_benchmark's
  ``operations_config``): read by :mod:`interop.cases.aidge_benchmark`, cases of kind
  ``aidge_config`` (:mod:`interop.cases.aidge_configs`) run by ``tests/test_aidge_configs.py``.

Cases under a top-level group named ``shape``/``shapes`` are forward-only shape sweeps
(made for benchmarks): they are dropped unless the config asks for them
(``forward_only_cases``, default :data:`INCLUDE_FORWARD_ONLY_CASES`, which the environment
variable ``INTEROP_FORWARD_ONLY_CASES=1`` turns on).

Input specs: a spec whose name is in :data:`PARAM_SPECS` (``weight``,
``bias``...) describes a parameter of the torch module (its shape feeds
``specs_to_kwargs``); every other spec is a data input of the test, in order. A data spec
may carry ``"range": [lo, hi]``: the test then feeds that input through a smooth map of
the random normal input onto ``(lo, hi)``, computed in torch *before* both models
(see :class:`interop.cases.suite.InputRange`), so the Aidge graph holds the operator
alone while Sqrt/Log/Div/Pow... see only valid inputs.

Errors: anything wrong in a configuration raises :class:`ConfigError`, whose message
names the file, the case path and the key.

This module imports neither torch nor Aidge at import time (the catalog must stay cheap).
"""
from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import math
import os
import re
import typing
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..env import read as read_env
from .attributes import SUPPORTED_ATTRS
from .case import Case, case_id
from .config_error import ConfigError, check_input_specs, load_json_config
from .case import on_backend

__all__ = [
    "OperatorConfig",
    "ConfigError",
    "INCLUDE_FORWARD_ONLY_CASES",
    "LEAF_KEYS",
    "PARAM_SPECS",
    "build_cases",
    "detect_layout",
    "load_config_file",
    "specs_by_name_wanted",
]

INCLUDE_FORWARD_ONLY_CASES: bool = read_env("INTEROP_FORWARD_ONLY_CASES")

#: input spec names that describe module parameters (their shapes feed ``specs_to_kwargs``), not data inputs
PARAM_SPECS = frozenset({"weight", "bias", "scale", "running_mean", "running_var"})
#: keys a JSON leaf (one case) may hold
LEAF_KEYS = frozenset({"attributes", "input_specs", "test_backward", "description"})
#: keys an input spec may hold
SPEC_KEYS = frozenset({"name", "shape", "dtype", "data", "range", "description"})
#: top-level groups holding forward-only shape sweeps
FORWARD_ONLY_GROUPS = frozenset({"shape", "shapes"})
#: top-level keys of a JSON file that are documentation, never cases
#: top-level keys that describe a document and hold no case; ``operation`` and ``format`` are
#: what Aidge's benchmark files add (``"operation": "MaxPooling2DOp"``): a file in a
#: documented layout is read by the user's OperatorConfig whatever Aidge adds (issue 27)
_DOC_KEYS = frozenset({"description", "operator", "comment", "$schema", "operation", "format"})


# --------------------------------------------------------------------------------------
# Declarations
# --------------------------------------------------------------------------------------
@dataclasses.dataclass
class OperatorConfig:
    """How to test one operator: its torch module, where its cases come from, how its
    Aidge attributes map onto the module's keywords, the Aidge node types its graph must
    hold, and its tolerance. Known Aidge defects are not declared here but in the one
    expected-failure table (:mod:`interop.cases.expected_failures`)."""

    name: str
    op_class: Any
    json_path: str | os.PathLike | None = None
    manual_cases: Sequence[Case] | None = None
    #: Aidge attributes of the JSON cases that the torch module does not take
    ignored_attrs: frozenset = frozenset()
    #: the case's merged input specs (a list, base order: the documented form) -> extra torch
    #: keywords derived from shapes (in_channels...); raise ValueError for a shape the operator
    #: cannot take. A function whose first parameter is annotated ``dict``/``Mapping`` gets them
    #: by name instead (:func:`specs_by_name_wanted`, docs/differences.md)
    specs_to_kwargs: Callable[[list[dict]], dict[str, Any]] | None = None
    #: reason to skip every case (an operator without a torch reference)
    skip_all: str | None = None
    #: keep the forward-only shape sweeps (``shape``/``shapes`` groups)
    forward_only_cases: bool = INCLUDE_FORWARD_ONLY_CASES
    #: Aidge node types the imported graph must contain (all of them); a callable gets the
    #: case's torch keywords and returns the tuple
    aidge_types: tuple[str, ...] | Callable[[Mapping[str, Any]], tuple[str, ...]] = ()
    #: the operator's :class:`~interop.oracle.tolerance.Tolerance` (None: the
    #: comparator's float32 default); a looser one must say why
    tolerance: Any = None
    #: JSON attribute name -> (torch keyword, converter); None: the module-level
    #: :data:`SUPPORTED_ATTRS` table (the documented default)
    supported_attrs: Mapping[str, tuple[str, Callable[[Any], Any]]] | None = None
    #: the input shape of a JSON case that gives none (documented fallback); None: every case
    #: must give its shapes
    default_input_size: tuple[int, ...] | None = None
    #: force this operator's backend (``"cpu"``, ``"cuda"``); None: the run's ``--backend``. A
    #: forced ``"cuda"`` on a machine without CUDA skips its cases, saying why
    backend: str | None = None
    #: documented upstream, refused here (docs/differences.md, "Where the project differs from the
    #: documentation"): expected failures live in the one strict table, quoting Aidge's error
    xfail_all: str | None = None
    xfail_backward: str | None = None
    skip_reasons: Mapping[str, str] | None = None

    def __post_init__(self):
        if self.json_path is None and self.manual_cases is None and self.skip_all is None:
            raise ConfigError("needs json_path or manual_cases", operator=self.name)
        given = [n for n in ("xfail_all", "xfail_backward", "skip_reasons") if getattr(self, n)]
        if given:
            raise TypeError(f"OperatorConfig {self.name!r}: {', '.join(given)} not supported by this project: every "
                            f"expected failure is a strict row of the one table (interop/cases/expected_failures.py) "
                            f"naming the operator and phase and quoting Aidge's error, so that a fixed Aidge shows up "
                            f"as XPASS; skip_all skips an operator with a reason")
        if self.backend is not None and self.backend not in ("cpu", "cuda", "export_cpp"):
            raise ValueError(f"OperatorConfig {self.name!r}: backend must be 'cpu', 'cuda' or 'export_cpp', got "
                             f"{self.backend!r}")
        if self.tolerance is not None:
            from ..oracle.tolerance import Tolerance

            if not isinstance(self.tolerance, Tolerance):
                raise TypeError(f"OperatorConfig {self.name!r}: tolerance must be a Tolerance (rtol, atol and "
                                f"the reason for any loosening), got {self.tolerance!r}")


# --------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------
class _DuplicateKey(Exception):
    def __init__(self, key: str):
        self.key = key


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def load_config_file(path: str | os.PathLike, *, within: str | os.PathLike | None = None) -> dict:
    """The parsed JSON document; a missing file, a file the reading policy refuses
    (:mod:`interop.reading`: not a regular file, above the size or nesting limit, a link out
    of ``within``) or malformed JSON is a :class:`ConfigError`."""
    try:
        doc = load_json_config(path, within=within, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as exc:
        raise ConfigError(f"duplicate key {exc.key!r} in one object (JSON keeps only the last one, so a case "
                          "would be silently lost)", file=path, key=exc.key) from None
    if not isinstance(doc, dict):
        raise ConfigError(f"the document must be a JSON object, got {type(doc).__name__}", file=path)
    return doc


def _is_aidge_benchmark(doc: Any) -> bool:
    """Aidge's benchmark format: top-level ``operation`` and ``format``."""
    return isinstance(doc, dict) and "operation" in doc and "format" in doc


def _read_any(file) -> dict:
    """The document; an Aidge benchmark file may repeat a key (aidge-benchmark 0.10.1's
    resize.json does; JSON keeps the last), which its own reader reports instead."""
    try:
        return load_config_file(file)
    except ConfigError as exc:
        if exc.reason.startswith("duplicate key"):
            doc = load_json_config(file)  # read again, keeping the last of the repeated keys
            if _is_aidge_benchmark(doc):
                return doc
        raise


def _is_leaf(node: Any) -> bool:
    return isinstance(node, dict) and bool(node) and set(node) <= LEAF_KEYS


def detect_layout(doc: Mapping[str, Any], file: str | os.PathLike | None = None) -> str:
    """``benchmark_ok``, ``benchmark_flat`` or ``simple``; anything else is a ConfigError."""
    keys = set(doc) - _DOC_KEYS
    if "test_configurations" in keys or "base_configuration" in keys:
        # base_configuration may be absent (Aidge's relu.json has none): an empty base
        if "test_configurations" not in doc:
            raise ConfigError("a benchmark layout needs test_configurations (base_configuration alone holds no "
                              "case)", file=file, key="test_configurations")
        extra = keys - {"base_configuration", "test_configurations"}
        if extra:
            raise ConfigError(f"unknown top-level key(s) {sorted(extra)}", file=file, key=sorted(extra)[0])
        tests = doc["test_configurations"]
        if not isinstance(tests, dict) or not tests:
            raise ConfigError("test_configurations must be a non-empty object", file=file, key="test_configurations")
        if "ok" in tests:
            extra = set(tests) - {"ok", "error"}
            if extra:
                raise ConfigError(f"a benchmark_ok layout holds only 'ok' and 'error'; unknown {sorted(extra)}",
                                  file=file, key=f"test_configurations.{sorted(extra)[0]}")
            return "benchmark_ok"
        return "benchmark_flat"
    if keys and all(_is_leaf(doc[k]) for k in keys):
        return "simple"
    bad = next((k for k in sorted(keys) if not _is_leaf(doc[k])), None)
    raise ConfigError("unknown layout: expected base_configuration + test_configurations (benchmark "
                      f"layouts) or flat named cases whose keys are among {sorted(LEAF_KEYS)} (simple)",
                      file=file, key=bad)


def _walk(tree: Any, prefix: str, file, force_groups: bool = False) -> Iterable[tuple[str, dict]]:
    """(dotted path, leaf) pairs of a tree of labelled cases, in file order."""
    if not isinstance(tree, dict) or not tree:
        raise ConfigError("expected an object of labelled cases", file=file, case=prefix or None)
    for label, node in tree.items():
        if not isinstance(label, str) or not label.strip():
            raise ConfigError("case labels must be non-empty strings", file=file, case=prefix or None)
        path = f"{prefix}.{label}" if prefix else label
        if _is_leaf(node) and (not force_groups or not all(isinstance(v, dict) for v in node.values())):
            # a top-level entry of test_configurations is a group (its labels may be case keys:
            # ``attributes``), unless it can only be a case: keys among the case keys and a value
            # that is not an object (``input_specs`` is a list), which no group holds (issue 45)
            yield path, node
        elif isinstance(node, dict) and node and all(isinstance(v, dict) for v in node.values()):
            yield from _walk(node, path, file)
        elif isinstance(node, dict) and not node:
            yield path, {}  # the base configuration as is
        else:
            keys = sorted(set(node) - LEAF_KEYS) if isinstance(node, dict) else []
            raise ConfigError(f"neither a case (keys among {sorted(LEAF_KEYS)}) nor a group of cases",
                              file=file, case=path, key=keys[0] if keys else None)


def _raw_cases(doc: dict, layout: str, file) -> list[tuple[str, dict, dict]]:
    """(path, base, leaf) triples."""
    if layout == "simple":
        return [(label, {}, leaf) for label, leaf in doc.items() if label not in _DOC_KEYS]
    base = doc.get("base_configuration", {})
    if not isinstance(base, dict) or not set(base) <= {"attributes", "input_specs", "description"}:
        bad = sorted(set(base) - {"attributes", "input_specs", "description"}) if isinstance(base, dict) else []
        raise ConfigError("base_configuration must be an object with attributes and input_specs",
                          file=file, key=f"base_configuration.{bad[0]}" if bad else "base_configuration")
    tests = doc["test_configurations"]
    if layout == "benchmark_ok":
        # test_configurations.error holds negative cases: not equivalence cases.
        return [(path, base, leaf) for path, leaf in _walk(tests["ok"], "", file, force_groups=True)]
    return [(path, base, leaf) for path, leaf in _walk(tests, "", file, force_groups=True)]


def _merge_attributes(base: Mapping | None, case: Mapping | None, file, path) -> dict:
    for what, value in (("base_configuration.attributes", base), ("attributes", case)):
        if value is not None and not isinstance(value, dict):
            raise ConfigError("attributes must be an object", file=file, case=path, key=what)
    merged = dict(base or {})
    for key, value in (case or {}).items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return {k: v for k, v in merged.items() if v is not None}


def _merge_specs(base: Sequence | None, case: Sequence | None, file, path,
                 default_input_size: Sequence[int] | None = None) -> list[dict]:
    def check(specs, what):
        return check_input_specs(specs, SPEC_KEYS, file, path, what)

    merged = [dict(s) for s in check(base, "base_configuration.input_specs")]
    index = {s["name"]: s for s in merged}
    for spec in check(case, "input_specs"):
        if spec["name"] in index:
            index[spec["name"]].update(spec)
        else:
            merged.append(dict(spec))
            index[spec["name"]] = merged[-1]
    if default_input_size is not None:
        # OperatorConfig.default_input_size: the shape of a data input the case does not size,
        # or of the one data input of a case that names none
        if not any(s["name"] not in PARAM_SPECS for s in merged):
            merged.insert(0, {"name": "data_input"})
        for spec in merged:
            if spec["name"] not in PARAM_SPECS and "shape" not in spec:
                spec["shape"] = list(default_input_size)
    out = []
    for spec in merged:
        if "shape" not in spec:
            raise ConfigError("input spec without a shape", file=file, case=path, key=f"input_specs.{spec['name']}")
        if spec["shape"] is None:
            continue  # "shape": null drops an optional input
        shape = spec["shape"]
        if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                  for d in shape):
            raise ConfigError(f"shape must be a list of non-negative integers, got {shape!r}",
                              file=file, case=path, key=f"input_specs.{spec['name']}.shape")
        if 0 in shape:
            raise ConfigError(f"zero-size dimension in {shape!r}: Aidge does not compute on empty tensors and the "
                              "bridge refuses them, so the case could only fail", file=file, case=path,
                              key=f"input_specs.{spec['name']}.shape")
        if "data" in spec:
            raise ConfigError("'data' literals are not read by this suite (inputs are seeded random values): the "
                              "case would silently run on other data", file=file, case=path,
                              key=f"input_specs.{spec['name']}.data")
        dtype = spec.get("dtype", "float32")
        if dtype not in ("float32", "float"):
            raise ConfigError(f"only float32 inputs are supported by the operator suite, got {dtype!r}",
                              file=file, case=path, key=f"input_specs.{spec['name']}.dtype")
        rng = spec.get("range")
        if rng is not None and not (isinstance(rng, list) and len(rng) == 2
                                    and all(isinstance(x, (int, float)) and math.isfinite(x) for x in rng)
                                    and rng[0] < rng[1]):
            raise ConfigError(f"range must be [lo, hi] with lo < hi, got {rng!r}",
                              file=file, case=path, key=f"input_specs.{spec['name']}.range")
        out.append(spec)
    return out


def _map_attributes(cfg: OperatorConfig, attrs: Mapping[str, Any], file, path) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for name, value in attrs.items():
        if name in cfg.ignored_attrs:
            continue
        table = SUPPORTED_ATTRS if cfg.supported_attrs is None else cfg.supported_attrs
        if name not in table:
            raise ConfigError(f"attribute {name!r} is neither supported (SUPPORTED_ATTRS, or the operator's "
                              f"supported_attrs) nor ignored by operator {cfg.name}", file=file, case=path,
                              key=f"attributes.{name}")
        kw, convert = table[name]
        try:
            kwargs[kw] = convert(value)
        except (TypeError, ValueError) as exc:
            raise ConfigError(str(exc), file=file, case=path, key=f"attributes.{name}") from exc
    return kwargs


_MAPPING_TEXT = re.compile(r"(?:typing\.|collections\.abc\.|abc\.)?(?:dict|Dict|Mapping|MutableMapping)(?:\[.*\])?",
                           re.DOTALL)


def specs_by_name_wanted(fn: Callable) -> bool:
    """Whether ``fn`` (an ``OperatorConfig.specs_to_kwargs``) takes the merged specs by name
    (``{name: spec}``, this project's former form) rather than the documented list: decided by
    the declaration alone, never by trying, so one function always gets one form. By name when
    its first parameter is annotated ``dict``/``Mapping`` (``Dict``, ``MutableMapping``,
    parametrised or not, as a type or as the text ``from __future__ import annotations``
    leaves); the documented list otherwise: another annotation, none (a lambda), or a callable
    whose signature cannot be read."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if not params or params[0].kind not in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        return False
    note = params[0].annotation
    if note is inspect.Parameter.empty:
        return False
    if isinstance(note, str):
        return bool(_MAPPING_TEXT.fullmatch(note.replace(" ", "")))
    origin = typing.get_origin(note) or note
    return isinstance(origin, type) and issubclass(origin, collections.abc.Mapping)


def _derived_kwargs(cfg: OperatorConfig, specs: list[dict], file, path) -> dict[str, Any]:
    by_name = specs_by_name_wanted(cfg.specs_to_kwargs)
    try:
        derived = cfg.specs_to_kwargs({s["name"]: s for s in specs} if by_name else [dict(s) for s in specs])
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        hint = ""
        if not by_name and isinstance(exc, TypeError) and "list indices" in str(exc):
            hint = (" (specs_to_kwargs gets the merged input specs as a list, as documented; annotate its first "
                    "parameter `dict` to get them by name)")
        raise ConfigError(f"the operator cannot take these input specs: {exc}{hint}", file=file, case=path,
                          key="input_specs") from exc
    if not isinstance(derived, dict):
        raise ConfigError(f"specs_to_kwargs must return a dict of keywords, got {type(derived).__name__}",
                          file=file, case=path, key="input_specs")
    return derived


def _case_from_leaf(cfg: OperatorConfig, path: str, base: dict, leaf: dict, file) -> Case:
    attrs = _merge_attributes(base.get("attributes"), leaf.get("attributes"), file, path)
    specs = _merge_specs(base.get("input_specs"), leaf.get("input_specs"), file, path, cfg.default_input_size)
    kwargs = _map_attributes(cfg, attrs, file, path)
    data_specs = [s for s in specs if s["name"] not in PARAM_SPECS]
    if not data_specs:
        raise ConfigError(f"no data input: input_specs must name at least one input that is not a parameter "
                          f"({sorted(PARAM_SPECS)})", file=file, case=path, key="input_specs")
    if cfg.specs_to_kwargs is not None:
        derived = _derived_kwargs(cfg, specs, file, path)
        clash = set(derived) & set(kwargs)
        if clash:
            raise ConfigError(f"keyword(s) {sorted(clash)} come from both the attributes and the input specs",
                              file=file, case=path, key=f"attributes.{sorted(clash)[0]}")
        kwargs.update(derived)
    test_backward = leaf.get("test_backward", True)
    if not isinstance(test_backward, bool):
        raise ConfigError("test_backward must be true or false", file=file, case=path, key="test_backward")
    forward_only = path.split(".", 1)[0] in FORWARD_ONLY_GROUPS
    sizes = [tuple(s["shape"]) for s in data_specs]
    ranges = tuple(tuple(float(x) for x in s["range"]) if s.get("range") else None for s in data_specs)
    types = cfg.aidge_types(kwargs) if callable(cfg.aidge_types) else tuple(cfg.aidge_types)
    return Case(
        id=case_id(cfg.name, path),
        op_class=cfg.op_class,
        torch_kwargs=kwargs,
        input_size=sizes[0] if len(sizes) == 1 else sizes,
        test_backward=test_backward and not forward_only,
        operator=cfg.name,
        path=path,
        source=str(file) if file else "",
        input_ranges=ranges if any(r is not None for r in ranges) else (),
        aidge_types=tuple(types),
    )


def _validate(cfg: OperatorConfig, case: Case) -> None:
    """Build the module and run it on meta tensors (shapes only): a keyword or shape the
    operator cannot take is a configuration error here, not a confusing failure later."""
    import torch

    file = case.source or None
    try:
        model = case.build_model()
    except Exception as exc:
        raise ConfigError(f"{getattr(case.model_class(), '__name__', case.op_class)}(**{dict(case.torch_kwargs)}) failed: "
                          f"{type(exc).__name__}: {exc}", file=file, case=case.path, key="attributes") from exc
    try:
        # on the meta device: shapes are checked, no data is computed or allocated (a
        # [1, 3, 8000, 8000] case used to cost 22 s and 6 GB at collection, in every worker)
        with torch.no_grad():
            model.to("meta")(*[torch.zeros(s, device="meta") for s in case.input_sizes])
    except NotImplementedError:
        pass  # an operator without a meta kernel: its shapes are checked when the case runs
    except Exception as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"the operator cannot take input shape(s) {case.input_sizes}: {msg}",
                          file=file, case=case.path, key="input_specs") from exc
    if case.input_ranges and any(p.requires_grad for p in model.parameters()) and case.test_backward:
        raise ConfigError("an input range on an operator with trainable parameters would step its "
                          "parameters with torch's SGD instead of Aidge's", file=file, case=case.path,
                          key="input_specs")


def build_cases(cfg: OperatorConfig, *, backend: str = "cpu", validate: bool = True) -> list[Case]:
    """Every case of ``cfg``, in file order: layout detected, cases merged onto the base
    configuration, attributes mapped, shape-derived keywords added, forward-only shape
    cases dropped unless ``cfg.forward_only_cases``, each case checked on the meta device
    (``validate``), and the backend, the operator's tolerance and the operator-wide skip
    attached. The table's row is not: the pytest plugin attaches it once, at collection."""
    if cfg.skip_all:
        validate = False  # never run: the module may not even be constructible
    if cfg.manual_cases is not None:
        cases = [_complete_manual(cfg, c) for c in cfg.manual_cases]
    elif cfg.json_path is None:
        return []
    else:
        file = cfg.json_path
        # The user's configuration, in a documented layout, whatever keys Aidge adds to its files
        # (``operation``, ``format``): ids prefixed with cfg.name, attributes mapped through
        # cfg.supported_attrs onto cfg.op_class, error sections excluded (they are negative cases,
        # not equivalence cases). Aidge's own directory keeps its own reader and ids
        # (interop.cases.aidge_configs, tests/test_aidge_configs.py). Before issue 27 a file with
        # Aidge's keys was handed to that reader here, and the user's configuration was ignored.
        doc = _read_any(file)
        layout = detect_layout(doc, file)
        cases = []
        for path, base, leaf in _raw_cases(doc, layout, file):
            cases.append(_case_from_leaf(cfg, path, base, leaf, file))
    seen: dict[str, str] = {}
    out = []
    for case in cases:
        if case.id in seen:
            raise ConfigError(f"two cases give the test id {case.id!r} (also {seen[case.id]!r})",
                              file=case.source or None, case=case.path, operator=cfg.name)
        seen[case.id] = case.path
        if not case.test_backward and case.path.split(".", 1)[0] in FORWARD_ONLY_GROUPS \
                and not cfg.forward_only_cases:
            continue
        if validate:
            _validate(cfg, case)
        case = dataclasses.replace(case, backend=cfg.backend or backend, tolerance=cfg.tolerance,
                                   skip_reason=cfg.skip_all)
        out.append(on_backend(case))
    return out


def _complete_manual(cfg: OperatorConfig, case: Case) -> Case:
    if not isinstance(case, Case):
        raise ConfigError(f"manual_cases must hold Case (OperatorCase) objects, got {type(case).__name__}",
                          operator=cfg.name)
    path = case.path or (case.id[len(cfg.name) + 1:] if case.id.startswith(cfg.name + "_") else case.id)
    types = case.aidge_types or (cfg.aidge_types(case.torch_kwargs) if callable(cfg.aidge_types)
                                 else tuple(cfg.aidge_types))
    return dataclasses.replace(case, id=case_id(cfg.name, path), path=path, operator=cfg.name,
                               aidge_types=tuple(types), source=case.source or f"manual cases of {cfg.name}")
