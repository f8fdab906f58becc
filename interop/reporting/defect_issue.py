"""An upstream report per defect, ready to paste: ``defects/<id>/ISSUE.md`` and ``standalone.py``.

For each entry of the ledger (:mod:`interop.reporting.ledger`) that has a reproducer, the run
directory gets ``defects/<id>/``:

- ``standalone.py``: one file that needs numpy, onnx and Aidge only, written from the smallest
  reproducer bundle (:mod:`interop.diagnostics.reproducer`): the graph as ``onnx.helper`` code
  (``make_node``, ``make_graph``, ``make_model``; constants as numpy literals), the inputs and the
  expected values as numpy literals (``np.array([...], dtype=np.float32).reshape(...)``) when each
  holds at most :data:`LITERAL_MAX_ELEMENTS` elements and the literals stay under
  :data:`LITERAL_MAX_CHARS`; a larger graph or value is read from the bundle's file of the same
  name, copied beside the script (``model.onnx``, ``test_data_set_0/<name>.pb``: ISSUE.md says
  which to attach). Then the harness of the bundle's own ``repro.py`` (what checked the bundle:
  import, compile, run, compare) and an entry point of its own: exit 1 while the defect is present,
  printing expected against actual, 0 once Aidge computes the expected values, 2 when it cannot
  run. No encoded blob; the suite's case ids and messages are not in it.
- ``ISSUE.md``: Aidge's side first: a title, the versions of exactly what ``standalone.py``
  imports (``importlib.metadata``) and the ``pip install`` line for them, what happens (for a
  value or shape mismatch, what ``standalone.py`` prints on the attached graph: its expected and
  actual values, never the whole model's), Aidge's own words, the graph (each node: op, inputs
  with shapes and dtypes, attributes), how to run it, the script inline when the issue stays under
  :data:`INLINE_LIMIT` characters (GitHub's limit on an issue's body is 65,536) and, else, which
  files to attach; then the defect's impact, and last, marked as the suite's own and not needed to
  reproduce, "Affected cases in aidge-interop": its ledger id, the check that saw it and its words,
  the test ids.

Nothing is written outside ``<run>/defects/`` (each file atomically); a bundle that cannot be read
leaves a report without the graph or the script, saying why.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ..diagnostics.repro_fields import bundle_facts
from ..diagnostics.repro_script import script_literal
from ..reading import UnsafeInputError, confined
from ..records.store import write_atomically
from . import text_escape

__all__ = ["write_issues", "issue_text", "standalone_script", "standalone_parts", "script_versions", "run_standalone",
           "array_literal", "INLINE_LIMIT", "ISSUES_DIR", "LITERAL_MAX_ELEMENTS", "LITERAL_MAX_CHARS"]

#: the largest ISSUE.md (characters) that holds its script inline
INLINE_LIMIT = 60_000
#: the folder of a run that holds one folder per defect
ISSUES_DIR = "defects"
#: the kinds whose ISSUE.md quotes what standalone.py prints (run once, in a fresh interpreter, as it is written)
RUN_KINDS = ("wrong values", "wrong shape")
RUN_TIMEOUT_S = 120


# --------------------------------------------------------------------------------------------------
# standalone.py: the graph as onnx.helper code, the values as numpy literals, the bundle's harness

#: a tensor of at most this many elements is written into standalone.py as a numpy literal
LITERAL_MAX_ELEMENTS = 4096
#: the literals (graph and values) of one standalone.py, at most (characters); the largest go to files beyond
LITERAL_MAX_CHARS = 200_000
#: where the harness of a bundle's repro.py starts (repro_script writes this line above repro_body.py)
_BODY_MARK = "# ---- numpy, onnx and Aidge only from here"
#: the harness's one file test that a literal value must answer too (grad_input_K.pb present?)
_EXISTS = "if os.path.exists(path) and name in by_name:"
_FLOATS = {"float16", "float32", "float64"}
_INTS = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
#: the import names of what standalone.py needs beyond the standard library, and their distributions
DISTRIBUTIONS = {"aidge_core": "aidge-core", "aidge_backend_cpu": "aidge-backend-cpu", "aidge_onnx": "aidge-onnx",
                 "onnx": "onnx", "numpy": "numpy"}


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


def _graph_code(model_path: Path) -> list[str] | None:
    """``def build_model():`` in onnx.helper calls that rebuild ``model_path``'s graph (nodes, constants
    as numpy literals, inputs, outputs, opsets), checked by building it and comparing node by node;
    None when a part cannot be written so (a subgraph, a local function, a constant over
    :data:`LITERAL_MAX_ELEMENTS` or of a dtype numpy literals cannot hold)."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(model_path), load_external_data=False)
    g = model.graph
    if model.functions or g.sparse_initializer or any(t.data_location == onnx.TensorProto.EXTERNAL
                                                       for t in g.initializer):
        return None
    lines = ["def build_model():", '    """The ONNX graph Aidge is given (onnx.helper: the same graph as model.onnx)."""',
             "    nodes = ["]
    for node in g.node:
        args = [script_literal(node.op_type), script_literal(list(node.input)), script_literal(list(node.output))]
        if node.name:
            args.append(f"name={script_literal(node.name)}")
        if node.domain:
            args.append(f"domain={script_literal(node.domain)}")
        for a in sorted(node.attribute, key=lambda a: a.name):
            if a.ref_attr_name or not a.name.isidentifier():
                return None
            text = _attribute_literal(helper.get_attribute_value(a))
            if text is None:
                return None
            args.append(f"{a.name}={text}")
        one = f"        helper.make_node({', '.join(args)}),"
        lines += [one] if len(one) <= 110 else \
            ["        helper.make_node(", *[f"            {a}," for a in args], "        ),"]
    lines += ["    ]", "    initializers = ["]
    for init in g.initializer:
        array = numpy_helper.to_array(init)
        text = array_literal(array, indent="        ") if array.size <= LITERAL_MAX_ELEMENTS else None
        if text is None:
            return None
        lines.append(f"        numpy_helper.from_array({text}, name={script_literal(init.name)}),")
    lines.append("    ]")
    for field, what in (("input", "inputs"), ("output", "outputs"), ("value_info", "value_info")):
        items = [_value_info_literal(vi) for vi in getattr(g, field)]
        if any(i is None for i in items):
            return None
        if field == "value_info" and not items:
            continue
        lines += [f"    {what} = [", *[f"        {i}," for i in items], "    ]"]
    opsets = ", ".join(f"helper.make_opsetid({script_literal(o.domain)}, {int(o.version)})" for o in model.opset_import)
    lines += [f"    graph = helper.make_graph(nodes, {script_literal(g.name)}, inputs, outputs, initializer=initializers"
              + (", value_info=value_info)" if g.value_info else ")"),
              f"    model = helper.make_model(graph, opset_imports=[{opsets}], "
              f"producer_name={script_literal(model.producer_name)})",
              f"    model.ir_version = {int(model.ir_version)}", "    return model"]
    try:
        namespace = {"np": np, "helper": helper, "numpy_helper": numpy_helper, "TensorProto": onnx.TensorProto}
        exec("\n".join(lines), namespace)  # noqa: S102  our own text, checked to rebuild the graph
        built = namespace["build_model"]()
    except Exception:  # noqa: BLE001
        return None
    return lines if _same_graph(built, model) else None


