"""ISSUE.md and standalone.py as an upstream maintainer reads them (interop.reporting.defect_issue_write).

Before (measured on a run of ResNet_train, ConvTranspose2D no_bias and Transformer_train, 2026-12-07):
the BatchNorm report attached the reduced one-node graph but quoted the whole model's output
(``node 'fc_Gemm', FC``); the versions line named torch and onnxruntime, which the script does not
import, and not onnx or numpy, which it does; the suite's own words ("Found by aidge_torch_interop's
defect ledger", "model1 (torch) and model2 (AidgeModule)") came first; standalone.py was a base64 zip."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from interop.reporting import defect_issue_literals, defect_issue_script, defect_issue_write
from interop.reproducers.layout import _write_layout
from interop.reproducers.run import run_repro

PYTEST_ID = "tests/test_models.py::test_model[ResNet_train]"
SUITE_WORDS = "output differs between model1 (torch) and model2 (AidgeModule)"
WHOLE_LINE = ("DEFECT PRESENT: forward call 1, output 0 (node 'fc_Gemm', FC): expected [-0.512757] shape [4, 10], "
              "actual [-0.00375866] shape [4, 10]; 40 of 40 elements differ, max |diff| 0.958278")


def _conv_transpose_bundle(folder: Path, *, wrong: bool = True) -> Path:
    """A real Aidge 0.10.1 defect in a reduced/ graph: ConvTranspose without a bias is right on its first
    run and wrong on its second (CALLS = 2); expected values are onnxruntime's. ``wrong=False``: a Relu
    graph Aidge computes right. The parent's meta.json quotes the whole model's line (an FC node)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from interop.oracle.onnxruntime import ort_session

    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 3, 3)).astype(np.float32)
    if wrong:
        w = rng.standard_normal((2, 2, 2, 2)).astype(np.float32)
        node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="/up/ConvTranspose", kernel_shape=[2, 2],
                                strides=[1, 1], pads=[0, 0, 0, 0], dilations=[1, 1], group=1)
        inits, out_shape = [numpy_helper.from_array(w, "w")], [1, 2, 4, 4]
    else:
        node, inits, out_shape = helper.make_node("Relu", ["x"], ["y"], name="relu"), [], [1, 2, 3, 3]
    graph = helper.make_graph([node], "reduced", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], initializer=inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], producer_name="aidge_torch_interop")
    proto.ir_version = 8
    onnx.checker.check_model(proto)
    (y,) = ort_session(proto.SerializeToString()).run(None, {"x": x})
    reduced = folder / "reduced"
    settings = {"CASE": PYTEST_ID + " (reduced)", "WHAT": "forward: EquivalenceError: " + SUITE_WORDS,
                "PHASE": "forward", "CALLS": 2, "RTOL": 1e-5, "ATOL": 1e-6, "FAITHFUL": True, "DATA_INPUTS": ["x"],
                "N_OUTPUTS": 1, "PARAMS": [], "GRAD_OUTPUTS": []}
    _write_layout(reduced, proto, ["x"], [x], [np.asarray(y)], settings)
    run = run_repro(reduced)
    meta = {"repro": {"exit": 1, "line": WHOLE_LINE}, "reduced": {"kept": True, "nodes": 1, "repro": run},
            "versions": {"aidge_core": metadata.version("aidge-core"), "torch": "2.13.0+cpu"}, "calls": 2,
            "export_check": {"onnxruntime_matches_torch": True}}
    (folder / "meta.json").write_text(json.dumps(meta))
    return reduced


def _entry(**over):
    e = {"id": "D-c80900db", "title": "ConvTranspose2D computes wrong values in forward", "kind": "wrong values",
         "component": "aidge_backend_cpu", "operator": "ConvTranspose2D", "phase": "forward", "backend": "cpu",
         "dtype": None, "message": "", "cases": [PYTEST_ID], "sources": {"model zoo": 1}, "aidge_said": None,
         "error": "forward: EquivalenceError: " + SUITE_WORDS, "detected_by": "comparator",
         "reproducer": "reproducers/a/reduced", "reproducer_nodes": 1, "repro_line": WHOLE_LINE,
         "reproducer_root": None, "known": 1, "new": 0, "rows": [], "blocks": {"architectures": [], "models": ["ResNet"]},
         "releases": ["0.10.1"]}
    e.update(over)
    return e


