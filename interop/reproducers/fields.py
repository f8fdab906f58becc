"""Reading a written bundle: what a failing test's record says of its reproducer
(:func:`record_fields`), what a bundle folder says of its own graph (:func:`bundle_facts`), and
the operators of its graph (:func:`bundle_aidge_types`, :func:`_single_op`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..bridge import runtime as rt
from ..oracle.attribution import invalid_graph_excuses
from .bundle import PENDING, complete_pending, export_valid
from .layout import bundle_folder
from .script import ONNX_TEST_EXPECTED

def bundle_aidge_types(folder: Path) -> list[str] | None:
    """The Aidge operator types (Producers left out, sorted) of a bundle's graph as aidge_onnx
    imports it: the reduced graph when one was kept, else the full one. None when there is no
    graph or Aidge cannot import it (its log stays quiet). What names a row's Aidge operator where
    the record names none but its one-node graph's ONNX op (``Log`` is Aidge's ``Ln``)."""
    for model in (folder / "reduced" / "model.onnx", folder / "model.onnx"):
        if model.is_file() and not model.is_symlink():
            break
    else:
        return None
    try:
        if model.stat().st_size > 64_000_000:
            return None
        import onnx

        with rt.quiet_aidge():
            graph = rt.aidge_onnx().convert_onnx_to_aidge(onnx.load(str(model)))
            return sorted({n.type() for n in graph.get_nodes()} - {"Producer"})
    except Exception:  # noqa: BLE001 - a name is a help, not a need
        return None


def record_fields(directory: Path, nodeid: str, record: dict[str, Any], log: str = "") -> dict[str, Any]:
    """What a failing test's record says of its reproducer (``reproducer``), of the first diverging
    node (``first_diverging``), and the attribution moved to the export when onnx's checker or
    onnxruntime refuses the graph that Aidge was given."""
    folder = bundle_folder(directory, nodeid)
    meta_path = folder / "meta.json"
    if record.get("category") in ("crash", "hang") and not meta_path.is_file() and (folder / PENDING).is_dir():
        try:
            complete_pending(directory, nodeid, record, log)
        except Exception:  # noqa: BLE001 - then no bundle, said below
            pass
    if not meta_path.is_file() or meta_path.is_symlink():
        if record.get("category") in ("crash", "hang", "killed"):
            why = "the case's process died before it could write one (crash or time-out)"
        else:
            why = "no Aidge graph was built for this case (the failure came before or outside wrap)"
        return {"reproducer": {"written": False, "why": why}}
    try:
        if meta_path.stat().st_size > 4_000_000:
            raise ValueError("meta.json over 4 MB")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if not isinstance(meta, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:
        return {"reproducer": {"written": False, "why": f"{meta_path}: unreadable ({exc})"}}
    reduced = meta.get("reduced") if isinstance(meta.get("reduced"), dict) else {}
    check = dict(meta["export_check"]) if isinstance(meta.get("export_check"), dict) else {}
    if check:
        check["valid"] = export_valid(check)  # the rule of this version, whatever wrote the bundle
    rel = folder.relative_to(directory).as_posix()
    out: dict[str, Any] = {"reproducer": {
        "written": True, "path": rel, "reproduces": bool(meta.get("reproduces")),
        "line": (meta.get("repro") or {}).get("line"), "nodes": meta.get("nodes"),
        "reduced": f"{rel}/reduced" if reduced.get("kept") else None,
        "reduced_nodes": reduced.get("nodes") if reduced.get("kept") else None,
        "reduced_why": None if reduced.get("kept") else reduced.get("why"),
        "full_removed": meta.get("full_removed"),
        "export_valid": check.get("valid"), "onnxruntime_matches_torch": check.get("onnxruntime_matches_torch")}}
    op = _single_op(folder / "reduced" if reduced.get("kept") else folder)
    if not op and isinstance(reduced.get("crashing"), dict):  # a crash: the node whose prefix first dies
        op = reduced["crashing"].get("op_type")
    if op:
        out["reproducer"]["op"] = op
    said = meta.get("aidge_said")
    if isinstance(said, list) and said:
        out["reproducer"]["aidge_said"] = [str(s) for s in said[:8]]
    if meta.get("import_kind") in ("converter failure", "no converter"):
        out["reproducer"]["import_kind"] = meta["import_kind"]
    if isinstance(reduced.get("first_diverging"), dict):
        out["first_diverging"] = reduced["first_diverging"]
    # a crash or a hang stays Aidge's (memory-unsafe: a graph onnx refuses is to be refused, not to kill
    # the process), as the table triage and the plain run say; before 2026-12-07 a findings run alone
    # moved them to the export (index_select of a 0-d tensor: Gather's SIGSEGV, 4 cases)

    if check.get("valid") is False and record.get("attribution") == "aidge" \
            and invalid_graph_excuses(record.get("category")):
        refusal = check.get("checker") if check.get("checker") != "ok" else check.get("onnxruntime")
        out["attribution"] = "export"
        out["attribution_reason"] = f"the exported graph is invalid, so Aidge is not blamed: {refusal}"
    return out


def bundle_facts(folder: Path) -> dict[str, Any]:
    """What a bundle folder (a bundle, or its ``reduced/``) says of its *own* graph, read from
    ``meta.json`` (the parent's for ``reduced/``): ``reduced``, ``line`` (the verdict its own
    ``repro.py`` printed when it was written: for ``reduced/``, ``meta["reduced"]["repro"]``, not the
    full graph's), ``expected_from`` (whose values ``test_data_set_0/output_K.pb`` hold), ``versions``
    (the packages of the process that wrote it), ``calls``. ``{}`` when there is no readable meta.json."""
    folder = Path(folder)
    reduced = folder.name == "reduced" and (folder.parent / "meta.json").is_file()
    path = (folder.parent if reduced else folder) / "meta.json"
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 4_000_000:
            return {}
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(meta, dict):
        return {}
    red = meta.get("reduced") if isinstance(meta.get("reduced"), dict) else {}
    own = (red if reduced else meta).get("repro")
    if reduced:
        expected_from = "onnx's reference evaluator" if red.get("reference") else "onnxruntime"
    elif meta.get("expected_from") == ONNX_TEST_EXPECTED:
        expected_from = ONNX_TEST_EXPECTED
    elif meta.get("expected_from"):
        expected_from = "onnxruntime"
    else:
        expected_from = "torch"
    check = meta.get("export_check") if isinstance(meta.get("export_check"), dict) else {}
    return {"reduced": reduced, "line": (own or {}).get("line") if isinstance(own, dict) else None,
            "expected_from": expected_from, "calls": meta.get("calls"),
            "versions": meta.get("versions") if isinstance(meta.get("versions"), dict) else {},
            "onnxruntime_matches_torch": check.get("onnxruntime_matches_torch"),
            "factory": meta.get("factory") if isinstance(meta.get("factory"), dict) else None}


def _single_op(folder: Path) -> str | None:
    """The ONNX op of a bundle's graph when it has one node (what the ledger names a defect by when
    Aidge's message names no operator); None otherwise or when the graph cannot be read."""
    model = folder / "model.onnx"
    try:
        if model.is_symlink() or not model.is_file() or model.stat().st_size > 64_000_000:
            return None
        import onnx

        nodes = onnx.load(str(model), load_external_data=False).graph.node
    except Exception:  # noqa: BLE001 - a name is a help, not a need
        return None
    return nodes[0].op_type if len(nodes) == 1 else None
