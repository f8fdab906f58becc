"""``ISSUE.md``, the text of a defect's upstream report (:mod:`.defect_issue_write`): :func:`issue_text`
(Aidge's side first: the versions of what ``standalone.py`` imports, what happens, Aidge's words, the
graph node by node, how to run it, the script inline under :data:`INLINE_LIMIT`; then the impact and
the suite's own section) and :func:`script_versions` (the modules a script imports and their versions).
"""
from __future__ import annotations

import ast
import json
import re
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ..reproducers.fields import bundle_facts
from ..reading import UnsafeInputError, confined
from . import text_escape
from .defect_issue_literals import _FLOATS, _INTS, _number

__all__ = ["issue_text", "script_versions", "INLINE_LIMIT", "DISTRIBUTIONS"]

#: the largest ISSUE.md (characters) that holds its script inline
INLINE_LIMIT = 60_000
#: the import names of what standalone.py needs beyond the standard library, and their distributions
DISTRIBUTIONS = {"aidge_core": "aidge-core", "aidge_backend_cpu": "aidge-backend-cpu", "aidge_onnx": "aidge-onnx",
                 "onnx": "onnx", "numpy": "numpy"}


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
