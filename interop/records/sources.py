"""Per-source and per-attribution views of a findings report.

A case's *source* is where it comes from, read from the test file of its pytest node id:
the operator catalog (JSON configurations), PyTorch's OpInfo samples, the model zoo... A
failure's *attribution* (:data:`~interop.categories.ATTRIBUTIONS`) says who is to
blame: read from the failure itself (``attribution: export (...)``, written by
:func:`interop.verify`'s check; ``[attribution export]`` in an expected failure's reason),
else from its category (an export error is the export's, every other Aidge category
Aidge's). Findings attributed to ``export`` or ``precision`` are not Aidge bugs: the report
lists them in their own sections.

Nothing here prints, imports torch or Aidge.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from ..categories import ATTRIBUTIONS, CRASH_MESSAGE_RE, kind_of

__all__ = ["SOURCES", "source_of", "attribution_of", "per_source", "NOT_AIDGE"]

#: test file -> source name, in report order
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
}
#: attributions whose findings are not Aidge bugs
NOT_AIDGE = ("export", "precision")
_ATTRIBUTION = re.compile(r"(?:^|\n|\[)attribution:? (?P<who>" + "|".join(ATTRIBUTIONS) + r")\b")


def source_of(nodeid: str) -> str:
    """The source of a pytest node id (``tests/test_opinfo.py::...`` -> ``OpInfo``)."""
    path = nodeid.split("::", 1)[0]
    name = path.rsplit("/", 1)[-1]
    if name in SOURCES:
        return SOURCES[name]
    return "framework unit tests" if "/unit/" in f"/{path}" else "other"


def _died_in_export(message: str | None) -> bool:
    crash = CRASH_MESSAGE_RE.search(message or "")
    return bool(crash and crash.group("phase") == "export")


def attribution_of(message: str, category: str) -> str | None:
    """Who a failure is attributed to (None for a category that is not an Aidge one nor an
    export error)."""
    found = _ATTRIBUTION.search(message or "")
    if found:
        return found.group("who")
    if category.startswith("export_error") or (category == "crash" and _died_in_export(message)):
        return "export"  # a process that died inside torch.onnx.export died in torch's code
    return "aidge" if kind_of(category) == "aidge" else None


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


# -- test ids ----------------------------------------------------------------------------------
def case_id(nodeid: str) -> str:
    """``tests/test_operators.py::test_Conv2D_interop[Conv2D_stride_2]`` -> ``Conv2D_stride_2``;
    a test without parameters -> its function name without ``test_``."""
    name = nodeid.rsplit("::", 1)[-1]
    if name.endswith("]") and "[" in name:
        return name[name.index("[") + 1:-1]
    return name[5:] if name.startswith("test_") else name


_OPINFO_ID = re.compile(r"^opinfo_(.+?)_s\d+_")


def operator_of(case: str) -> str:
    """The operator of a case id: its prefix up to the first ``_`` (``Conv2D_stride_2`` -> ``Conv2D``);
    for an OpInfo case its entry (``opinfo_nn.functional.conv2d_s0_...`` -> ``nn.functional.conv2d``)."""
    opinfo = _OPINFO_ID.match(case)
    if opinfo:
        return opinfo.group(1)
    return case.split("_", 1)[0] or case