def _run_hidden(script: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """standalone.py as an Aidge developer runs it: isolated mode (no PYTHONPATH, no cwd on sys.path: the
    interop package cannot be found), torch unimportable, executed from its text."""
    code = ("import sys\nsys.modules['torch'] = None\nsys.modules['interop'] = None\n"
            f"p = {str(script)!r}\nexec(compile(open(p).read(), p, 'exec'), {{'__name__': '__main__', '__file__': p}})")
    return subprocess.run([sys.executable, "-I", "-c", code], cwd=script.parent, capture_output=True, text=True,
                          timeout=timeout, env={"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"})


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    run = tmp_path_factory.mktemp("run")
    _conv_transpose_bundle(run / "reproducers" / "a")
    entry = _entry()
    assert defect_issue_write.write_issues(run, [entry]) == 1
    return run, entry


def _top_and_suite(issue: str) -> tuple[str, str]:
    at = issue.index("## Affected cases in aidge-interop")
    return issue[:at], issue[at:]


def test_the_issue_quotes_the_attached_graph_s_own_expected_and_actual(written):
    run, entry = written
    issue = (run / entry["issue"]).read_text()
    top, suite = _top_and_suite(issue)
    assert "fc_Gemm" not in top and "FC)" not in top  # before: the whole model's output node, not the attached graph's
    assert "ConvTranspose" in top and "expected: float32[1, 2, 4, 4]" in top and "actual:   float32[1, 2, 4, 4]" in top
    assert "max |diff|" in top and "onnxruntime's output for this graph" in top
    assert "wrong on run 2" in top  # the defect shows on the second run of the same inputs
    expected = np.asarray(__import__("onnx").numpy_helper.to_array(__import__("onnx").load_tensor(
        str(run / "reproducers/a/reduced/test_data_set_0/output_0.pb"))))
    assert f"{float(expected.reshape(-1)[0]):.7g}" in top  # the reduced graph's own expected values
    assert "fc_Gemm" in suite  # the whole model's check stays, as the suite's


def test_the_versions_are_exactly_what_standalone_py_imports(written):
    run, entry = written
    issue = (run / entry["issue"]).read_text()
    head = "\n".join(issue.splitlines()[:6])
    want = [("aidge_core", "aidge-core"), ("aidge_backend_cpu", "aidge-backend-cpu"), ("aidge_onnx", "aidge-onnx"),
            ("onnx", "onnx"), ("numpy", "numpy")]
    versions = {d: metadata.version(d) for _, d in want}
    assert "pip install " + " ".join(f"{d}=={versions[d]}" for _, d in want) in head
    assert all(f"{m} {versions[d]}" in head for m, d in want)
    assert "torch" not in head and "onnxruntime" not in head, head
    script = (run / entry["standalone"]).read_text()
    imported = {n.split(".")[0] for node in ast.walk(ast.parse(script))
                for n in ([a.name for a in node.names] if isinstance(node, ast.Import) else
                          [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])}
    assert {m for m in imported if m not in sys.stdlib_module_names} == {m for m, _ in want}


def test_the_suite_s_words_and_ids_come_last_in_a_section_of_their_own(written):
    run, entry = written
    issue = (run / entry["issue"]).read_text()
    top, suite = _top_and_suite(issue)
    prose = top[:top.index("<details>")]  # the script inline after it holds DEFECT_ID and the graph's producer_name
    for words in (PYTEST_ID, "model1 (torch)", "AidgeModule", "aidge_torch_interop", entry["id"]):
        assert words not in prose, words
    assert PYTEST_ID not in top and "AidgeModule" not in top
    assert PYTEST_ID in suite and SUITE_WORDS in suite and entry["id"] in suite
    assert "nothing here is needed to reproduce" in suite
    assert issue.splitlines()[0] == "# [aidge_backend_cpu] ConvTranspose2D computes wrong values in forward"
    assert top.index("## What happens") < top.index("## The graph") < top.index("## Reproduce")


def test_standalone_py_is_readable_code_that_runs_without_the_suite_and_torch(written, tmp_path):
    run, entry = written
    script = run / entry["standalone"]
    text = script.read_text()
    compile(text, "standalone.py", "exec")
    for blob in ("base64", "b64decode", "zlib", "zipfile", "BUNDLE"):
        assert blob not in text, blob
    assert "helper.make_node(" in text and "helper.make_graph(" in text and "helper.make_model(" in text
    assert "dtype=np.float32).reshape(1, 2, 3, 3)" in text and "'ConvTranspose'" in text
    assert PYTEST_ID not in text and "AidgeModule" not in text  # the suite's words are not the reproducer's
    alone = tmp_path / "elsewhere" / "standalone.py"
    alone.parent.mkdir()
    alone.write_text(text)  # one file: everything fits as code
    done = _run_hidden(alone)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "  expected: float32[1, 2, 4, 4]" in done.stdout and "  actual:   float32[1, 2, 4, 4]" in done.stdout
    assert "DEFECT PRESENT: forward call 2" in done.stdout and PYTEST_ID not in done.stdout
    assert sorted(p.name for p in alone.parent.iterdir()) == ["standalone.py"]
    assert _run_hidden_args(alone, "--bogus").returncode == 2


def _run_hidden_args(script: Path, *args: str) -> subprocess.CompletedProcess:
    code = ("import runpy, sys\nsys.modules['torch'] = None\nsys.modules['interop'] = None\n"
            f"sys.argv = [{str(script)!r}] + sys.argv[1:]\nrunpy.run_path({str(script)!r}, run_name='__main__')")
    return subprocess.run([sys.executable, "-I", "-c", code, *args], cwd=script.parent, capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"})


def test_a_fixed_defect_exits_0(tmp_path):
    reduced = _conv_transpose_bundle(tmp_path / "b", wrong=False)
    (tmp_path / "standalone.py").write_text(defect_issue_script.standalone_script(reduced, _entry()))
    done = _run_hidden(tmp_path / "standalone.py")
    assert done.returncode == 0 and "FIXED" in done.stdout, done.stdout + done.stderr


def test_large_values_are_read_from_files_beside_it_and_the_issue_names_them(tmp_path, monkeypatch):
    # where standalone_parts and _graph_code look it up
    monkeypatch.setattr(defect_issue_script, "LITERAL_MAX_ELEMENTS", 16)  # x: 18 elements, y: 32, w: 16
    run = tmp_path / "run"
    _conv_transpose_bundle(run / "reproducers" / "a")
    entry = _entry()
    defect_issue_write.write_issues(run, [entry], run=False)
    folder = run / "defects" / entry["id"]
    text = (folder / "standalone.py").read_text()
    assert "helper.make_node(" in text and "'input_0.pb': None" in text and "'output_0.pb': None" in text
    issue = (run / entry["issue"]).read_text()
    assert "`test_data_set_0/input_0.pb`" in issue and "`test_data_set_0/output_0.pb`" in issue
    assert sorted(p.name for p in (folder / "test_data_set_0").iterdir()) == ["input_0.pb", "output_0.pb"]
    top, _ = _top_and_suite(issue)
    assert "fc_Gemm" not in top and "Expected against actual on this graph" in top  # not run: its own stored check
    done = _run_hidden(folder / "standalone.py")
    assert done.returncode == 1 and "DEFECT PRESENT: forward call 2" in done.stdout, done.stdout + done.stderr
    (folder / "test_data_set_0" / "output_0.pb").unlink()
    missing = _run_hidden(folder / "standalone.py")
    assert missing.returncode == 2 and "cannot run the reproducer" in missing.stdout, missing.stdout + missing.stderr


@pytest.mark.parametrize("array", [
    np.array([0.1, -0.0, np.nan, np.inf, -np.inf, 1e-45, 3.4028235e38], np.float32),
    np.array([0.1, 1 / 3, -0.0], np.float64), np.array([1.5, -2.0], np.float16),
    np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0], np.int64), np.array([True, False]),
    np.array(3.5, np.float32), np.zeros((0, 3), np.float32), np.arange(24, dtype=np.uint8).reshape(2, 3, 4),
])
def test_array_literals_read_back_bit_for_bit(array):
    text = defect_issue_literals.array_literal(array)
    back = eval(text, {"__builtins__": {}, "np": np})  # noqa: S307
    assert back.dtype == array.dtype and back.shape == array.shape
    assert np.array_equal(back, array, equal_nan=array.dtype.kind == "f")
    assert np.array_equal(np.signbit(back), np.signbit(array)) if array.dtype.kind == "f" else True


