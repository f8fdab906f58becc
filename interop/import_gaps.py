"""The words an import error names the ONNX nodes Aidge imported as GenericOperator with:
``'node' (ONNX op X)``, one per node (a table row quotes the ``(ONNX op X)`` part alone). One writer,
:func:`generic_nodes_message` (the bridge's import, Aidge as an ONNX backend), and one reader,
:func:`onnx_ops_named` / :func:`import_gaps` (the registry's signature, the triage, the report,
``check``), where each had its own regular expression. It imports nothing of the package: the
registry reads it, and errors reaches the registry."""
from __future__ import annotations

import re

__all__ = ["generic_nodes_message", "onnx_ops_named", "import_gaps"]

#: one node without an Aidge operator, as an import error names it: ``'node' (ONNX op X)``; a table
#: row quotes the ``(ONNX op X)`` part alone
_NAMED_NODE = re.compile(r"(?:'(?P<node>[^']+)' )?\(ONNX op (?P<op>\w+)\)")


def generic_nodes_message(nodes: list[tuple[str, str]]) -> str:
    """The import error for ONNX nodes Aidge imported as GenericOperator: ``nodes`` as ``(name, ONNX op)``
    in the order to name them. The one writer of the words :func:`onnx_ops_named` and
    :func:`import_gaps` read (a generated reproducer writes them too, as literal code)."""
    details = ", ".join(f"{name!r} (ONNX op {op})" for name, op in nodes)
    return (f"Aidge has no native operator for {len(nodes)} node(s): {details}; "
            "they were imported as GenericOperator and cannot run")


def onnx_ops_named(text: str) -> list[str]:
    """The ONNX ops an import error (or a table row quoting it) names, ``(ONNX op X)``, in order."""
    return [m.group("op") for m in _NAMED_NODE.finditer(text or "")]


def import_gaps(text: str) -> list[tuple[str, str]]:
    """``[(node, ONNX op), ...]`` of an import error that names its nodes (:func:`generic_nodes_message`)."""
    return [(m.group("node"), m.group("op")) for m in _NAMED_NODE.finditer(text or "") if m.group("node")]
