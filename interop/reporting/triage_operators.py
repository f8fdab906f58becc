"""A table row's operator from the records of the cases it holds (issue 42: an Aidge operator, never a
torch name): :func:`aidge_operator_of` (the operator a failure's record blames), :func:`row_operators`
(per row, the operators its cases' records name), :func:`operator_changes` and
:func:`apply_operator_changes` (the rows renamed or split, written into the table). Part of
the table triage (:mod:`.triage_propose`).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..cases import failure_table as ft
from ..cases.case import normalized_label  # normalized_label: the one normalisation of labels
from ..registry.identify import signature_of

__all__ = ["aidge_operator_of", "row_operators", "operator_changes", "apply_operator_changes"]

# ---------------------------------------------------------------------------------------
# a row's operator from the records of the cases it holds (issue 42: never a torch name)
# ---------------------------------------------------------------------------------------
_AIDGE_NAME = re.compile(r"[A-Z][A-Za-z0-9]*")
_IMPL_REGISTRAR = re.compile(r"OperatorImpl_\w+?INS_(\d+)(\w+)")


def aidge_operator_of(record: dict[str, Any], run_dir: str | Path | None = None) -> str | None:
    """The operator a failure's record blames: the Aidge operator the ledger's signature reads
    (:func:`interop.registry.identify.signature_of`: the first diverging node, the operator Aidge's message names,
    the one node of the smallest graph), or the ONNX op of an import gap. For the empty-tensor
    rows (the signature's "any operator on an empty tensor") the node Aidge ran. Where that is the
    ONNX op of a one-node graph, or nothing, and ``run_dir`` holds the case's bundle, the one Aidge
    type aidge_onnx imports the bundle's graph as (ONNX ``Log`` is Aidge's ``Ln``). None when the
    record names none but the case's torch op."""
    signature = signature_of(record)
    operator = signature["operator"]
    if signature["kind"] == "silently wrong result":
        operator = signature_of(dict(record, error=""))["operator"]
    if not _AIDGE_NAME.fullmatch(str(operator)) or operator == record.get("operator"):
        operator = None
    if operator is None:  # a CPU kernel's registrar: ...OperatorImpl_cpuINS_9Expand_Op... (a length-prefixed name)
        m = _IMPL_REGISTRAR.search(str(record.get("error") or ""))
        if m and m.group(2)[:int(m.group(1))].endswith("_Op"):
            operator = m.group(2)[:int(m.group(1)) - 3]
    repro = record.get("reproducer") if isinstance(record.get("reproducer"), dict) else {}
    import_gap = signature["kind"] in ("no importer", "converter failure")
    if run_dir is not None and not import_gap and (operator is None or operator == repro.get("op")) \
            and isinstance(repro.get("path"), str) and repro.get("written"):
        from ..reproducers.fields import bundle_aidge_types

        types_ = bundle_aidge_types(Path(run_dir) / repro["path"])
        if types_ and len(types_) == 1:
            operator = types_[0]
    return operator


def row_operators(records, run_dir: str | Path | None = None) -> dict[str, dict[str | None, list[str]]]:
    """``{"<release>/<file>#<index>": {Aidge operator: ["<torch op>:<case key>", ...]}}`` over the
    xfailed records a table row decided (``expected.row``); a record that names no Aidge operator
    counts under None."""
    out: dict[str, dict[str | None, list[str]]] = {}
    for record in records:
        expected = record.get("expected") if isinstance(record.get("expected"), dict) else {}
        ref = expected.get("row")
        if not ref or record.get("outcome") != "xfailed":
            continue
        op = aidge_operator_of(record, run_dir)
        out.setdefault(ref, {}).setdefault(op, []).append(f"{record.get('operator')}:{record.get('case_key')}")
    return out