def _same_graph(a, b) -> bool:
    """Whether two models hold the same graph: nodes (attributes in any order), constants' values,
    inputs, outputs, value_info, opsets, ir_version (doc strings and metadata aside)."""
    from onnx import numpy_helper

    def node_key(n):
        return (n.op_type, n.domain, n.name, list(n.input), list(n.output),
                sorted(x.SerializeToString(deterministic=True) for x in _bare(n.attribute)))

    def vi_key(vis):
        return [x.SerializeToString(deterministic=True) for x in _bare(vis)]

    ga, gb = a.graph, b.graph
    if [node_key(n) for n in ga.node] != [node_key(n) for n in gb.node] or ga.name != gb.name:
        return False
    if any(vi_key(getattr(ga, f)) != vi_key(getattr(gb, f)) for f in ("input", "output", "value_info")):
        return False
    if [i.name for i in ga.initializer] != [i.name for i in gb.initializer]:
        return False
    for x, y in zip(ga.initializer, gb.initializer):
        ax, ay = numpy_helper.to_array(x), numpy_helper.to_array(y)
        if ax.dtype != ay.dtype or ax.shape != ay.shape or ax.tobytes() != ay.tobytes():
            return False
    return ([(o.domain, o.version) for o in a.opset_import] == [(o.domain, o.version) for o in b.opset_import]
            and a.ir_version == b.ir_version)


def _bare(items):
    out = []
    for item in items:
        copy = type(item)()
        copy.CopyFrom(item)
        copy.ClearField("doc_string")
        if hasattr(copy, "metadata_props"):
            copy.ClearField("metadata_props")
        out.append(copy)
    return out


def _settings_of(script: str) -> dict[str, Any]:
    """A generated repro.py's module-level settings, read as data (:func:`~interop.diagnostics.reproducer.script_settings`)."""
    from ..diagnostics.repro_script import script_settings

    return script_settings(script)


