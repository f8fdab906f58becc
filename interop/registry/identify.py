"""Which defect is a failure? The one answer (:func:`identify`) every reader gives: ``wrap``'s and
``verify``'s errors (:attr:`interop.errors.AidgeError.defect`), ``check``, the records, the ledger
and ``triage diff``. A failure's *signature* (:func:`signature_of`: the defect's kind, the Aidge
operator, the phase, the backend and Aidge's words with what varies removed) names a registry entry
(:mod:`interop.registry`) by its id or its words; an unmatched failure gets a proposed id (the
signature's hash, :func:`defect_id`) and a title, and the Aidge library to blame is decided from
evidence (:func:`interop.registry.component_of`).

A record here is a plain mapping with the fields the records hold (``category``, ``phase``,
``error``, ``aidge_operator``, ``backend``, ``reproducer``, ``first_diverging``); nothing here
reads files but the registry's."""
from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ..import_gaps import onnx_ops_named
from . import by_id, match
from .components import component_of
from .._lazy import quiet_import

__all__ = ["KIND_OF_CATEGORY", "signature_of", "row_signature", "aidge_operator_named", "defect_id", "aidge_words",
           "identify", "identify_row", "title_of", "proposed_defect", "importer_kind"]

#: failure category -> defect kind
KIND_OF_CATEGORY = {
    "unsupported_operator": "no importer",
    "forward_not_implemented": "no kernel",
    "backward_not_implemented": "no backward",
    "outputs_differ": "wrong values",
    "gradients_differ": "wrong values",
    "training_diverges": "wrong values",
    "output_shape_differs": "wrong shape",
    "crash": "memory-unsafe",
    "hang": "memory-unsafe",
    "accepts_invalid_input": "accepts invalid input",
    "import_error": "error",
    "compile_error": "error",
    "aidge_error": "error",
    "cuda_kernel_image": "packaging",
}
_COMPONENT = {"no importer": "aidge_onnx", "converter failure": "aidge_onnx", "no kernel": "aidge_backend_cpu",
              "no backward": "aidge_backend_cpu"}
#: the bridge's words for what Aidge does on an empty input: nothing, the previous outputs stay (runner.py)
_STALE = re.compile(r"Aidge does not compute on empty tensors")
_KEY_DTYPE = re.compile(r'registrar key: "\[(\w+)')
_NUMBERS = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def _normalise(message: str) -> str:
    """Aidge's message with what varies from case to case removed: numbers, quoted names, shapes."""
    text = " ".join(str(message or "").split())
    text = re.sub(r"^(crash|Aidge \w+ failed)[^:]*:\s*", "", text)
    text = re.sub(r"Available registrar keys are:.*", "", text)
    text = _QUOTED.sub("'…'", text)
    text = _NUMBERS.sub("N", text)
    return text[:160].strip()


def importer_kind(onnx_op: str) -> str | None:
    """For an ONNX op Aidge imported as GenericOperator: ``converter failure`` when the installed
    aidge_onnx has a converter of its own for it (it declined or raised on this node's attributes or
    inputs), ``no converter`` when it has none; None when aidge_onnx cannot be asked. The one answer
    the records, the reproducers and the registry give (a plain run has no reproducer to ask)."""
    try:
        converters = quiet_import("aidge_onnx").ONNX_NODE_CONVERTER_
    except Exception:  # noqa: BLE001
        return None
    # a defaultdict: every op the importer met is a key, the missing ones mapped to the generic
    # importer (its default_factory's value); a converter of its own is any other value
    generic = converters.default_factory() if getattr(converters, "default_factory", None) else None
    found = dict.get(converters, str(onnx_op).lower())
    return "converter failure" if found is not None and found is not generic else "no converter"