def operator_changes(by_row: dict[str, dict[str | None, list[str]]], table_dir: str | Path | None = None):
    """What the records say of each reached row whose ``operator`` is not yet CamelCase (a torch
    name): ``(the files' rows, changes)``. A row whose every reached case names the same Aidge
    operator gets it; a row whose cases name several is split, one row per operator, only when
    every selector of the row was reached and holds cases of one operator; any other row is left,
    with why (a case that names no operator, a selector no run reached). Every other key is kept,
    so the rows match what they matched before."""
    table = Path(table_dir) if table_dir else ft.TABLE_DIR
    files: dict[Path, list[dict]] = {}
    changes = []
    for ref in sorted(by_row, key=lambda r: (r.split("#")[0], int(r.split("#")[1]))):
        name, index = ref.split("#")
        path = table / name
        if path not in files:
            files[path] = json.loads(path.read_text(encoding="utf-8"))["rows"]
        row = files[path][int(index)]
        if _AIDGE_NAME.fullmatch(row["operator"]):
            continue  # already an Aidge operator or an ONNX op: a run does not overrule the row's reading
        ops = {op: cases for op, cases in by_row[ref].items() if op is not None}
        change = {"row": ref, "before": row["operator"], "cases": {str(k): len(v) for k, v in by_row[ref].items()}}
        if not ops:
            changes.append(dict(change, after=None, why="no record names an Aidge operator"))
        elif None in by_row[ref]:
            changes.append(dict(change, after=None, why="some of its cases name no Aidge operator"))
        elif len(ops) == 1:
            (op,) = ops
            changes.append(dict(change, after=op))
        else:
            entry = ft.entry_of(row)
            owner: dict[str, set] = {}
            for op, cases in ops.items():
                for case in cases:
                    torch_op, key = case.split(":", 1)
                    owner.setdefault(entry.selector_for(torch_op, normalized_label(key)) or case, set()).add(op)
            if any(len(v) > 1 for v in owner.values()):
                changes.append(dict(change, after=None, why="one selector holds cases of several Aidge operators: "
                                                            + ", ".join(sorted(ops))))
            elif set(_selectors(row)) - set(owner):
                changes.append(dict(change, after=None, why="its cases name several Aidge operators ("
                                    + ", ".join(sorted(ops)) + ") and some of its selectors no run reached"))
            else:
                written = _selectors(row)  # the selector as the entry reads it -> as the row writes it
                changes.append(dict(change, after=sorted(ops), split={
                    op: sorted(written[s] for s, o in owner.items() if o == {op}) for op in sorted(ops)}))
    return files, changes


def _selectors(row: dict) -> dict[str, str]:
    """``{selector as the row's entry matches it (:meth:`ExpectedFailure.selector_for`): selector as
    the row writes it}``: the entry normalises a label (``1.5`` -> ``1_5``)."""
    out = {}
    for written in row["cases"]:
        for op, patterns in ft.entry_of(dict(row, cases=[written])).patterns_by_operator.items():
            for pattern in patterns:
                out[f"{op}:{pattern}"] = written
    return out


def apply_operator_changes(files: dict[Path, list[dict]], changes: list[dict]) -> list[Path]:
    """Write ``changes`` (:func:`operator_changes`) into the table files, each through
    :func:`failure_table.write_table_file` (atomic, :func:`failure_table.format_rows`). A split row
    becomes one row per operator in its place, each with its own selectors."""
    by_file: dict[Path, dict[int, dict]] = {}
    for change in changes:
        if change.get("after") is None:
            continue
        name, index = change["row"].split("#")
        path = next(p for p in files if p.as_posix().endswith(name))
        by_file.setdefault(path, {})[int(index)] = change
    written = []
    for path, edits in by_file.items():
        rows = []
        for index, row in enumerate(files[path]):
            change = edits.get(index)
            if change is None:
                rows.append(row)
            elif isinstance(change["after"], str):
                rows.append(dict(row, operator=change["after"]))
            else:
                for op in change["after"]:
                    mine = set(change["split"][op])
                    rows.append(dict(row, operator=op, cases=[c for c in row["cases"] if c in mine]))
        release = json.loads(path.read_text(encoding="utf-8"))["release"]
        ft.write_table_file(path, release, rows)
        written.append(path)
    return written