def _harness(repro: str) -> tuple[dict[str, Any], str]:
    """A bundle's repro.py as ``(settings, harness)``: the harness is its body (what ran when the bundle
    was checked: loading, compiling, running, comparing) without its ``main``."""
    at = repro.find(_BODY_MARK)
    end = repro.find("\ndef main(")
    if at < 0 or end < at:
        raise OSError("its repro.py has no harness this version can read")
    return _settings_of(repro[:at]), repro[at:end].rstrip() + "\n"


_DOC = {
    "graph": ["The ONNX graph is built below by build_model() (onnx.helper); INPUTS are the values fed to it",
              "and EXPECTED the values it should compute (EXPECTED_FROM says whose). The rest is the harness: it",
              "imports the graph with aidge_onnx, compiles it for the CPU, runs it and compares Aidge's outputs",
              "with EXPECTED within RTOL/ATOL."],
    "file": ["The ONNX graph is read from model.onnx beside this script (attach it with the script); INPUTS are",
             "the values fed to it and EXPECTED the values it should compute (EXPECTED_FROM says whose). The rest",
             "is the harness: it imports the graph with aidge_onnx, compiles it for the CPU, runs it and compares",
             "Aidge's outputs with EXPECTED within RTOL/ATOL."],
    "verbatim": ["The ONNX graph is built below by build_model() (onnx.helper); INPUTS are the values fed to it",
                 "and EXPECTED the values it should compute. REPRO is the reproducer's own script, run as it is in a",
                 "temporary folder that holds the graph and the values."],
    "factory": ["One Aidge node is built from its aidge_core factory (OPERATION, ATTRIBUTES_JSON below); INPUTS are",
                "the values fed to it and EXPECTED the values it should compute (EXPECTED_FROM says whose). The",
                "rest is the harness: it builds the node, compiles it for the CPU, runs it and compares Aidge's",
                "outputs with EXPECTED within RTOL/ATOL."],
}

_VERBATIM_TAIL = '''

def main():
    """The graph and values above written into a temporary folder as a bundle, and REPRO run there."""
    import runpy
    import tempfile

    with tempfile.TemporaryDirectory(prefix="aidge-repro-") as folder:
        data = os.path.join(folder, "test_data_set_0")
        os.makedirs(data)
        onnx.save(build_model(), os.path.join(folder, "model.onnx"))
        for table in (INPUTS, EXPECTED, GRADIENTS):
            for name, value in table.items():
                with open(os.path.join(data, name), "wb") as f:
                    f.write(numpy_helper.from_array(np.array(value, order="C", copy=True)).SerializeToString())
        script = os.path.join(folder, "repro.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(REPRO)
        sys.argv = [script]
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as done:
            return done.code
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

_TAIL = '''

# ---- this script's own entry point (the harness above is the reproducer's, unchanged) ----
_FILES = {"model": _model, "load": _load}
_FAILED = []
_harness_compare = _compare


def _model():  # noqa: F811
    """The graph: build_model() when this script holds it, else model.onnx beside it."""
    return build_model() if build_model is not None else _FILES["model"]()


def _load(name):  # noqa: F811
    """A value by the name of its file in a bundle (input_0.pb ...): the literal above, else the file beside."""
    for table in (INPUTS, EXPECTED, GRADIENTS):
        if name in table:
            value = table[name]
            return _FILES["load"](name) if value is None else value
    return _FILES["load"](name)


def _has(path):
    name = os.path.basename(path)
    if name in GRADIENTS:
        return GRADIENTS[name] is not None or os.path.exists(path)
    return os.path.exists(path)


def _compare(what, actual, expected):  # noqa: F811
    line = _harness_compare(what, actual, expected)
    if line is not None and not _FAILED:
        _FAILED.append((what, np.asarray(actual), np.asarray(expected)))
    return line


def _details(what, actual, expected, limit=8):
    """Expected against actual, a few lines: dtype and shape, the first values, the largest difference."""
    def head(a):
        flat = a.reshape(-1)
        body = ", ".join(f"{v:.7g}" if np.issubdtype(flat.dtype, np.floating) else str(v) for v in flat[:limit])
        return f"{a.dtype}{list(a.shape)} [{body}{', ...' if flat.size > limit else ''}]"

    lines = [f"{_shown(what)}:", f"  expected: {head(expected)}", f"  actual:   {head(actual)}"]
    if actual.shape == expected.shape and actual.size:
        a, e = actual.astype(np.float64), expected.astype(np.float64)
        bad = ~np.isclose(a, e, rtol=RTOL, atol=ATOL, equal_nan=True)
        diff = np.abs(a - e)
        worst = float(np.nanmax(diff)) if np.isfinite(diff).any() else float("nan")
        at = [int(i) for i in np.unravel_index(int(np.nanargmax(np.where(np.isfinite(diff), diff, -1))), a.shape)]
        lines.append(f"  max |diff| {worst:.6g} at {at} (expected {e[tuple(at)]:.7g}, actual {a[tuple(at)]:.7g}); "
                     f"{int(bad.sum())} of {bad.size} elements differ beyond rtol={RTOL:g} atol={ATOL:g}")
    return lines