def signature_of(record: dict[str, Any]) -> dict[str, Any]:
    """The fields that decide which defect a record belongs to."""
    category = record.get("category") or "unknown"
    kind = KIND_OF_CATEGORY.get(category, "error")
    repro = record.get("reproducer") if isinstance(record.get("reproducer"), dict) else {}
    error = str(record.get("error") or "")
    operator = None
    named = (onnx_ops_named(error) or [None])[0]
    if kind == "no importer" and (repro.get("import_kind") or (importer_kind(named) if named else None)) \
            == "converter failure":
        kind = "converter failure"
    if kind in ("no importer", "converter failure") and named:
        operator = named
    first = record.get("first_diverging") if isinstance(record.get("first_diverging"), dict) else None
    if operator is None and first:  # Aidge's name for it, as the cases without ONNX (Aidge's configurations) say
        operator = first.get("aidge_type") or first.get("op_type")
    if operator is None:  # the operator Aidge's own message names
        operator = aidge_operator_named(error)
    if operator is None and _AIDGE_TYPE.fullmatch(str(record.get("aidge_operator") or "")):
        operator = str(record["aidge_operator"])  # the Aidge type the table or the bridge names (not a torch op)
    if operator is None and repro.get("op"):  # the one node of the smallest graph that fails (its ONNX op)
        operator = str(repro["op"])
    if operator is None:  # the case's own name for it (a torch op where nothing above says more)
        operator = record.get("aidge_operator") or record.get("operator") or "?"
    if _STALE.search(error):  # Aidge runs nothing and leaves the previous outputs: one defect, whatever the node
        kind, operator = "silently wrong result", "any operator on an empty tensor"
    backend = record.get("backend") or "cpu"
    component = "aidge_export_cpp" if backend == "export_cpp" else _COMPONENT.get(kind, "aidge_core")
    dtype = None
    if kind == "no kernel":
        dm = _KEY_DTYPE.search(error)
        dtype = dm.group(1) if dm else None
    phase = record.get("phase") or "?"
    words = error
    if kind in ("no importer",):
        words = ""  # the op is the defect: the message only repeats the node's name
    elif kind == "converter failure":
        said = repro.get("aidge_said") or []
        words = said[0] if said else ""
    elif kind in ("wrong values", "wrong shape"):
        words = ""  # numbers differ from case to case; the operator and phase are the defect
    elif kind == "silently wrong result":
        words = "Aidge does not compute on empty tensors"  # the input's shape and rank vary; the defect does not
    return {"kind": kind, "component": component, "operator": str(operator), "dtype": dtype,
            "phase": phase, "backend": backend, "message": _normalise(words)}


_NAMED = (re.compile(r"\(operator (\w+), node"),
          re.compile(r"for (\w+?)_Op<(\d)>"),  # Backward not yet implemented for AvgPooling_Op<2>: AvgPooling2D
          re.compile(r"registrable object N5Aidge\d+([A-Za-z]+?)(?:_Op|Impl)?(?:IL\w*?(\d)EE)?E"),
          re.compile(r"(?:^|\):\s*)([A-Z][A-Za-z0-9]*?)(?:_Op)?: "),
          re.compile(r"implemented (?:yet )?for (?:operator of type )?(\w+?)(?:_Op)?(?: on|$|\s)"),
          re.compile(r"for (\w+) operator"))


#: an Aidge operator type as Aidge writes it (``BatchNorm2D``, ``Slice``), not a torch entry (``nn.functional.pad``)
_AIDGE_TYPE = re.compile(r"[A-Z][A-Za-z0-9]*")


def aidge_operator_named(message: str) -> str | None:
    """The Aidge operator an Aidge message names: ``(operator X, node ...)`` (the bridge's words),
    a registrar's object (``N5Aidge13MaxPooling_OpILh3EEE``: MaxPooling3D), an operator's own prefix
    (``Shape_Op: ...``, ``Slice: Step ...``), ``not implemented for X_Op``, ``for FC operator``."""
    text = str(message or "")
    for pattern in _NAMED:
        m = pattern.search(text)
        if m:
            name = m.group(1)
            if pattern.groups > 1 and m.group(2):
                name += f"{m.group(2)}D"
            if pattern in (_NAMED[1], _NAMED[2]) or not (name == "Aidge" or name.endswith(("Error", "Exception",
                                                                                         "Warning"))):
                return name
    return None


def defect_id(signature: dict[str, Any]) -> str:
    """The id a signature proposes for a defect no registry entry holds (a hash of the signature)."""
    text = json.dumps(signature, sort_keys=True)
    return "D-" + hashlib.sha1(text.encode()).hexdigest()[:8]


_BRIDGE_WORDS = re.compile(r"^(crash|Aidge \w+ failed)[^:]*:\s*")


def aidge_words(error: str) -> str:
    """Aidge's own words in a failure's error: the bridge's prefix removed, whitespace folded."""
    return _BRIDGE_WORDS.sub("", " ".join(str(error or "").split()))


def identify(record: dict[str, Any], *, signature: dict[str, Any] | None = None) -> dict[str, Any]:
    """Which defect a failure is: the one answer every reader gives (the ledger, ``check``,
    ``triage diff``). A registry entry (:mod:`interop.registry`) the failure matches gives its
    stable id, title and evidence-based component (``registered``: True); otherwise the
    signature proposes an id (its hash), a title, and the component is decided from evidence
    (:func:`interop.registry.component_of`: the library holding Aidge's message)."""
    sig = signature or signature_of(record)
    error = str(record.get("error") or "")
    # the id its signature gives, when the registry holds it (an entry's id or alias: the ids the
    # table's rows were triaged with), else the entry its words match
    found = by_id(defect_id(sig)) or match(
        kind=sig["kind"], operator=sig["operator"], phase=sig["phase"], backend=sig["backend"], error=error)
    return _registered(found) if found is not None else proposed_defect(sig, error)


