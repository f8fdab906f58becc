"""``standalone.py``, the script of a defect's upstream report (:mod:`.defect_issue_write`):
:func:`standalone_parts` writes it from a reproducer bundle, the graph as ``onnx.helper`` code
(:func:`_graph_code`, checked to rebuild the same graph), the values as numpy literals
(:mod:`.defect_issue_literals`) when small (:data:`LITERAL_MAX_ELEMENTS`, :data:`LITERAL_MAX_CHARS`)
and else read from the bundle's files beside it, then the harness of the bundle's own ``repro.py``
and an entry point of its own (exit 1 while the defect is present, 0 once fixed, 2 when it cannot run).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..reproducers.fields import bundle_facts
from ..reproducers.script import script_literal, script_settings
from ..reading import confined
from .defect_issue_literals import _attribute_literal, _value_info_literal, array_literal

__all__ = ["standalone_parts", "standalone_script", "LITERAL_MAX_ELEMENTS", "LITERAL_MAX_CHARS"]

# --------------------------------------------------------------------------------------------------
# standalone.py: the graph as onnx.helper code, the values as numpy literals, the bundle's harness

#: a tensor of at most this many elements is written into standalone.py as a numpy literal
LITERAL_MAX_ELEMENTS = 4096
#: the literals (graph and values) of one standalone.py, at most (characters); the largest go to files beyond
LITERAL_MAX_CHARS = 200_000
#: where the harness of a bundle's repro.py starts (interop.reproducers.script writes this line above body.py)
_BODY_MARK = "# ---- numpy, onnx and Aidge only from here"
#: the harness's one file test that a literal value must answer too (grad_input_K.pb present?)
_EXISTS = "if os.path.exists(path) and name in by_name:"


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
    """A generated repro.py's module-level settings, read as data (:func:`~interop.reproducers.script.script_settings`)."""
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