def main(argv=None):
    """Exit status: 1 while the defect is present, 0 once fixed, 2 when the reproducer cannot run."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if args:
        print("usage: python standalone.py   (no arguments; exit 1: defect present, 0: fixed, 2: cannot run)")
        return 2
    print(_shown(TITLE))
    try:
        problem = run()
    except Exception as exc:  # noqa: BLE001  (an unreadable file is not the defect)
        print(f"cannot run the reproducer: {_shown(type(exc).__name__)}: {_shown(exc)}")
        return 2
    if problem is None:
        print("FIXED: Aidge computes the expected values within the tolerance")
        return 0
    if _FAILED:
        print("\\n".join(_details(*_FAILED[0])))
    print(f"DEFECT PRESENT: {_shown(problem)}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
'''


def _data_files(bundle: Path) -> list[str]:
    data = bundle / "test_data_set_0"
    if not data.is_dir():
        return []
    return sorted(p.name for p in data.glob("*.pb") if p.name.startswith(("input_", "output_", "grad_")))


def standalone_parts(bundle: Path, defect: dict[str, Any]) -> tuple[str, list[str]]:
    """``(standalone.py's text, the bundle's files it reads beside it)``: the graph as onnx.helper code
    and each value as a numpy literal when small (:data:`LITERAL_MAX_ELEMENTS`, :data:`LITERAL_MAX_CHARS`),
    else read from the file of the bundle it names (``model.onnx``, ``test_data_set_0/<name>.pb``), then
    the harness of the bundle's own repro.py (what checked it) with this script's entry point. Numpy,
    onnx and Aidge only; no encoded blob. Raises OSError when the bundle cannot be read."""
    import onnx
    from onnx import numpy_helper

    bundle = Path(bundle)
    confined(bundle / "repro.py", bundle)
    repro = (bundle / "repro.py").read_text(encoding="utf-8")
    try:
        settings, harness = _harness(repro)
    except OSError:  # not a repro.py this version wrote: held as it is, run beside the graph and values
        settings, harness = {}, None
    factory = "OPERATION" in settings
    facts = bundle_facts(bundle)
    attach: list[str] = []
    graph = None
    if not factory:
        confined(bundle / "model.onnx", bundle)
        try:
            graph = _graph_code(bundle / "model.onnx")
        except Exception:  # noqa: BLE001  the file is then attached: the harness reads it
            graph = None
        if graph is None:
            attach.append("model.onnx")
    values: dict[str, tuple[np.ndarray | None, str | None]] = {}
    for name in _data_files(bundle):
        path = confined(bundle / "test_data_set_0" / name, bundle)
        try:
            array = numpy_helper.to_array(onnx.load_tensor(str(path)))
        except Exception as exc:  # noqa: BLE001
            raise OSError(f"test_data_set_0/{name}: not a TensorProto ({exc})") from None
        text = array_literal(array, indent="    ") if array.size <= LITERAL_MAX_ELEMENTS else None
        values[name] = (array, text)
    budget = LITERAL_MAX_CHARS - sum(len(x) + 1 for x in graph or [])
    for name in sorted(values, key=lambda n: len(values[n][1] or "")):  # the smallest literals first
        text = values[name][1]
        if text is not None and len(text) <= budget:
            budget -= len(text)
        else:
            values[name] = (values[name][0], None)
            attach.append(f"test_data_set_0/{name}")
    if harness is None and attach:
        raise OSError("its repro.py is not one this version wrote, and its graph or values are too large to "
                      "write as code: attach the bundle")
    if harness is None:
        harness = ""
    elif any(n.startswith("grad_input_") and values[n][1] is not None for n in values):
        if harness.count(_EXISTS) != 1:
            raise OSError("its repro.py's harness has no gradient check this version can rewrite")
    harness = harness.replace(_EXISTS, "if _has(path) and name in by_name:")
    harness = harness.replace("os.path.abspath(__file__)", 'os.path.abspath(globals().get("__file__", "standalone.py"))')
    mode = "factory" if factory else ("graph" if graph is not None else "file")
    if not harness:
        mode = "verbatim"
    exp = {"torch": "the PyTorch model this graph was exported from (onnxruntime reproduces it on this graph)",
           "onnxruntime": "onnxruntime, on this graph",
           "onnx's reference evaluator": "onnx's reference evaluator (onnx.reference), on this graph",
           "onnx's backend test": "onnx's own backend test of this graph (the expected outputs it ships)"}
    expected_from = exp.get(str(facts.get("expected_from") or "torch"), exp["torch"])
    if factory:
        expected_from = "the PyTorch operator this Aidge node stands for"
    lines = ["#!/usr/bin/env python3",
             '"""A reproducer of one Aidge defect (TITLE below): numpy, onnx and Aidge only.', "",
             *_DOC[mode], "",
             "A value written None is read from the file of that name in test_data_set_0/ beside this script.",
             "Run: python standalone.py",
             "Exit status: 1 while the defect is present (expected against actual printed), 0 once Aidge computes",
             "the expected values, 2 when the reproducer cannot run (a file it reads beside it is missing).",
             '"""',
             "import os",
             "import sys",
             "",
             "try:",
             "    import numpy as np",
             "    import onnx",
             "    from onnx import TensorProto, helper, numpy_helper",
             "except ImportError as exc:  # exit 2: this script cannot run here (not the defect)",
             "    print(f\"cannot run the reproducer: {type(exc).__name__}: {exc}\")",
             "    sys.exit(2)",
             "",
             f"DEFECT_ID = {script_literal(str(defect['id']))}",
             f"TITLE = {script_literal(str(defect['title']))}",
             f"EXPECTED_FROM = {script_literal(expected_from)}"]
    for key, value in settings.items():
        if key not in ("CASE", "WHAT"):  # the suite's own words: not the reproducer's
            lines.append(f"{key} = {script_literal(value)}")
    lines.append("")
    if graph is not None:
        lines += ["", *graph, "", ""]
    else:
        lines += ["build_model = None  # the graph is read from model.onnx beside this script" if not factory
                  else "build_model = None  # no ONNX graph: one node from its aidge_core factory", ""]
    for table, prefix in (("INPUTS", "input_"), ("EXPECTED", "output_"), ("GRADIENTS", "grad_")):
        names = [n for n in values if n.startswith(prefix)]
        if not names:
            lines.append(f"{table} = {{}}")
            continue
        lines.append(f"{table} = {{")
        for name in names:
            text = values[name][1]
            lines.append(f"    {script_literal(name)}: {text if text is not None else 'None'},")
        lines.append("}")
    lines += ["", ""]
    if mode == "verbatim":
        lines += [f"REPRO = {script_literal(repro)}", ""]
        text = "\n".join(lines) + _VERBATIM_TAIL
    else:
        text = "\n".join(lines) + harness + _TAIL
    compile(text, "standalone.py", "exec")
    return text, attach


