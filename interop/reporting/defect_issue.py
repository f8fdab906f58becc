"""An upstream report per defect, ready to paste: ``defects/<id>/ISSUE.md`` and ``standalone.py``.

For each entry of the ledger (:mod:`interop.reporting.ledger`) that has a reproducer, the run
directory gets ``defects/<id>/``:

- ``standalone.py``: one file that needs numpy, onnx and Aidge only. It holds the smallest
  reproducer bundle (``model.onnx``, ``test_data_set_0/``, ``repro.py``:
  :mod:`interop.diagnostics.reproducer`) as a base64 zip, unpacks it into a temporary folder and
  runs its ``repro.py``: exit 1 while the defect is there, 0 once Aidge computes the expected
  values;
- ``ISSUE.md``: a title a maintainer would write, the versions, expected against actual in one
  line, Aidge's own words, the graph (each node: op, inputs with shapes and dtypes, attributes),
  how to run it, the script inline when the issue stays under :data:`INLINE_LIMIT` characters
  (GitHub's limit on an issue's body is 65,536) and, else, which files to attach; and the
  defect's impact: cases per source, architectures and zoo models blocked, the releases it holds in.

Nothing is written outside ``<run>/defects/`` (each file atomically); a bundle that cannot be read
leaves a report without the graph or the script, saying why.
"""
from __future__ import annotations

import base64
import io
import json
import zipfile
from pathlib import Path
from typing import Any

from ..reading import UnsafeInputError, confined
from ..records.store import write_atomically
from . import text_escape

__all__ = ["write_issues", "issue_text", "standalone_script", "INLINE_LIMIT", "ISSUES_DIR"]

#: the largest ISSUE.md (characters) that holds its script inline
INLINE_LIMIT = 60_000
#: the folder of a run that holds one folder per defect
ISSUES_DIR = "defects"
_BUNDLE_FILES = ("model.onnx", "repro.py")


def _bundle_zip(bundle: Path) -> bytes:
    """The bundle's model, data and script as a zip (sorted names, fixed times: the same bytes each run)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        names = [n for n in _BUNDLE_FILES if (bundle / n).is_file()]
        data = bundle / "test_data_set_0"
        names += sorted(f"test_data_set_0/{p.name}" for p in data.glob("*.pb")) if data.is_dir() else []
        if "repro.py" not in names:
            raise OSError(f"{bundle}: no repro.py")
        for name in names:
            confined(bundle / name, bundle)  # a file of the bundle, not a link out of it
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, (bundle / name).read_bytes())
    return buf.getvalue()


def standalone_script(bundle: Path, defect: dict[str, Any]) -> str:
    """One Python file holding ``bundle`` (a reproducer folder), which runs its ``repro.py``."""
    from ..diagnostics.reproducer import script_literal

    blob = base64.b64encode(_bundle_zip(bundle)).decode("ascii")
    lines = [blob[i:i + 100] for i in range(0, len(blob), 100)]
    return "\n".join([
        "#!/usr/bin/env python3",
        '"""One defect of aidge_torch_interop\'s defect ledger: DEFECT_ID and TITLE below.',
        "",
        "Needs numpy, onnx, aidge_core, aidge_backend_cpu and aidge_onnx only. The graph, its inputs and",
        "the expected outputs are below (a base64 zip of the reproducer bundle: model.onnx,",
        "test_data_set_0/, repro.py); the script unpacks them into a temporary folder and runs repro.py.",
        "Exit status: 1 while the defect is present, 0 once Aidge computes the expected values, 2 if the",
        "bundle cannot be read.",
        '"""',
        "import base64, io, os, runpy, sys, tempfile, zipfile",
        "",
        f"DEFECT_ID = {script_literal(str(defect['id']))}",
        f"TITLE = {script_literal(str(defect['title']))}",
        "",
        "BUNDLE = (",
        *[f'    "{line}"' for line in lines],
        ")",
        "",
        "with tempfile.TemporaryDirectory(prefix=\"aidge-repro-\") as folder:",
        "    zipfile.ZipFile(io.BytesIO(base64.b64decode(BUNDLE))).extractall(folder)",
        "    script = os.path.join(folder, \"repro.py\")",
        "    sys.argv[0] = script",
        "    try:",
        "        runpy.run_path(script, run_name=\"__main__\")",
        "    except SystemExit as done:",
        "        code = done.code",
        "    else:",
        "        code = 0",
        "sys.exit(code)",
        ""])


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
        value = f" = {arr.reshape(-1)[:8].tolist()}{'...' if arr.size > 8 else ''}" if arr.size <= 64 else ""
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


