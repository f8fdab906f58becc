"""Is the graph Aidge refused a valid ONNX graph? An Aidge error on an exported graph is blamed on
Aidge only after the export was checked: when onnx's full checker (types and shapes inferred) or
onnxruntime refuses the graph torch exported (the oracle's rule,
:func:`interop.oracle.onnxruntime.graph_refusal`), Aidge refusing it too is no Aidge defect.

Measured 2026-12-07 (Aidge 0.10.1, torch 2.13.0): ``torch.all`` of a float32 tensor exports
``Not`` on the float input (onnx: "X typestr: T, has unsupported type: tensor(float)";
onnxruntime: INVALID_GRAPH); Aidge refuses it ("Expected boolean data type for input#0, got
float32"), and the table filed that as an Aidge defect. The check runs only when Aidge has
already failed, once per export.
"""
from __future__ import annotations

from typing import Any

from ..errors import AidgeError, KNOWN_DEFECT_NOTE, UnsupportedOperatorError

__all__ = ["export_refusal", "blame_invalid_export"]

_UNCHECKED = object()


def export_refusal(exported: Any) -> str | None:
    """Why ``exported.proto`` is no valid ONNX graph (the oracle's one rule,
    :func:`interop.oracle.onnxruntime.graph_refusal`), or None. Cached on the export."""
    found = getattr(exported, "_refusal", _UNCHECKED)
    if found is not _UNCHECKED:
        return found
    from ..oracle.onnxruntime import graph_refusal

    found = graph_refusal(exported.proto)
    try:
        exported._refusal = found
    except AttributeError:
        pass
    return found


def blame_invalid_export(exc: BaseException, exported: Any) -> BaseException:
    """``exc`` (an :class:`~interop.errors.AidgeError` raised on ``exported``'s graph) with
    ``attribution = "export"`` and its reason when that graph is invalid; unchanged
    otherwise. Returns ``exc``."""
    from ..oracle.attribution import invalid_graph_excuses

    # what an invalid graph does not excuse (a missing importer: Aidge's gap whatever else the graph
    # holds) is the oracle's one rule; a graph Aidge imports and then refuses is judged here
    category = "unsupported_operator" if isinstance(exc, UnsupportedOperatorError) else "aidge_error"
    if isinstance(exc, AidgeError) and invalid_graph_excuses(category) \
            and exc.attribution is None and exported is not None:
        refusal = export_refusal(exported)
        if refusal:
            exc.attribution = "export"
            exc.attribution_reason = f"the exported graph is invalid, so Aidge is not blamed: {refusal}"
            notes = getattr(exc, "__notes__", None)
            if notes:
                notes[:] = [n for n in notes if not n.startswith(KNOWN_DEFECT_NOTE)]
    return exc