def standalone_script(bundle: Path, defect: dict[str, Any]) -> str:
    """standalone.py's text (:func:`standalone_parts`)."""
    return standalone_parts(bundle, defect)[0]


def _graph_lines(model_path: Path) -> list[str]:
    """One line per node of the graph: op, inputs (shape, dtype, or a constant's value), attributes."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(model_path))
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001  shapes are a help, not a need
        pass
    g = model.graph
    known: dict[str, str] = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        t = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim]
        known[vi.name] = f"{onnx.TensorProto.DataType.Name(t.elem_type).lower()}{dims}"
    for init in g.initializer:
        arr = numpy_helper.to_array(init)
        value = f" = {_values(arr)}" if arr.size <= 64 else ""
        known[init.name] = f"constant {arr.dtype}{list(arr.shape)}{value}"
    out = []
    for node in g.node[:40]:
        ins = ", ".join(f"{n or '(none)'}: {known.get(n, '?')}" for n in node.input)
        attrs = ", ".join(f"{a.name}={_short(helper.get_attribute_value(a))}" for a in node.attribute)
        out.append(f"{node.op_type}({ins})" + (f" [{attrs}]" if attrs else "")
                   + f" -> {', '.join(f'{o}: {known.get(o, chr(63))}' for o in node.output)}")
    if len(g.node) > 40:
        out.append(f"... and {len(g.node) - 40} more node(s)")
    return out


def _values(arr: np.ndarray, limit: int = 8) -> str:
    """The first values of an array as their shortest text (float32's, not the double it widens to)."""
    flat = np.asarray(arr).reshape(-1)
    dtype = flat.dtype.name
    items = [_number(v, dtype) if dtype in _FLOATS | _INTS | {"bool"} else repr(v) for v in flat[:limit]]
    return "[" + ", ".join(items) + (", ..." if flat.size > limit else "") + "]"


def _short(value: Any) -> str:
    if isinstance(value, float):
        return _number(np.float32(value), "float32")
    if isinstance(value, list) and value and all(isinstance(v, float) for v in value):
        return "[" + ", ".join(_number(np.float32(v), "float32") for v in value) + "]"
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if hasattr(value, "dims"):  # a TensorProto attribute
        from onnx import numpy_helper

        arr = numpy_helper.to_array(value)
        return f"tensor {arr.dtype}{list(arr.shape)}" + (f" {_values(arr)}" if arr.size <= 8 else "")
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_fence = text_escape.fence  # ``text`` in a code fence longer than its longest backtick run, controls escaped


# --------------------------------------------------------------------------------------------------
# ISSUE.md
def script_versions(script: str | None, versions: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    """``(module, distribution, version)`` for each module ``script`` imports beyond the standard
    library (all of :data:`DISTRIBUTIONS` when there is no script, or when it runs a foreign repro.py held
    as text), the installed version
    (``importlib.metadata``; ``versions``, the run's session, where it is not installed)."""
    import ast
    from importlib import metadata

    wanted = list(DISTRIBUTIONS)
    if script is not None:
        found: set[str] = set()
        for node in ast.walk(ast.parse(script)):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
        tree = ast.parse(script)
        if any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "REPRO" for t in n.targets)
               for n in tree.body):  # a repro.py held as text (not one this version wrote): the whole stack
            found.update(DISTRIBUTIONS)
        wanted = [m for m in DISTRIBUTIONS if m in found]
        wanted += sorted(m for m in found - set(DISTRIBUTIONS) if m not in sys.stdlib_module_names)
    out = []
    for module in wanted:
        dist = DISTRIBUTIONS.get(module, module)
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            version = str((versions or {}).get(module) or "?")
        out.append((module, dist, version))
    return out


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def run_standalone(folder: Path, timeout: float = RUN_TIMEOUT_S) -> dict[str, Any]:
    """``folder/standalone.py`` run as its reader runs it, in a fresh interpreter (``python -I``, torch
    and interop unimportable): ``{"exit": status or None (timed out), "output": its output}``."""
    from ..diagnostics.repro_run import run_fresh

    done = run_fresh(Path(folder) / "standalone.py", timeout)
    if done["exit"] is None:
        return done
    lines = _ANSI.sub("", done["output"]).strip().splitlines()
    if len(lines) > 40:
        lines = lines[:10] + [f"... ({len(lines) - 30} lines)"] + lines[-20:]
    return {"exit": done["exit"], "output": "\n".join(line[:600] for line in lines)}


