"""Aidge's own operator benchmark configurations (the ``aidge-benchmark`` package,
``aidge_benchmark/operations_config/*.json``, or any directory of files in that format):
read them as they are and turn every leaf into a :class:`~interop.cases.case.Case`.

The format (``docs/aidge-notes.md#aidge-benchmark-configs`` has the facts):
``{"operation": "Conv2DOp", "format": {"name": "Aidge", "metadata": {"initializer_rank": 1}},
"base_configuration"?: {attributes, input_specs}, "test_configurations": <tree>}``; a tree
node is a *case* when it is an object whose keys are among ``attributes``/``input_specs``
(Aidge's own rule), else a group of labelled nodes, to any depth. A case whose label path
has a segment containing ``error`` (``error``, ``expected_error``) is a *negative* case:
Aidge must reject it.

Why a reader of our own rather than ``aidge_benchmark.create_benchmark_from_json``: importing
``aidge_benchmark`` imports onnx, aidge_core, rich and matplotlib (the catalog must stay
cheap), its loader calls ``sys.exit(1)`` on a missing file, it does not merge the base
configuration into the cases (its CLI does, afterwards) and its merge drops ``null``
attributes, so a case that removes a base attribute (``avgpooling2d.json``
``error.kernel_dims.missing``) silently becomes a valid one. This reader follows its
semantics otherwise (leaf rule, spec merge by name, the last of two duplicate JSON keys
wins, no dtype anywhere = float64); ``tests/unit/test_aidge_benchmark.py`` checks it
against Aidge's reader on all 92 shipped files.

Merge of a case onto the base (as ``SingleOperationConfig.override_with``): attributes by
dict update, a ``null`` value *removes* the attribute (see above); input specs by ``name``
in base order, a case spec that gives neither ``shape`` nor ``data`` inherits the base's,
otherwise its ``shape``/``data`` replace the base's as a pair; ``dtype`` falls back to the
base's. ``"shape": null`` (with no data) leaves the input out (an optional input, or the
missing input of a negative case).

Imports neither torch nor Aidge (nor aidge_benchmark).
"""
from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import unicodedata
from pathlib import Path
from typing import Any, Iterable

from .config_error import ConfigError, check_input_specs, load_json_config

__all__ = ["BenchmarkFile", "BenchmarkCase", "InputSpec", "installed_config_dir", "read_benchmark_file",
           "read_benchmark_dir", "DTYPES", "label_id"]

#: the package and folder Aidge ships its configs in
PACKAGE = "aidge_benchmark"
CONFIG_FOLDER = "operations_config"
#: keys of a case (Aidge's leaf rule: an object whose keys are among these)
CASE_KEYS = frozenset({"attributes", "input_specs"})
SPEC_KEYS = frozenset({"name", "shape", "dtype", "data"})
TOP_KEYS = frozenset({"operation", "format", "base_configuration", "test_configurations"})
#: numpy dtype names the files use (and this suite runs)
DTYPES = frozenset({"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
                    "uint32", "uint64", "bool"})
#: the dtype of a spec with none anywhere: ``np.dtype(None)``, what Aidge's reader generates
DEFAULT_DTYPE = "float64"


@dataclasses.dataclass(frozen=True)
class InputSpec:
    """One merged input: ``shape`` None and ``data`` None = left out (``"shape": null``)."""

    name: str
    shape: tuple[int, ...] | None
    dtype: str
    #: the JSON literal (scalar or nested lists), or None for random data
    data: Any = None

    @property
    def omitted(self) -> bool:
        return self.shape is None and self.data is None


@dataclasses.dataclass(frozen=True)
class BenchmarkCase:
    labels: tuple[str, ...]
    attributes: dict
    specs: tuple[InputSpec, ...]
    negative: bool

    @property
    def path(self) -> str:
        return ".".join(self.labels)


