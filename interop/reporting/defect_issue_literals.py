"""Python source that rebuilds a value exactly, for the reports of :mod:`.defect_issue_write`:
:func:`array_literal` (a numpy array as ``np.array([...], dtype=...).reshape(...)``, checked by reading it
back), an ONNX attribute's value as ``make_node`` takes it back, a value info as
``make_tensor_value_info``, and the shortest text of one number (:func:`_number`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..reproducers.script import script_literal

__all__ = ["array_literal"]

_FLOATS = {"float16", "float32", "float64"}
_INTS = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}


def _number(v: Any, dtype: str) -> str:
    if dtype in _FLOATS:
        f = float(v)
        if f != f:
            return "np.nan"
        if f in (float("inf"), float("-inf")):
            return "np.inf" if f > 0 else "-np.inf"
        return repr(f) if dtype == "float64" else str(v)  # numpy's shortest text that reads back to the same float
    if dtype == "bool":
        return "True" if bool(v) else "False"
    return str(int(v))


def _wrapped(items: list[str], indent: str, width: int = 108) -> list[str]:
    lines, line = [], ""
    for item in items:
        if line and len(indent) + len(line) + len(item) + 2 > width:
            lines.append(indent + line.rstrip())
            line = ""
        line += item + ", "
    if line:
        lines.append(indent + line.rstrip().rstrip(","))
    return lines


def array_literal(array: np.ndarray, indent: str = "    ") -> str | None:
    """``np.array([...], dtype=np.float32).reshape(...)``: Python source that rebuilds ``array`` exactly
    (every value, NaN where NaN, the sign of zeros, dtype and shape: checked by evaluating it); None for
    a dtype it cannot write (bfloat16, strings, complex) or when it would not read back the same."""
    array = np.asarray(array)
    dtype = array.dtype.name
    if dtype not in _FLOATS | _INTS | {"bool"}:
        return None
    flat = array.reshape(-1)
    items = [_number(v, dtype) for v in flat]
    name = "np.bool_" if dtype == "bool" else f"np.{dtype}"
    if len(items) <= 8:
        text = f"np.array([{', '.join(items)}], dtype={name})"
    else:
        text = "\n".join([f"np.array([", *_wrapped(items, indent + "    "), f"{indent}], dtype={name})"])
    if array.ndim != 1:
        text += f".reshape({', '.join(str(d) for d in array.shape)}{',' if array.ndim == 1 else ''})" \
            if array.ndim else ".reshape(())"
    try:
        back = eval(text, {"__builtins__": {}, "np": np})  # noqa: S307  our own text: numbers only
    except Exception:  # noqa: BLE001
        return None
    if back.dtype != array.dtype or back.shape != array.shape:
        return None
    if dtype in _FLOATS:
        nan = np.isnan(array)
        if not (np.array_equal(nan, np.isnan(back)) and back[~nan].tobytes() == array[~nan].tobytes()):
            return None
    elif back.tobytes() != array.tobytes():
        return None
    return text


def _attribute_literal(value: Any) -> str | None:
    """An attribute's value as ``make_node`` takes it back (None: an attribute it cannot rebuild)."""
    if isinstance(value, bytes):
        try:
            return script_literal(value.decode("utf-8"))
        except UnicodeDecodeError:
            return script_literal(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(np.float32(value), "float32")
    if hasattr(value, "dims") and hasattr(value, "data_type"):  # a TensorProto (Constant's value)
        from onnx import numpy_helper

        try:
            text = array_literal(numpy_helper.to_array(value), indent="        ")
        except Exception:  # noqa: BLE001
            return None
        return None if text is None else f"numpy_helper.from_array({text}, name={script_literal(value.name)})"
    if isinstance(value, list) and value:
        items = [_attribute_literal(v) for v in value]
        if any(i is None for i in items) or len({type(v) for v in value}) != 1:
            return None
        return "[" + ", ".join(items) + "]"
    return None  # an empty list (no type to infer), a graph, a sparse tensor, a type proto


def _value_info_literal(vi) -> str | None:
    import onnx

    t = vi.type
    if t.WhichOneof("value") != "tensor_type":
        return None
    tt = t.tensor_type
    shape = "None" if not tt.HasField("shape") else "[" + ", ".join(
        str(d.dim_value) if d.HasField("dim_value") else (script_literal(d.dim_param) if d.HasField("dim_param")
                                                          else "None") for d in tt.shape.dim) + "]"
    return (f"helper.make_tensor_value_info({script_literal(vi.name)}, "
            f"TensorProto.{onnx.TensorProto.DataType.Name(tt.elem_type)}, {shape})")