_PHASE_WORDS = {"import": "imports", "compile": "compiles", "forward": "runs", "backward": "runs the backward of"}


def issue_text(defect: dict[str, Any], run_dir: Path, *, versions: dict[str, str] | None = None,
               script: str | None = None, problem: str | None = None, observed: dict[str, Any] | None = None,
               attach: list[str] | None = None) -> str:
    """The Markdown of an upstream report for one ledger entry: Aidge's side first (versions of what
    ``script`` imports, what happens on the attached graph, Aidge's words, the graph, how to run
    it), then the impact, then the suite's own section. ``observed``: what ``standalone.py`` printed
    (:func:`run_standalone`); ``attach``: the files it reads beside it. Every record-borne field goes
    through :mod:`.text_escape`: prose escaped, messages in code spans or fences, control characters
    as escapes."""
    md, code = text_escape.text, text_escape.code
    versions = versions or {}
    component = defect.get("component") or "aidge"
    root = Path(defect["reproducer_root"]) if defect.get("reproducer_root") else run_dir
    bundle = root / defect["reproducer"] if defect.get("reproducer") else None
    try:
        facts = bundle_facts(confined(bundle, root, kind="dir")) if bundle is not None else {}
    except (OSError, UnsafeInputError):
        facts = {}
    # the verdict of the attached graph's own check: for a reduced graph never the whole model's line
    own = facts.get("line") or (defect.get("repro_line") if bundle is not None and bundle.name != "reduced" else None)
    own = str(own or "").removeprefix("DEFECT PRESENT: ")
    stack = script_versions(script, versions)
    python = versions.get("python") or ".".join(str(v) for v in sys.version_info[:3])
    lines = [f"# [{md(component)}] {md(defect['title'])}", "",
             "**Versions** (what `standalone.py` imports): "
             + md(", ".join(f"{m} {v}" for m, _, v in stack)) + f" (Python {md(python)}).", "",
             "Install: " + code("pip install " + " ".join(f"{d}=={v}" for _, d, v in stack)), ""]
    written = {str(k): str(v) for k, v in (facts.get("versions") or {}).items()}
    differ = [f"{m} {written[m]}" for m, _, v in stack if m in written and written[m] != v]
    if differ:
        lines += [f"(The reproducer was written with {md(', '.join(differ))}.)", ""]
    lines += ["## What happens", ""]
    expected_from = {"onnxruntime": "onnxruntime's output for this graph",
                     "onnx's reference evaluator": "onnx's reference evaluator's output for this graph",
                     "onnx's backend test": "the expected output onnx's own backend test ships for this graph",
                     "torch": "the output of the PyTorch model this graph was exported from"
                              + (", which onnxruntime reproduces on it" if facts.get("onnxruntime_matches_torch")
                                 else "")}.get(str(facts.get("expected_from") or ""), "the reference values")
    if defect["kind"] in ("wrong values", "wrong shape"):
        what = "values" if defect["kind"] == "wrong values" else "shape"
        if observed and observed.get("exit") == 1:
            lines += [f"Aidge runs the graph below without an error, but its output {what} differ from the expected "
                      f"ones ({md(expected_from)}). `python standalone.py` prints, on this graph:", "",
                      *_fence(str(observed.get("output") or "")), ""]
        elif own:
            lines += [f"Aidge runs the graph below without an error, but its output {what} differ from the expected "
                      f"ones ({md(expected_from)}). Expected against actual on this graph: {code(own)}", ""]
        else:
            lines += [f"Aidge's output {what} differ from the expected ones (no reproducer graph: see the cases "
                      "below).", ""]
        later = re.search(r"forward call ([2-9]|\d\d+),", str((observed or {}).get("output") or own))
        if later:
            lines += [f"The graph is run {md(later.group(1))} times on the same inputs: Aidge's outputs are right on "
                      f"the earlier runs and wrong on run {md(later.group(1))}.", ""]
        if observed and observed.get("exit") != 1:
            lines += [f"(When this report was written, `standalone.py` exited {md(observed.get('exit'))}, printing:)",
                      "", *_fence(str(observed.get("output") or "")), ""]
    else:
        verb = _PHASE_WORDS.get(str(defect.get("phase")), "runs")
        actual = code(own) if own else "see Aidge's words below" if defect.get("aidge_said") else \
            "no reproducer graph (see the cases below)"
        lines += [f"Expected: Aidge {verb} the graph below (a valid ONNX graph: onnx's checker accepts it and "
                  f"onnxruntime runs it). Actual: {actual}", ""]
    said = defect.get("aidge_said")
    if said:
        lines += ["Aidge says (its log):", "", *_fence(str(said)), ""]
    elif defect.get("detected_by"):
        lines += ["Aidge logs no warning or error about it.", ""]
    lines += ["## The graph", ""]
    if bundle is not None and (bundle / "model.onnx").is_file():
        try:
            graph = _graph_lines(bundle / "model.onnx")
        except Exception as exc:  # noqa: BLE001
            graph = [f"(the graph could not be read: {type(exc).__name__}: {exc})"]
        n = defect.get("reproducer_nodes")
        lines += [f"The graph ({md(n)} node(s)" if n else "The graph (", ") Aidge is given, read from model.onnx:"]
        lines[-2:] = ["".join(lines[-2:])]
        lines += ["", *_fence("\n".join(graph)), ""]
    elif facts.get("factory") or (bundle is not None and (bundle / "meta.json").is_file()):
        factory = facts.get("factory")
        if isinstance(factory, dict):
            lines += ["One Aidge node built from its aidge_core factory (Aidge's own benchmark configuration; no ONNX):",
                      "", *_fence(f"aidge_core.{factory.get('operation')}(**{json.dumps(factory.get('attributes'))})"),
                      ""]
    else:
        lines += ["(no reproducer graph)", ""]
    lines += ["## Reproduce", ""]
    if problem:
        lines += [f"No script: {md(problem)}", ""]
    if script is not None:
        needs = ", ".join(m for m, _, _ in stack)
        lines += [f"`standalone.py` needs {md(needs)} only (the install line above). It exits 1 while the defect is "
                  "present, printing expected against actual, 0 once it is fixed, 2 if it cannot run:", "",
                  *_fence("python standalone.py"), ""]
        if attach:
            lines += ["It reads these files beside it (too large to write as code; attached to this report, in the "
                      "same folders): " + ", ".join(code(a) for a in attach) + ".", ""]
        body = _fence(script, "python")
        inline = ["<details><summary>standalone.py (the graph and its values as code)</summary>",
                  "", *body, "", "</details>", ""]
        if sum(len(x) + 1 for x in lines + inline) + 6000 < INLINE_LIMIT:
            lines += inline
        else:
            lines += [f"standalone.py is {len(script):,} characters: attach it to the report.", ""]
    lines += ["## Impact", ""]
    cases = defect.get("cases") or []
    per_source = ", ".join(f"{s} {n}" for s, n in sorted((defect.get("sources") or {}).items()))
    lines.append(f"- {len(cases)} case(s) of aidge-interop's suite fail by it ({md(per_source)}).")
    blocks = defect.get("blocks") or {}
    if blocks.get("architectures"):
        lines.append(f"- Architectures it stops: {', '.join(md(a) for a in blocks['architectures'])}.")
    if blocks.get("models"):
        lines.append(f"- Zoo models it stops: {', '.join(md(m) for m in blocks['models'])}.")
    if defect.get("releases"):
        lines.append(f"- Aidge releases it holds in: {', '.join(md(r) for r in defect['releases'])}"
                     + (f"; {md(defect['since'])}" if defect.get("since") else "") + ".")
    lines += ["", "## Affected cases in aidge-interop", "",
              "_aidge-interop's own bookkeeping (its ledger entry, its check's words, its test ids): nothing here is "
              "needed to reproduce the defect._", "",
              f"- Ledger entry {md(defect['id'])}: {md(defect['kind'])}, phase {md(defect['phase'])}, backend "
              f"{md(defect['backend'])}" + (f", dtype {md(defect['dtype'])}" if defect.get("dtype") else "") + "."]
    if defect.get("detected_by"):
        lines += [f"- Aidge says nothing about it: the suite's {md(defect['detected_by'])} saw it, in these words:", "",
                  *_fence(str(defect.get("error") or "")), ""]
    elif defect.get("error"):
        lines += ["- The suite's message:", "", *_fence(str(defect["error"])), ""]
    if facts.get("reduced") and defect.get("repro_line"):
        lines += ["- The whole model's check (before the graph was reduced to the one above):", "",
                  *_fence(str(defect["repro_line"])), ""]
    lines += ["", "<details><summary>Affected cases (pytest ids)</summary>", "",
              *[f"- {code(c)}" for c in cases[:60]],
              *([f"- and {len(cases) - 60} more"] if len(cases) > 60 else []), "", "</details>", ""]
    return "\n".join(lines)


