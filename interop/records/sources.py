"""Per-source and per-attribution views of a findings report.

A case's *source* is where it comes from: the operator catalog (JSON configurations), PyTorch's
OpInfo samples, the model zoo... A record carries it with the case's other fields, written from
the case object (:attr:`interop.cases.case.Case.suite`); a test that runs no case (a unit test,
a tensor test) is named by its test file (:data:`SOURCES`, :func:`caseless_fields`). A
failure's *attribution* (:data:`~interop.categories.ATTRIBUTIONS`) says who is to
blame, decided once by :func:`interop.categories.attribution_rule` (what the failure
says, else from its category and phase) when the record is written; :func:`attribution_of` applies
the same rule to a failure known only by its text. Findings attributed to ``export`` or ``precision`` are not Aidge bugs: the report
lists them in their own sections.

The one place an id is parsed back is :func:`imported_fields`: the importer of records written
without their case's fields (runs before issue 46, rows read from a console output).

Nothing here prints, imports torch or Aidge.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from ..cases.case import PHASES, normalized_label  # the one normalisation of labels
from ..categories import attribution_rule


__all__ = ["SOURCES", "source_of", "attribution_of", "per_source", "NOT_AIDGE", "caseless_fields", "imported_fields",
           "with_imported_fields", "split_opinfo_id"]

#: test file -> source name, in report order (a case's own source is its kind's,
#: :data:`interop.cases.case.SOURCE_OF_KIND`: these names are the same)
SOURCES = {
    "test_operators.py": "catalog JSON",
    "test_operators_hypothesis.py": "catalog (hypothesis)",
    "test_opinfo.py": "OpInfo",
    "test_moduleinfo.py": "ModuleInfo",
    "test_architectures.py": "architectures (MONAI, transformers)",
    "test_aidge_configs.py": "Aidge configs (aidge-benchmark)",
    "test_models.py": "model zoo",
    "test_contract.py": "model zoo (contract)",
    "test_tensor.py": "tensors",
    "test_onnx_backend.py": "ONNX backend tests",
}
#: attributions whose findings are not Aidge bugs
NOT_AIDGE = ("export", "precision")


def source_of(nodeid: str) -> str:
    """The source of a pytest node id (``tests/test_opinfo.py::...`` -> ``OpInfo``): for a test
    that runs no case, and for the importer of old records (:func:`imported_fields`)."""
    path = nodeid.split("::", 1)[0]
    name = path.rsplit("/", 1)[-1]
    if name in SOURCES:
        return SOURCES[name]
    return "framework unit tests" if "/unit/" in f"/{path}" else "other"


def attribution_of(message: str, category: str) -> str | None:
    """Who a failure known only by its text (a console row) is attributed to: the one rule,
    :func:`interop.categories.attribution_rule` (an ``attribution: X`` its text states,
    else from the category and a crash's or hang's phase in the text), as the records have it."""
    return attribution_rule(category, None, message or "")[0]


def per_source(results: Iterable[Any], findings: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """source -> {cases, passed, findings, by_category {category: n}, by_attribution {who: n}}."""
    out: dict[str, dict[str, Any]] = {}

    def entry(source: str) -> dict[str, Any]:
        return out.setdefault(source, {"cases": 0, "passed": 0, "skipped": 0, "findings": 0,
                                       "by_category": {}, "by_attribution": {}})

    for r in results:
        e = entry(r.get("source") or source_of(r["nodeid"]))
        e["cases"] += 1
        if r["outcome"] in ("passed", "skipped"):
            e[r["outcome"]] += 1
    for f in findings:
        e = entry(f["source"])
        e["findings"] += 1
        e["by_category"][f["category"]] = e["by_category"].get(f["category"], 0) + 1
        who = f.get("attribution") or "-"
        e["by_attribution"][who] = e["by_attribution"].get(who, 0) + 1
    order = list(SOURCES.values())
    return dict(sorted(out.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


# -- tests that run no case; records without their case's fields -----------------------------
def caseless_fields(nodeid: str) -> dict[str, Any]:
    """The fields of a test that runs no case: its test file's source and its test name."""
    return {"source": source_of(nodeid), "case": case_id(nodeid)}


