"""The map from aidge_onnx's node names back to the ONNX graph's nodes (to compare an Aidge node's
output with onnxruntime's value of the same ONNX node). onnxruntime itself is asked through the
oracle's one runner, :mod:`interop.oracle.onnxruntime`."""
from __future__ import annotations

from . import runtime as rt

__all__ = ["aidge_node_indices"]


def aidge_node_indices(proto) -> dict[str, int]:
    """Aidge node name -> index of its ONNX node: aidge_onnx renames every node and tensor
    (``onnx_to_aidge_model_names``: ``/0/Conv`` becomes ``data_0_Conv``) and names a node after
    its ONNX name, or its first output when it has none. Matched on a renamed copy, node by node."""
    import onnx

    renamed = onnx.ModelProto()
    renamed.CopyFrom(proto)
    try:
        rt.aidge_onnx().onnx_to_aidge_model_names(renamed)
    except Exception:  # noqa: BLE001 - an older aidge_onnx: the names as they are
        renamed = proto
    names: dict[str, int] = {}
    for k, (node, new) in enumerate(zip(proto.graph.node, renamed.graph.node)):
        for candidate in (new.name, new.output[0] if new.output else "", node.name):
            if candidate:
                names.setdefault(candidate, k)
    return names
