"""The run's pages typed: :class:`DefectEntry` (an entry of ``defects.json``, the ledger),
:class:`SupportCell` (a cell of ``support.json``, the support matrix) and :class:`PortingRow` (a
row of ``porting.json``, the porting table, with its :class:`PortingCell` per route and that
cell's :class:`PortingBlocking`), each listing every key its builder writes, with its type.

The builders (:func:`.ledger.build_ledger`, :func:`.ledger_slow.slow_entries`,
:func:`.support.support_matrix`, :func:`.porting.porting_table`) and writers return their entries
through :func:`checked` (a key of the wrong type, or a key the model does not list, is a
:class:`PageFileError` before anything is written); the readers of the files validate what they
read through :func:`page_entries` / :func:`read_page`, and a wrong entry is refused naming the
file, the entry (its id) and the key: ``RUN/defects.json: defect D-0000abcd: key 'known': an
integer, got str`` (worded by :func:`interop.reading.validation_problem`, as a record's
wrong field is). As :mod:`interop.records.model` does for records: ``strict`` (no
coercion), the dicts themselves are kept (the JSON written is byte for byte what it was), and a
key added later is optional (None: null, or absent), so that an older run's files still read.
``extra="forbid"``: the key sets are closed (a misspelt key is refused).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..reading import validation_problem

__all__ = ["DefectEntry", "SupportCell", "PortingRow", "PortingCell", "PortingBlocking", "PageFileError",
           "checked", "checked_all", "page_entries", "read_page", "PAGE_LISTS"]

_S = Optional[str]
_N = Optional[float]  # a number (strict: an integer is one, true is not)
_CONFIG = ConfigDict(strict=True, extra="forbid", populate_by_name=True)


class DefectEntry(BaseModel):
    """An entry of the ledger (``defects.json``'s ``defects``): an Aidge defect
    (:func:`.ledger.build_ledger`, 36 keys) or a slow node (kind ``slow``,
    :func:`.ledger_slow.slow_entries`, 46 keys). Only ``id`` is required."""

    model_config = _CONFIG

    id: str
    # -- the signature (interop.registry.identify.signature_of; node_profile's slow_signature) --------
    kind: _S = None
    component: _S = None
    operator: _S = None
    dtype: _S = None
    phase: _S = None
    backend: _S = None
    message: _S = None
    # -- which defect (interop.registry.identify.identify) ---------------------------------------------
    title: _S = None
    evidence: _S = None
    registered: Optional[bool] = None
    # -- the cases, the table's rows, the releases -------------------------------------------------------
    cases: Optional[list[str]] = None
    sources: Optional[dict[str, int]] = None
    source_kinds: Optional[list[str]] = None
    known: Optional[int] = None
    new: Optional[int] = None
    rows: Optional[list[str]] = None
    table_defects: Optional[list[str]] = None
    blocks: Optional[dict[str, list[str]]] = None
    releases: Optional[list[str]] = None
    first_seen: _S = None
    since: _S = None
    # -- what Aidge said, the reproducer, the upstream report ------------------------------------------
    aidge_said: _S = None
    error: _S = None
    detected_by: _S = None
    reproducer: _S = None
    reproducer_nodes: Optional[int] = None
    reproducer_root: _S = None
    repro_line: _S = None
    issue: _S = None
    standalone: _S = None
    # -- torch's reach (ledger._reached_from_torch) ------------------------------------------------------
    torch_cases: Optional[int] = None
    torch_rows: Optional[dict[str, int]] = None
    reached_from_torch: Optional[bool] = None
    torch_export: _S = None
    # -- a slow node (kind "slow": the per-node profile's entry) ----------------------------------------
    op_type: _S = None
    attributes: Optional[dict[str, Any]] = None
    input_shapes: Optional[list[Any]] = None
    ratio_ort: _N = None
    threshold: _N = None
    cost_s: _N = None
    models: Optional[dict[str, dict[str, float]]] = None
    ratio_torch: _N = None
    torch_op: _S = None
    aidge_alone_s: _N = None
    ort_alone_s: _N = None
    ort_optimized_alone_s: _N = None
    torch_alone_s: _N = None
    ratio_ort_optimized_alone: _N = None
    alone_rounds: Optional[int] = None
    alone_error: _S = None
    occurrences: Optional[list[dict[str, Any]]] = None
    profiled: Optional[dict[str, Any]] = None
    reproducer_error: _S = None


class SupportCell(BaseModel):
    """A cell of the support matrix (``support.json``'s ``cells``, :func:`.support.support_matrix`;
    ``defects`` added by :func:`.support.write_support`): 15 keys."""

    model_config = _CONFIG

    operator: _S = None
    source: _S = None
    phase: _S = None
    backend: _S = None
    dtype: _S = None
    passed: Optional[int] = None
    total: Optional[int] = None
    skipped: Optional[int] = None
    lost: Optional[int] = None
    categories: Optional[dict[str, int]] = None
    failing: Optional[list[str]] = None
    failing_nodeids: Optional[list[str]] = None
    aidge_operators: Optional[list[str]] = None
    routes: Optional[dict[str, int]] = None
    defects: Optional[list[str]] = None


class PortingBlocking(BaseModel):
    """The first failure that blocks a route of an architecture (a :class:`PortingCell`'s
    ``blocking``): 13 keys."""

    model_config = _CONFIG

    mode: _S = None
    phase: _S = None
    operator: _S = None
    node: _S = None
    operator_from: _S = None
    table_operator: _S = None
    unsupported: Optional[list[list[str | int]]] = None  #: [ONNX op, nodes] pairs
    category: _S = None
    attribution: _S = None
    error: _S = None
    full_error: _S = None
    case: _S = None
    expected: Optional[bool] = None


class PortingCell(BaseModel):
    """A route of an architecture (a :class:`PortingRow`'s ``routes``): 8 keys."""

    model_config = _CONFIG

    exports: _S = None
    nodes: Optional[int] = None
    import_: _S = Field(None, alias="import")
    forward: Optional[dict[str, str]] = None
    backward: _S = None
    blocking: Optional[PortingBlocking] = None
    cases: Optional[list[str]] = None
    defects: Optional[list[str]] = None


class PortingRow(BaseModel):
    """A row of the porting table (``porting.json``'s ``rows``, :func:`.porting.porting_table`;
    ``speed`` added by :func:`.porting.attach_speeds`): 4 keys, ``architecture`` required."""

    model_config = _CONFIG

    architecture: str
    library: _S = None
    routes: Optional[dict[str, PortingCell]] = None
    speed: Optional[dict[str, float]] = None


#: a page file's name -> (the key of its list, the model of each item)
PAGE_LISTS: dict[str, tuple[str, type[BaseModel]]] = {
    "defects.json": ("defects", DefectEntry),
    "support.json": ("cells", SupportCell),
    "porting.json": ("rows", PortingRow),
}


class PageFileError(ValueError):
    """An entry of a page file (or one a builder made) that its model refuses: the file, the entry
    and the key named."""


def _label(model: type[BaseModel], obj: Any, index: int | None) -> str:
    """How an entry is named: its id (a defect), its row key (a cell), its architecture (a row)."""
    where = f" {index}" if index is not None else ""
    if not isinstance(obj, dict):
        return f"entry{where}"
    if model is DefectEntry and isinstance(obj.get("id"), str):
        return f"defect {obj['id']}"
    if model is SupportCell:
        key = "/".join(str(obj.get(k)) for k in ("operator", "source", "phase", "backend", "dtype"))
        return f"cell{where} ({key})"
    if model is PortingRow and isinstance(obj.get("architecture"), str):
        return f"row {obj['architecture']}"
    return f"entry{where}"


def checked(model: type[BaseModel], obj: Any, *, where: str | Path | None = None,
            index: int | None = None) -> dict[str, Any]:
    """``obj`` validated through ``model``: itself (the dict, its keys in their order: what is written
    is what was built), or a :class:`PageFileError` naming ``where`` (the file), the entry and the key."""
    prefix = f"{where}: " if where is not None else ""
    if not isinstance(obj, dict):
        raise PageFileError(f"{prefix}{_label(model, obj, index)}: not an object, got {type(obj).__name__}")
    try:
        model.model_validate(obj)
    except ValidationError as exc:
        raise PageFileError(f"{prefix}{_label(model, obj, index)}: {validation_problem(exc, obj)}") from None
    return obj


def checked_all(model: type[BaseModel], items: Iterable[Any], *,
                where: str | Path | None = None) -> list[dict[str, Any]]:
    """Every item of ``items`` through :func:`checked` (each named by its place), as a list."""
    return [checked(model, item, where=where, index=i) for i, item in enumerate(items)]


def page_entries(data: Any, path: str | Path, page: str | None = None) -> list[dict[str, Any]]:
    """The entries of a page file's content ``data`` (``defects.json``: its ``defects``, or the list
    itself; ``support.json``: its ``cells``; ``porting.json``: its ``rows``), each validated through
    its model (:data:`PAGE_LISTS`, by ``page``, else the file's name); a :class:`PageFileError` naming
    ``path``, the entry and the key otherwise."""
    key, model = PAGE_LISTS[page or Path(path).name]
    entries = data.get(key) if isinstance(data, dict) else data if key == "defects" else None
    if entries is None and isinstance(data, dict):  # no list (null, or absent): no entry
        entries = []
    if not isinstance(entries, list):
        raise PageFileError(f"{path}: key {key!r}: a list, got {type(entries).__name__}")
    return checked_all(model, entries, where=path)


def read_page(path: str | Path, page: str | None = None) -> tuple[Any, list[dict[str, Any]]]:
    """A page file read (its JSON, as it is) and its entries (:func:`page_entries`). An OSError or a
    ValueError (not JSON) as ``json`` raises them; a :class:`PageFileError` for a wrong entry."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return data, page_entries(data, path, page)