def test_the_graph_code_rebuilds_attributes_of_every_kind_and_refuses_a_subgraph(tmp_path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array([1.0, 2.0], np.float32))),
             helper.make_node("Add", ["x", "c"], ["a"]),
             helper.make_node("LeakyRelu", ["a"], ["b"], alpha=0.01),
             helper.make_node("Pad", ["b", "pads"], ["p"], mode="reflect"),
             helper.make_node("Cast", ["p"], ["y"], to=TensorProto.DOUBLE, name="cast")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 2])],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)],
                              initializer=[numpy_helper.from_array(np.array([0, 1, 0, 1], np.int64), "pads")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.save(model, str(tmp_path / "m.onnx"))
    lines = defect_issue_script._graph_code(tmp_path / "m.onnx")
    assert lines is not None and "alpha=0.01" in "\n".join(lines) and "mode='reflect'" in "\n".join(lines)
    then = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    cond = helper.make_node("If", ["flag"], ["t"], then_branch=then, else_branch=then)
    sub = helper.make_graph([cond], "g", [helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
                                          helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                            [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(sub, opset_imports=[helper.make_opsetid("", 18)]), str(tmp_path / "if.onnx"))
    assert defect_issue_script._graph_code(tmp_path / "if.onnx") is None  # a subgraph: model.onnx is attached instead