@dataclasses.dataclass(frozen=True)
class BenchmarkFile:
    path: Path
    operation: str
    format: str
    metadata: dict
    cases: tuple[BenchmarkCase, ...]
    #: what the reader noticed without refusing the file (a duplicate key...)
    notes: tuple[str, ...] = ()

    @property
    def stem(self) -> str:
        return self.path.stem


def installed_config_dir() -> Path:
    """``aidge_benchmark/operations_config`` of the installed package, found without
    importing it (its ``__init__`` imports onnx, aidge_core and matplotlib)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the {PACKAGE} package is not installed (pip install --no-deps aidge-benchmark==0.10.1)",
                          file=PACKAGE)
    for location in spec.submodule_search_locations:
        folder = Path(location) / CONFIG_FOLDER
        if folder.is_dir():
            return folder
    raise ConfigError(f"no {CONFIG_FOLDER}/ folder in the installed {PACKAGE}", file=PACKAGE)


def _load(path: Path, within: Path | None = None) -> tuple[dict, list[str]]:
    duplicates: list[str] = []

    def pairs(items):
        out: dict = {}
        for key, value in items:
            if key in out:
                duplicates.append(key)
            out[key] = value  # json.load's rule (and Aidge's reader): the last one wins
        return out

    doc = load_json_config(path, within=within, object_pairs_hook=pairs)
    if not isinstance(doc, dict):
        raise ConfigError(f"the document must be a JSON object, got {type(doc).__name__}", file=path)
    notes = [f"duplicate key {k!r} in one object: JSON (and aidge_benchmark) keep the last value" for k in duplicates]
    return doc, notes


def _is_case(node: Any) -> bool:
    return isinstance(node, dict) and set(node) <= CASE_KEYS


def _walk(tree: dict, labels: tuple[str, ...], file) -> Iterable[tuple[tuple[str, ...], dict]]:
    for label, node in tree.items():
        path = labels + (label,)
        if _is_case(node):
            yield path, node
        elif isinstance(node, dict):
            yield from _walk(node, path, file)
        else:
            raise ConfigError(f"expected a case (keys among {sorted(CASE_KEYS)}) or a group of cases, got "
                              f"{type(node).__name__}", file=file, case=".".join(path), key=label)


def _check_specs(specs: Any, file, case: str | None, key: str) -> list[dict]:
    return check_input_specs(specs, SPEC_KEYS, file, case, key)


def _merge_spec(base: dict | None, case: dict | None) -> dict:
    if base is None:
        return dict(case)
    if case is None:
        return dict(base)
    out = dict(base)
    if "shape" in case or "data" in case:
        out["shape"], out["data"] = case.get("shape"), case.get("data")
    if case.get("dtype") is not None:
        out["dtype"] = case["dtype"]
    return out


def _shape_of(literal: Any) -> tuple[int, ...]:
    shape: list[int] = []
    while isinstance(literal, list):
        shape.append(len(literal))
        literal = literal[0] if literal else None
    return tuple(shape)


def _numeric_text(x: Any) -> bool:
    """Aidge's files write special values as strings (``"nan"``, ``"inf"``, ``"-inf"``), which
    numpy reads as numbers."""
    if not isinstance(x, str):
        return False
    try:
        float(x)
    except ValueError:
        return False
    return True


def _literal_problem(data: Any) -> str | None:
    """Why a ``data`` literal is not a number or a rectangular nested list of numbers (ragged
    or string data used to fail at run time as an IndexError naming no file), or None."""
    level = [data]
    depth = 0
    while True:
        lists = [isinstance(x, list) for x in level]
        if not any(lists):
            bad = [x for x in level if not isinstance(x, (int, float)) and not _numeric_text(x)]  # bool is an int
            if bad:
                return f"{bad[0]!r} at depth {depth} is not a number"
            return None
        if not all(lists):
            return f"depth {depth} mixes lists and numbers"
        lengths = {len(x) for x in level}
        if len(lengths) > 1:
            return f"ragged at depth {depth} (lengths {sorted(lengths)})"
        level = [y for x in level for y in x]
        depth += 1


#: attributes of a positive case that must be lists of positive / non-negative integers (a
#: negative case keeps what it gives: Aidge must reject it)
_POSITIVE_DIMS = frozenset({"kernel_dims", "stride_dims", "dilation_dims", "dilations"})
_NON_NEGATIVE_DIMS = frozenset({"padding_dims"})


def _check_attributes(attrs: dict, file, case: str) -> None:
    for name, value in attrs.items():
        positive = name in _POSITIVE_DIMS
        if not positive and name not in _NON_NEGATIVE_DIMS:
            continue
        low = 1 if positive else 0
        if (not isinstance(value, list) or not value
                or not all(isinstance(d, int) and not isinstance(d, bool) and d >= low for d in value)):
            what = "positive" if positive else "non-negative"
            raise ConfigError(f"{name} must be a non-empty list of {what} integers, got {value!r} (a case whose labels "
                              f"do not say 'error' must be valid)", file=file, case=case, key=f"attributes.{name}")


def _spec(raw: dict, file, case: str) -> InputSpec:
    name = raw["name"]
    key = f"input_specs.{name}"
    shape, data, dtype = raw.get("shape"), raw.get("data"), raw.get("dtype") or DEFAULT_DTYPE
    if dtype not in DTYPES:
        raise ConfigError(f"unknown dtype {dtype!r} (known: {sorted(DTYPES)})", file=file, case=case,
                          key=f"{key}.dtype")
    if shape is not None:
        if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                  for d in shape):
            raise ConfigError(f"shape must be a list of non-negative integers or null, got {shape!r}",
                              file=file, case=case, key=f"{key}.shape")
        shape = tuple(shape)
    if data is not None:
        why = _literal_problem(data)
        if why:
            raise ConfigError(f"data must be a number or a rectangular nested list of numbers: {why}", file=file,
                              case=case, key=f"{key}.data")
        literal_shape = _shape_of(data)
        if shape is not None and literal_shape != shape:
            raise ConfigError(f"data literal of shape {list(literal_shape)} given with shape {list(shape)}",
                              file=file, case=case, key=f"{key}.data")
        shape = literal_shape
    return InputSpec(name=name, shape=shape, dtype=dtype, data=data)


def _merge(base: dict, leaf: dict, labels: tuple[str, ...], file) -> BenchmarkCase:
    path = ".".join(labels)
    attrs = leaf.get("attributes") or {}
    if not isinstance(attrs, dict):
        raise ConfigError("attributes must be an object", file=file, case=path, key="attributes")
    merged_attrs = dict(base.get("attributes") or {})
    for key, value in attrs.items():
        if value is None:
            merged_attrs.pop(key, None)  # a case removes a base attribute (Aidge's reader keeps it)
        else:
            merged_attrs[key] = value
    merged_attrs = {k: v for k, v in merged_attrs.items() if v is not None}
    base_specs = _check_specs(base.get("input_specs"), file, None, "base_configuration.input_specs")
    case_specs = _check_specs(leaf.get("input_specs"), file, path, "input_specs")
    by_name = {s["name"]: s for s in case_specs}
    merged = [_merge_spec(s, by_name.pop(s["name"], None)) for s in base_specs]
    merged += [dict(s) for s in case_specs if s["name"] in by_name]
    specs = tuple(_spec(s, file, path) for s in merged)
    negative = any("error" in label for label in labels)
    if not negative:
        _check_attributes(merged_attrs, file, path)
    return BenchmarkCase(labels=labels, attributes=merged_attrs, specs=specs, negative=negative)


def read_benchmark_file(path: str | os.PathLike, *, within: str | os.PathLike | None = None) -> BenchmarkFile:
    """One configuration file, its cases merged onto the base; a ConfigError naming the
    file, the case and the key for anything this reader cannot read. ``within``: the
    directory the file was listed in (the reading policy, :mod:`interop.reading`: a symbolic
    link must stay inside it; regular files only, size and nesting limits)."""
    path = Path(path)
    doc, notes = _load(path, Path(within) if within is not None else None)
    unknown = set(doc) - TOP_KEYS
    if unknown:
        raise ConfigError(f"unknown top-level key(s) {sorted(unknown)} (allowed {sorted(TOP_KEYS)})", file=path,
                          key=sorted(unknown)[0])
    for required in ("operation", "format", "test_configurations"):
        if required not in doc:
            raise ConfigError(f"missing top-level key {required!r}", file=path, key=required)
    operation, fmt = doc["operation"], doc["format"]
    if not isinstance(operation, str) or not operation:
        raise ConfigError("operation must be a non-empty string", file=path, key="operation")
    if not isinstance(fmt, dict) or not isinstance(fmt.get("name"), str):
        raise ConfigError("format must be an object with a string name", file=path, key="format.name")
    metadata = fmt.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ConfigError("format.metadata must be an object", file=path, key="format.metadata")
    rank = metadata.get("initializer_rank")
    if rank is not None and (not isinstance(rank, int) or isinstance(rank, bool) or rank < 0):
        raise ConfigError(f"initializer_rank must be a non-negative integer, got {rank!r}", file=path,
                          key="format.metadata.initializer_rank")
    base = doc.get("base_configuration") or {}
    if not isinstance(base, dict) or not set(base) <= CASE_KEYS:
        bad = sorted(set(base) - CASE_KEYS) if isinstance(base, dict) else []
        raise ConfigError("base_configuration must be an object with attributes and input_specs", file=path,
                          key=f"base_configuration.{bad[0]}" if bad else "base_configuration")
    tests = doc["test_configurations"]
    if not isinstance(tests, dict):
        raise ConfigError("test_configurations must be an object", file=path, key="test_configurations")
    leaves = [(labels, leaf) for labels, leaf in _walk(tests, (), path)] if not _is_case(tests) or not tests else \
        [((), tests)]
    cases = tuple(_merge(base, leaf, labels, path) for labels, leaf in leaves)
    return BenchmarkFile(path=path, operation=operation, format=fmt["name"], metadata=dict(metadata),
                         cases=cases, notes=tuple(notes))


def read_benchmark_dir(directory: str | os.PathLike | None = None) -> list[BenchmarkFile]:
    """Every ``*.json`` of ``directory`` (default: the installed package's), by name."""
    folder = Path(directory) if directory is not None else installed_config_dir()
    if not folder.is_dir():
        raise ConfigError("not a directory of configurations", file=folder)
    return [read_benchmark_file(p, within=folder) for p in sorted(folder.glob("*.json"))]


# --------------------------------------------------------------------------------------
# ids
# --------------------------------------------------------------------------------------
_AXIS_INDEX = re.compile(r"\[[\d,\s]+\](?=[A-Za-z])")
_NOT_ID = re.compile(r"[^A-Za-z0-9\-]+")


def _ascii(label: str) -> str:
    out = []
    for ch in label:
        if ch.isascii():
            out.append(ch)
        else:
            out.append(f" {unicodedata.name(ch, f'u{ord(ch):04x}').lower()} ")
    return "".join(out)


def label_id(labels: Iterable[str]) -> str:
    """``("shape", "[0]N", "4")`` -> ``shape_N_4``: the axis indices of sweep labels
    (``[0]``, ``[2,3]``) dropped, other punctuation to ``_``, non-ASCII symbols by their
    Unicode name (``(↑)`` -> ``upwards_arrow``), ``>``/``<``/a leading ``=`` as
    ``gt``/``lt``/``eq``."""
    parts = []
    for label in labels:
        label = _AXIS_INDEX.sub(" ", label)
        label = re.sub(r"^=", " eq ", label.replace(">", " gt ").replace("<", " lt "))
        text = _NOT_ID.sub("_", _ascii(label)).strip("_")
        parts.append(text or "case")
    return "_".join(parts) or "case"