def _short(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if hasattr(value, "dims"):  # a TensorProto attribute
        from onnx import numpy_helper

        arr = numpy_helper.to_array(value)
        return f"tensor {arr.dtype}{list(arr.shape)}" + (f" {arr.reshape(-1)[:8].tolist()}" if arr.size <= 8 else "")
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_fence = text_escape.fence  # ``text`` in a code fence longer than its longest backtick run, controls escaped


def issue_text(defect: dict[str, Any], run_dir: Path, *, versions: dict[str, str] | None = None,
               script: str | None = None, problem: str | None = None) -> str:
    """The Markdown of an upstream report for one ledger entry. Every record-borne field goes through
    :mod:`.text_escape`: prose escaped, messages in code spans or fences, control characters as escapes."""
    md, code = text_escape.text, text_escape.code
    versions = versions or {}
    aidge = ", ".join(f"{k} {v}" for k, v in sorted(versions.items()) if k.startswith("aidge"))
    others = ", ".join(f"{k} {v}" for k, v in sorted(versions.items()) if not k.startswith("aidge"))
    component = defect.get("component") or "aidge"
    lines = [f"# [{md(component)}] {md(defect['title'])}", "",
             f"Found by aidge_torch_interop's defect ledger ({md(defect['id'])}: {md(defect['kind'])}, phase "
             f"{md(defect['phase'])}, backend {md(defect['backend'])}"
             + (f", dtype {md(defect['dtype'])}" if defect.get("dtype") else "") + ").", "",
             f"**Versions**: {md(aidge or 'see meta.json')}" + (f"; {md(others)}" if others else "") + ".", "",
             "## What happens", ""]
    line = (defect.get("repro_line") or defect.get("error") or "").removeprefix("DEFECT PRESENT: ")
    if defect["kind"] in ("wrong values", "wrong shape"):
        lines += [f"Expected against actual: {code(line)}", ""]
    else:
        lines += [f"Expected: Aidge runs the graph's {md(defect['phase'])} (onnxruntime runs the same graph and "
                  f"matches torch). Actual: {code(line)}", ""]
    said = defect.get("aidge_said") or (None if defect.get("detected_by") else defect.get("error"))
    if said:
        lines += ["Aidge says:", "", *_fence(str(said)), ""]
    elif defect.get("detected_by"):
        lines += [f"Aidge says nothing about it: the suite's {md(defect['detected_by'])} saw it, in these words:", "",
                  *_fence(str(defect.get("error") or "")), ""]
    root = Path(defect["reproducer_root"]) if defect.get("reproducer_root") else run_dir
    bundle = root / defect["reproducer"] if defect.get("reproducer") else None
    lines += ["## Reproduce", ""]
    if bundle is not None and (bundle / "model.onnx").is_file():
        try:
            graph = _graph_lines(bundle / "model.onnx")
        except Exception as exc:  # noqa: BLE001
            graph = [f"(the graph could not be read: {type(exc).__name__}: {exc})"]
        n = defect.get("reproducer_nodes")
        lines += [f"The graph ({md(n)} node(s)" if n else "The graph (", ") Aidge is given, read from model.onnx:"]
        lines[-2:] = ["".join(lines[-2:])]
        lines += ["", *_fence("\n".join(graph)), ""]
    elif bundle is not None and (bundle / "meta.json").is_file():
        try:
            factory = json.loads(confined(bundle / "meta.json", root).read_text(encoding="utf-8")).get("factory")
        except (OSError, ValueError, UnsafeInputError):
            factory = None
        if isinstance(factory, dict):
            lines += ["One Aidge node built from its aidge_core factory (Aidge's own benchmark configuration; no ONNX):",
                      "", *_fence(f"aidge_core.{factory.get('operation')}(**{json.dumps(factory.get('attributes'))})"),
                      ""]
    if problem:
        lines += [f"No script: {md(problem)}", ""]
    if script is not None:
        lines += ["`standalone.py` needs numpy, onnx, aidge_core, aidge_backend_cpu and aidge_onnx only; it exits 1 "
                  "while the defect is present and 0 once it is fixed:", "", *_fence("python standalone.py"), ""]
        body = _fence(script, "python")
        inline = ["<details><summary>standalone.py (the graph, its inputs and the expected outputs inline)</summary>",
                  "", *body, "", "</details>", ""]
        if sum(len(x) + 1 for x in lines + inline) + 4000 < INLINE_LIMIT:
            lines += inline
        else:
            lines += [f"standalone.py is {len(script):,} characters: attach it (or the bundle folder: model.onnx, "
                      "test_data_set_0/, repro.py) to the report.", ""]
    lines += ["## Impact", ""]
    cases = defect.get("cases") or []
    per_source = ", ".join(f"{s} {n}" for s, n in sorted((defect.get("sources") or {}).items()))
    lines.append(f"- {len(cases)} case(s) of the suite fail by it ({md(per_source)}).")
    blocks = defect.get("blocks") or {}
    if blocks.get("architectures"):
        lines.append(f"- Architectures it stops: {', '.join(md(a) for a in blocks['architectures'])}.")
    if blocks.get("models"):
        lines.append(f"- Zoo models it stops: {', '.join(md(m) for m in blocks['models'])}.")
    if defect.get("releases"):
        lines.append(f"- Aidge releases it holds in (the suite's table): {', '.join(md(r) for r in defect['releases'])}"
                     + (f"; {md(defect['since'])}" if defect.get("since") else "") + ".")
    lines += ["", "<details><summary>Affected cases</summary>", "",
              *[f"- {code(c)}" for c in cases[:60]],
              *([f"- and {len(cases) - 60} more"] if len(cases) > 60 else []), "", "</details>", ""]
    return "\n".join(lines)


def write_issues(run_dir: Path, ledger: list[dict[str, Any]], *, versions: dict[str, str] | None = None) -> int:
    """``<run>/defects/<id>/ISSUE.md`` (and ``standalone.py`` where a bundle exists) for every entry;
    sets each entry's ``issue`` (and ``standalone``) to the path relative to the run. Returns the count."""
    run_dir = Path(run_dir)
    written = 0
    for entry in ledger:
        folder = confined(run_dir / ISSUES_DIR / entry["id"], run_dir, kind="dir", missing_ok=True)
        folder.mkdir(parents=True, exist_ok=True)
        confined(folder, run_dir, kind="dir")
        script, problem = None, None
        root = Path(entry["reproducer_root"]) if entry.get("reproducer_root") else run_dir  # merged: the source run
        bundle = root / entry["reproducer"] if entry.get("reproducer") else None
        if bundle is not None:
            try:
                confined(bundle, root, kind="dir")
                script = standalone_script(bundle, entry)
            except (OSError, UnsafeInputError) as exc:
                problem = f"the reproducer bundle {entry['reproducer']} cannot be read ({exc})"
                bundle = None
        else:
            problem = "no reproducer reproduced this defect in this run (see the affected cases' records)"
        if script is not None:
            write_atomically(folder / "standalone.py", script)
            entry["standalone"] = f"{ISSUES_DIR}/{entry['id']}/standalone.py"
        shown = dict(entry, reproducer=None) if bundle is None else entry
        write_atomically(folder / "ISSUE.md", issue_text(shown, run_dir, versions=versions, script=script,
                                                         problem=problem))
        entry["issue"] = f"{ISSUES_DIR}/{entry['id']}/ISSUE.md"
        written += 1
    return written


def versions_of(run_dir: Path) -> dict[str, str]:
    """The versions a run's session.json names (for the report's header)."""
    try:
        session = json.loads((Path(run_dir) / "session.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    versions = session.get("versions") if isinstance(session, dict) else None
    out = {str(k): str(v) for k, v in versions.items()} if isinstance(versions, dict) else {}
    if isinstance(session, dict) and session.get("python"):
        out["python"] = str(session["python"])
    return out