def _registered(found: Any) -> dict[str, Any]:
    """:func:`identify`'s answer for a registry entry."""
    return {"id": found.id, "title": found.title, "component": found.component, "evidence": found.evidence,
            "registered": True}


def proposed_defect(sig: dict[str, Any], error: str, did: str | None = None) -> dict[str, Any]:
    """:func:`identify`'s answer for a defect no registry entry holds: ``did`` (else the id the
    signature proposes), the signature's title, the component decided from evidence."""
    onnx_op = sig["operator"] if sig["kind"] in ("no importer", "converter failure") else None
    component, evidence = component_of(sig["kind"], aidge_words(error) if sig["message"] else "",
                                                backend=sig["backend"], onnx_op=onnx_op)
    return {"id": did or defect_id(sig), "title": title_of(sig), "component": component, "evidence": evidence,
            "registered": False}


def title_of(sig: dict[str, Any]) -> str:
    op, kind, phase = sig["operator"], sig["kind"], sig["phase"]
    dtype = f" for {sig['dtype']}" if sig.get("dtype") else ""
    texts = {"no importer": f"aidge_onnx has no importer for ONNX op {op}",
             "converter failure": f"aidge_onnx's {op} converter declines or fails on this node",
             "no kernel": f"no {sig['backend']} kernel for {op}{dtype}",
             "no backward": f"{op} has no backward on {sig['backend']}",
             "wrong values": f"{op} computes wrong values in {phase}",
             "wrong shape": f"{op} returns a wrong shape in {phase}",
             "memory-unsafe": f"{op}: the process dies in {phase}",
             "accepts invalid input": f"{op} accepts an input it should refuse",
             "error": f"{op} refuses a valid graph in {phase}",
             "silently wrong result": "Aidge computes nothing on an empty tensor and returns the previous outputs "
                                      "unchanged (a silently wrong result; the bridge refuses such inputs)"}
    return texts.get(kind, f"{op}: {kind} in {phase}")


def row_signature(entry: Any) -> dict[str, Any]:
    """The signature of a table row (an :class:`~interop.cases.failure_table.ExpectedFailure`) no run
    has reached: what :func:`signature_of` reads from a record, read from the row's own words (its
    first quote stands for Aidge's message). Gives the id of a row that names no defect."""
    kind = KIND_OF_CATEGORY.get(entry.category, "error")
    backend = entry.backend if isinstance(entry.backend, str) else (entry.backend or ("cpu",))[0]
    component = "aidge_export_cpp" if backend == "export_cpp" else _COMPONENT.get(kind, "aidge_core")
    quote = entry.quotes[0] if entry.quotes else ""
    dtype = None
    if kind == "no kernel":
        dm = re.search(r'registrar key: "\[(\w+)', quote)
        dtype = dm.group(1) if dm else None
    words = "" if kind in ("no importer", "wrong values", "wrong shape") else quote
    operator = entry.operator
    named = (onnx_ops_named(quote) or [None])[0]
    if kind == "no importer" and named and importer_kind(named) == "converter failure":
        kind, operator = "converter failure", named  # as signature_of decides it for the row's cases
    if _STALE.search(quote):
        kind, operator = "silently wrong result", "any operator on an empty tensor"
        words = "Aidge does not compute on empty tensors"
    if kind not in ("no importer", "converter failure"):  # an OpInfo row names its torch op: Aidge's words say more
        operator = aidge_operator_named(quote) or operator
    return {"kind": kind, "component": component, "operator": operator, "dtype": dtype, "phase": entry.phase,
            "backend": backend, "message": _normalise(words)}


def identify_row(entry: Any) -> dict[str, Any]:
    """:func:`identify` for a table row (an :class:`~interop.cases.failure_table.ExpectedFailure`):
    the registry entry its ``defect`` names (an id or an alias), else the one its signature and
    first quote match, else the id its signature proposes."""
    named = by_id(entry.defect) if getattr(entry, "defect", None) else None
    if named is not None:
        return _registered(named)
    sig = row_signature(entry)
    quote = entry.quotes[0] if entry.quotes else ""
    if entry.defect:  # the row's own name for a defect the registry does not hold yet: its name wins
        return proposed_defect(sig, quote, entry.defect)
    return identify({"error": quote}, signature=sig)