def _copy_beside(bundle: Path, folder: Path, names: list[str]) -> None:
    """The bundle's files ``names`` into ``folder`` (same relative paths), each through a temporary file."""
    for name in names:
        source = confined(bundle / name, bundle)
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        confined(target.parent, folder, kind="dir")
        tmp = target.with_name(f".{target.name}.{os.getpid()}.partial")
        tmp.unlink(missing_ok=True)
        tmp.write_bytes(source.read_bytes())
        os.replace(tmp, target)


def write_issues(run_dir: Path, ledger: list[dict[str, Any]], *, versions: dict[str, str] | None = None,
                 run: bool = True) -> int:
    """``<run>/defects/<id>/ISSUE.md`` (and ``standalone.py``, with the files it reads beside it, where a
    bundle exists) for every entry; sets each entry's ``issue`` (and ``standalone``) to the path relative
    to the run. ``run``: run each :data:`RUN_KINDS` entry's standalone.py once (:func:`run_standalone`)
    and quote what it prints. Returns the count."""
    run_dir = Path(run_dir)
    written = 0
    for entry in ledger:
        folder = confined(run_dir / ISSUES_DIR / entry["id"], run_dir, kind="dir", missing_ok=True)
        folder.mkdir(parents=True, exist_ok=True)
        confined(folder, run_dir, kind="dir")
        script, problem, attach, observed = None, None, [], None
        root = Path(entry["reproducer_root"]) if entry.get("reproducer_root") else run_dir  # merged: the source run
        bundle = root / entry["reproducer"] if entry.get("reproducer") else None
        if bundle is not None:
            try:
                confined(bundle, root, kind="dir")
                script, attach = standalone_parts(bundle, entry)
                _copy_beside(bundle, folder, attach)
            except (OSError, UnsafeInputError) as exc:
                problem = f"the reproducer bundle {entry['reproducer']} cannot be read ({exc})"
                bundle, script, attach = None, None, []
        else:
            problem = "no reproducer reproduced this defect in this run (see the affected cases' records)"
        if script is not None:
            write_atomically(folder / "standalone.py", script)
            entry["standalone"] = f"{ISSUES_DIR}/{entry['id']}/standalone.py"
            if run and entry.get("kind") in RUN_KINDS:
                observed = run_standalone(folder)
        shown = dict(entry, reproducer=None) if bundle is None else entry
        write_atomically(folder / "ISSUE.md", issue_text(shown, run_dir, versions=versions, script=script,
                                                         problem=problem, observed=observed, attach=attach))
        entry["issue"] = f"{ISSUES_DIR}/{entry['id']}/ISSUE.md"
        written += 1
    return written


def versions_of(run_dir: Path) -> dict[str, str]:
    """The versions a run's session.json names (where a package is not installed here, and Python's)."""
    try:
        session = json.loads((Path(run_dir) / "session.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    versions = session.get("versions") if isinstance(session, dict) else None
    out = {str(k): str(v) for k, v in versions.items()} if isinstance(versions, dict) else {}
    if isinstance(session, dict) and session.get("python"):
        out["python"] = str(session["python"])
    return out