#: the dtypes an OpInfo id can end with (the float32 ones end with none)
_OPINFO_DTYPES = ("float16", "float64", "int64", "bool")
_OPINFO_SPLIT = re.compile(r"^opinfo_(?P<entry>.+?)_(?P<label>s\d+(?:_.*)?)$")


def split_opinfo_id(case_id: str) -> tuple[str, str] | None:
    """``opinfo_<entry>_s<index>_<sample>`` -> (entry, label) as the table keys it, or None: the
    label normalised as :attr:`interop.cases.case.Case.label` is (dots to ``_``:
    ``s64_5x5x2_0.5`` -> ``s64_5x5x2_0_5``). The importer's (:func:`imported_fields`) only."""
    m = _OPINFO_SPLIT.match(case_id or "")
    return (m.group("entry"), normalized_label(m.group("label"))) if m else None


def imported_fields(record: dict[str, Any]) -> dict[str, Any]:
    """The case fields a record written without them (a run before issue 46, a row read from a
    console output) gets back from its ids, the one place ids are parsed: ``source`` from its
    node id's test file, ``case`` from its node id; an OpInfo case id gives ``kind``,
    ``operator`` (its entry), ``label`` and ``dtype`` (its suffix) and every phase; a record
    with ``kind`` and ``operator`` but no ``label`` gets it from ``case_key`` (else its case id
    without ``<operator>_``). Only the fields the record lacks (None or absent) are returned."""
    have = {k for k, v in record.items() if v is not None}
    nodeid = str(record.get("nodeid") or "")
    out: dict[str, Any] = {}
    if "source" not in have and nodeid:
        out["source"] = source_of(nodeid)
    if "case" not in have and nodeid:
        out["case"] = case_id(nodeid)
    case = str(record.get("case") or out.get("case") or "")
    if not {"kind", "operator"} <= have:
        split = split_opinfo_id(case)
        if split is not None:
            dtype = next((d for d in _OPINFO_DTYPES if split[1].endswith("_" + d)), "float32")
            fields = {"kind": "opinfo", "operator": split[0], "label": split[1], "dtype": dtype,
                      "phases": list(PHASES)}
            out.update({k: v for k, v in fields.items() if k not in have})
    elif "label" not in have:
        operator, key = str(record["operator"]), record.get("case_key")
        out["label"] = normalized_label(str(key)) if key else (
            case[len(operator) + 1:] if case.startswith(operator + "_") else case)
    return out


def with_imported_fields(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with the fields :func:`imported_fields` gives back (a new dict)."""
    missing = imported_fields(record)
    return {**record, **missing} if missing else record


# -- test ids ----------------------------------------------------------------------------------
def case_id(nodeid: str) -> str:
    """``tests/test_operators.py::test_Conv2D_interop[Conv2D_stride_2]`` -> ``Conv2D_stride_2``;
    a test without parameters -> its function name without ``test_``."""
    name = nodeid.rsplit("::", 1)[-1]
    if name.endswith("]") and "[" in name:
        return name[name.index("[") + 1:-1]
    return name[5:] if name.startswith("test_") else name


def operator_of(case: str) -> str:
    """The operator of a case id, for a row without an ``operator`` field (a console output, an
    old run): its prefix up to the first ``_`` (``Conv2D_stride_2`` -> ``Conv2D``); for an OpInfo
    case its entry (``opinfo_nn.functional.conv2d_s0_...`` -> ``nn.functional.conv2d``)."""
    opinfo = split_opinfo_id(case)
    if opinfo:
        return opinfo[0]
    return case.split("_", 1)[0] or case
