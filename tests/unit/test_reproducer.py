"""Reproducer bundles (interop.bridge.capture, interop.reproducers): what a failing case
leaves for an Aidge developer, run as they would run it (a fresh interpreter where torch and this
suite cannot be imported), on real Aidge defects of the installed release."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from interop import wrap
from interop.bridge import capture
from interop.equivalence.isolation import run_isolated
from interop.reproducers.aidge import _aidge_values
from interop.reproducers.bundle import (PENDING, complete_pending, export_check, export_valid, import_kind,
                                        write_bundle, write_pending)
from interop.reproducers.fields import bundle_facts, record_fields
from interop.reproducers.layout import MAX_MB_ENV, _write_layout, bundle_folder, max_bundle_bytes
from interop.reproducers.reduce import reduce_crash
from interop.reproducers.run import FreshServer, run_repro
from interop.reproducers.script import BODY_PATH, ONNX_TEST_EXPECTED, repro_script

from bundle_case import captured_case, fresh_repro

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

ROOT = Path(__file__).resolve().parents[2]


def _run_case(tmp_path: Path, name: str, fn) -> dict:
    """``fn`` as a suite runs a case (a forked child) with a capture on; the bundle's meta.json."""
    return captured_case(tmp_path, name, fn)[0]


_fresh = fresh_repro


def _padded_maxpool1d():
    wrap(torch.nn.MaxPool1d(3, padding=1), [(1, 2, 8)])


def _batchnorm_in_train_mode():
    from interop import ModelTester

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3), torch.nn.ReLU()).train()
    am = wrap(model, [(2, 2, 6, 6)])
    ModelTester(model, am, epochs=1, test_backward=False, max_slowdown_ratio=None).test_multiple_step([(2, 2, 6, 6)])


def test_import_gap_bundle_holds_the_graph_the_data_aidge_s_log_and_a_script_that_fails(tmp_path):
    meta = _run_case(tmp_path, "maxpool1d", _padded_maxpool1d)
    folder = tmp_path / "maxpool1d"
    for name in ("model.onnx", "repro.py", "aidge.log", "test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb"):
        assert (folder / name).is_file(), name
    # Aidge's own words, which the console never showed (quiet_aidge): the converter declined
    assert "PaddedMaxPooling1D is not supported in Aidge" in (folder / "aidge.log").read_text()
    assert "\x1b[" not in (folder / "aidge.log").read_text()  # colour codes removed
    # aidge_onnx has a MaxPool converter, which declined this node: a converter failure, in its words
    assert meta["import_kind"] == "converter failure"
    assert any("PaddedMaxPooling1D is not supported" in line for line in meta["aidge_said"])
    assert meta["export_check"]["valid"] is True and meta["export_check"]["onnxruntime_matches_torch"] is True
    assert meta["reproduces"] is True
    done = _fresh(folder)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DEFECT PRESENT: import" in done.stdout and "GenericOperator" in done.stdout
    # the expected values are torch's
    import onnx
    from onnx import numpy_helper

    x = numpy_helper.to_array(onnx.load_tensor(str(folder / "test_data_set_0/input_0.pb")))
    want = torch.nn.MaxPool1d(3, padding=1)(torch.from_numpy(x.copy())).numpy()
    got = numpy_helper.to_array(onnx.load_tensor(str(folder / "test_data_set_0/output_0.pb")))
    assert np.array_equal(got, want)


def test_mismatch_names_the_first_diverging_node_and_the_reduced_graph_compares_for_real(tmp_path):
    meta = _run_case(tmp_path, "bn", _batchnorm_in_train_mode)
    assert meta["reproduces"] is True
    reduced = meta["reduced"]
    assert reduced["kept"] is True and reduced["nodes"] == 1
    assert reduced["first_diverging"]["op_type"] == "BatchNormalization"  # not the Conv before it
    assert reduced["first_diverging"]["aidge_type"] == "BatchNorm2D"
    folder = tmp_path / "bn" / "reduced"
    done = _fresh(folder)
    assert done.returncode == 1 and "DEFECT PRESENT: forward" in done.stdout, done.stdout + done.stderr
    # The comparison really compares: with Aidge's own outputs as the expected values, it passes.
    import onnx
    from onnx import numpy_helper

    x = numpy_helper.to_array(onnx.load_tensor(str(folder / "test_data_set_0/input_0.pb")))
    values = run_isolated(_aidge_values, folder, [x], False)
    (node_type, outputs), = [v for v in values.values()]
    assert node_type == "BatchNorm2D"
    expected = onnx.load_tensor(str(folder / "test_data_set_0/output_0.pb"))
    (folder / "test_data_set_0/output_0.pb").write_bytes(
        numpy_helper.from_array(outputs[0], expected.name).SerializeToString())
    done = _fresh(folder)
    assert done.returncode == 0 and "FIXED" in done.stdout, done.stdout + done.stderr


def test_an_export_onnx_forbids_is_not_blamed_on_aidge(tmp_path):
    """int64 MaxPool: ONNX opset 18 defines none; onnxruntime refuses the file."""
    from onnx import TensorProto, helper

    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.INT64, [1, 1, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, [1, 1, 3, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    check = export_check(path, {"x": np.zeros((1, 1, 4, 4), np.int64)}, None, 1.3e-6, 1e-5)
    assert check["valid"] is False
    assert "int64" in (check["checker"] + check["onnxruntime"]).lower()
    # the record: attribution moves, with the refusal quoted
    folder = bundle_folder(tmp_path, "tests/t.py::test_x[int64]")
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"reproduces": True, "export_check": check, "reduced": {}}))
    fields = record_fields(tmp_path, "tests/t.py::test_x[int64]", {"attribution": "aidge"})
    assert fields["attribution"] == "export"
    assert "exported graph is invalid" in fields["attribution_reason"]
    assert fields["reproducer"]["path"] == "reproducers/test_x_int64"
    # a crash on the same graph stays Aidge's (memory-unsafe), as the plain run and the triage say
    died = record_fields(tmp_path, "tests/t.py::test_x[int64]", {"attribution": "aidge", "category": "crash"})
    assert "attribution" not in died or died["attribution"] == "aidge"


def test_record_fields_say_why_there_is_no_bundle(tmp_path):
    crash = record_fields(tmp_path, "t.py::test_a", {"category": "crash"})
    assert crash["reproducer"]["written"] is False and "died" in crash["reproducer"]["why"]
    (bundle_folder(tmp_path, "t.py::test_b")).mkdir(parents=True)
    (bundle_folder(tmp_path, "t.py::test_b") / "meta.json").write_text("[1, 2")
    bad = record_fields(tmp_path, "t.py::test_b", {})
    assert bad["reproducer"]["written"] is False and "meta.json" in bad["reproducer"]["why"]


def test_bundle_folders_are_distinct_and_safe():
    a = bundle_folder(Path("/r"), "tests/x.py::test_a[" + "x" * 300 + "1]")
    b = bundle_folder(Path("/r"), "tests/x.py::test_a[" + "x" * 300 + "2]")
    assert a != b and a.parent == Path("/r/reproducers") and len(a.name) < 130
    assert bundle_folder(Path("/r"), "t.py::test[../../etc]").parent == Path("/r/reproducers")


def test_the_script_imports_numpy_onnx_and_aidge_only():
    tree = ast.parse(BODY_PATH.read_text())
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            modules.add((node.module or "").split(".")[0])
    # the standard library's re and tempfile: Aidge's words of a compile refusal through a temporary log file;
    # stat: each bundle file checked to be a regular file; argparse: the command line (exit 2 when wrong)
    assert modules <= {"os", "sys", "re", "tempfile", "stat", "argparse", "numpy", "onnx", "aidge_core",
                       "aidge_backend_cpu", "aidge_onnx"}, modules


def test_size_bound_keeps_only_the_reduced_graph(tmp_path, monkeypatch):
    monkeypatch.setenv(MAX_MB_ENV, "0.000001")
    meta = _run_case(tmp_path, "bn", _batchnorm_in_train_mode)
    folder = tmp_path / "bn"
    assert "over the bound" in meta["full_removed"] and "reduced graph is kept" in meta["full_removed"]
    assert not (folder / "model.onnx").exists() and (folder / "reduced" / "model.onnx").is_file()
    monkeypatch.setenv(MAX_MB_ENV, "lots")
    with pytest.raises(ValueError, match=MAX_MB_ENV):
        max_bundle_bytes()


def test_fork_server_and_a_new_interpreter_agree(tmp_path):
    _run_case(tmp_path, "maxpool1d", _padded_maxpool1d)
    folder = tmp_path / "maxpool1d"
    server = FreshServer()
    try:
        by_server = server.run(folder, 60)
    finally:
        server.close()
    by_process = run_repro(folder)  # no server started in this process: a new interpreter
    assert by_server == by_process and by_server["exit"] == 1


def test_capture_off_costs_nothing_and_writes_nothing(tmp_path):
    with capture.suspended():  # under nox -s report this very test is captured: off for the block
        assert capture.current() is None
        am = wrap(torch.nn.Linear(3, 2), [(1, 3)])
        am(torch.randn(1, 3))
        assert capture.failed(RuntimeError("x")) is None
    assert not any(tmp_path.iterdir())


def test_repro_check_runs_a_bundle_then_checks_it_against_aidge_s_own_outputs(tmp_path):
    """The checker behind ``nox -s repro-check`` (there in a venv of numpy, onnx and Aidge only; here
    with this interpreter): a mismatch bundle exits 1, and 0 once Aidge's outputs are the expected
    values; the run's own files are left as they were."""
    from interop.reproducers import check as repro_check

    run = tmp_path / "run"
    capture.start(bundle_folder(run, "t.py::test_bn"), "t.py::test_bn", write_bundle,
                  tmp_path / "bn.log")
    try:
        with pytest.raises(Exception):
            run_isolated(_batchnorm_in_train_mode, timeout=120)
    finally:
        capture.stop()
    (bundle,) = repro_check.bundles_of(run)
    assert bundle["folder"].name == "reduced"
    before = (bundle["folder"] / "test_data_set_0" / "output_0.pb").read_bytes()
    result = repro_check.check_bundle(Path(sys.executable), bundle)
    assert result["exit"] == 1 and result["kind"] == "forward"
    assert result["self_exit"] == 0 and "FIXED" in result["self_line"]
    assert (bundle["folder"] / "test_data_set_0" / "output_0.pb").read_bytes() == before


def test_onnxruntime_lacking_a_kernel_does_not_make_an_export_invalid():
    """Erf in float64: onnxruntime has no kernel (NOT_IMPLEMENTED), ONNX allows it: Aidge stays blamed;
    a file onnx's own checker refuses is the exporter's."""
    lacks = {"checker": "ok", "onnxruntime": "NotImplemented: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not "
                                             "find an implementation for Erf(13) node with name '/Erf'"}
    assert export_valid(lacks) is True
    assert export_valid({"checker": "InferenceError: [ShapeInferenceError] (op_type:MaxPool): X typestr: "
                                               "T, has unsupported type: tensor(int64)", "onnxruntime": "ok"}) is False
    assert export_valid({"checker": "ok", "onnxruntime": "InvalidGraph: [ONNXRuntimeError] : 10 : "
                                                                    "INVALID_GRAPH : type int64 is not allowed"}) is False


def test_an_op_without_a_converter_is_no_converter_even_after_the_importer_met_it(tmp_path):
    """aidge_onnx's converter table is a defaultdict: importing PRelu adds the key 'prelu' mapped to the
    generic importer. PRelu has no converter; MaxPool has one (that declined)."""
    from interop.errors import UnsupportedOperatorError

    meta = _run_case(tmp_path, "prelu", lambda: wrap(torch.nn.PReLU(), [(2, 3)]))
    assert meta["import_kind"] == "no converter"
    exc = UnsupportedOperatorError("import", "'MaxPool' (ONNX op MaxPool) imported as GenericOperator",
                                   operator="MaxPool")
    assert import_kind(exc) == "converter failure"
    # the record carries it inside its reproducer field, where the ledger reads it
    folder = bundle_folder(tmp_path / "run", "t.py::test_prelu")
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps(meta))
    fields = record_fields(tmp_path / "run", "t.py::test_prelu", {"attribution": "aidge"})
    assert fields["reproducer"]["import_kind"] == "no converter" and fields["reproducer"]["reproduces"] is True


def _dies_after_its_first_call():
    am = wrap(torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()), [(2, 4)])
    am(torch.randn(2, 4))
    os.abort()  # as a crash inside Aidge would end the case's process


def test_a_case_whose_process_dies_gets_its_bundle_from_the_parent(tmp_path):
    """The child writes what the parent needs before Aidge runs (.pending); when it dies, the record's
    parent finishes the bundle with onnxruntime's values. Here nothing in Aidge crashes (the child
    aborts itself), so the bundle honestly does not reproduce."""
    from interop.errors import AidgeCrash

    run = tmp_path / "run"
    nodeid = "t.py::test_dies"
    capture.start(bundle_folder(run, nodeid), nodeid, write_bundle, tmp_path / "log",
                  pending=write_pending)
    try:
        with pytest.raises(AidgeCrash):
            run_isolated(_dies_after_its_first_call, timeout=120)
        fields = record_fields(run, nodeid, {"category": "crash", "phase": "forward",
                                                         "error": "crash: process killed by SIGABRT"})
    finally:
        capture.stop()
    folder = bundle_folder(run, nodeid)
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["expected_from"].startswith("onnxruntime")
    assert not (folder / PENDING).exists()
    assert fields["reproducer"]["written"] is True and fields["reproducer"]["reproduces"] is False
    assert _fresh(folder).returncode == 0  # Aidge computes onnxruntime's values: no defect to show


def _config_case(nodeid: str):
    """An Aidge configuration case as the suite runs it (one node from its aidge_core factory)."""
    from interop.cases.aidge_check import check_benchmark_case
    from interop.cases.aidge_configs import benchmark_cases

    (case,) = [c for c in benchmark_cases() if c.id == nodeid]
    return lambda: check_benchmark_case(case)


@pytest.mark.parametrize("case_id, line", [
    ("aidge.batchnorm2d_training_attributes_epsilon_1e-03", "DEFECT PRESENT: forward, output 0 of BatchNorm2DOp: expected"),
    ("aidge.hann_window_error_non_scalar_size", "DEFECT PRESENT: forward: Aidge ran HannWindowOp to the end on an input"),
])
def test_a_case_built_from_aidge_s_factory_gets_a_bundle_too(tmp_path, case_id, line):
    meta = _run_case(tmp_path, case_id, _config_case(case_id))
    folder = tmp_path / case_id
    assert meta["reproduces"] and meta["factory"]["operation"] and meta["nodes"] == 1
    assert not (folder / "model.onnx").exists()  # no ONNX: the node is built as the suite built it
    done = _fresh(folder)
    assert done.returncode == 1 and line in done.stdout, done.stdout + done.stderr
    if "batchnorm" in case_id:  # the comparison compares: Aidge's own outputs as the expected values pass
        subprocess.run([sys.executable, "repro.py", "--save-actual", str(tmp_path / "own")], cwd=folder, timeout=120,
                       capture_output=True)
        for own in (tmp_path / "own").iterdir():
            (folder / "test_data_set_0" / own.name).write_bytes(own.read_bytes())
        fixed = _fresh(folder)
        assert fixed.returncode == 0 and "FIXED" in fixed.stdout, fixed.stdout + fixed.stderr


def test_the_factory_script_imports_numpy_onnx_and_aidge_only():
    script = repro_script({"CASE": "c", "WHAT": "w", "PHASE": "forward"}, factory=True)
    doc = ast.get_docstring(ast.parse(script))
    assert "Run: python repro.py" in doc and doc.count("Needs:") == 1 and "aidge_onnx" not in doc
    modules = set()
    for node in ast.walk(ast.parse(script)):
        if isinstance(node, ast.Import):
            modules |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            modules.add((node.module or "").split(".")[0])
    assert modules <= {"os", "sys", "re", "tempfile", "json", "argparse", "stat", "numpy", "onnx", "aidge_core",
                       "aidge_backend_cpu"}, modules


def test_a_factory_node_that_kills_the_process_gets_its_bundle_from_the_parent(tmp_path):
    from interop.cases.aidge_check import check_benchmark_case
    from interop.cases.aidge_configs import benchmark_cases

    nodeid = "t.py::test_hann_window_negative_size"
    (case,) = [c for c in benchmark_cases() if c.id == "aidge.hann_window_error_negative_size"]
    run = tmp_path / "run"
    capture.start(bundle_folder(run, nodeid), nodeid, write_bundle, tmp_path / "log",
                  pending=write_pending)
    try:
        with pytest.raises(Exception, match="SIGSEGV|crash"):
            run_isolated(check_benchmark_case, case, timeout=60)
    finally:
        capture.stop()
    meta = complete_pending(run, nodeid, {"category": "crash", "phase": "forward",
                                                     "error": "crash: process killed by SIGSEGV during forward"})
    assert meta["reproduces"] and meta["factory"]["operation"] == "HannWindowOp" and meta["repro"]["exit"] < 0
    assert not (bundle_folder(run, nodeid) / PENDING).exists()


def _leaky_relu_backward():
    from interop import ModelTester

    torch.manual_seed(0)
    model = torch.nn.LeakyReLU(0.3)
    am = wrap(model, [(4, 6)])
    ModelTester(model, am, epochs=1, max_slowdown_ratio=None).test_multiple_step([(4, 6)])


def test_a_one_node_graph_whose_backward_differs_names_its_node(tmp_path):
    meta = _run_case(tmp_path, "leaky", _leaky_relu_backward)
    assert meta["phase"] == "backward" and meta["nodes"] == 1
    first = meta["reduced"]["first_diverging"]
    assert first["op_type"] == "LeakyRelu" and first["aidge_type"] == "LeakyReLU", first
    assert first["line"].startswith("the graph's only node")


def _conv_transpose_without_bias_twice():
    import warnings

    from interop.oracle.compare import compare_tensors
    from interop.equivalence.tester import EquivalenceError

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.ConvTranspose2d(3, 2, 2, stride=2, bias=False)).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        am = wrap(model, [(1, 2, 5, 5)], known_defects="warn")
    x = torch.randn(1, 2, 5, 5)
    want = model(x).detach()
    for call in (1, 2):
        got = am(x)
        mismatch = compare_tensors(got.detach(), want, path="output")
        if mismatch is not None:
            raise EquivalenceError(f"call {call}: {mismatch.message}", test="convT", epoch=call, what="output", seed=0)


def test_a_defect_of_a_later_call_names_the_node_that_diverges_on_that_call(tmp_path):
    meta = _run_case(tmp_path, "convT", _conv_transpose_without_bias_twice)
    assert meta["failure"].startswith("forward: EquivalenceError: call 2:"), meta["failure"]  # the case's own error
    assert meta["calls"] == 2 and "forward call 2," in meta["repro"]["line"], meta["repro"]
    first = meta["reduced"]["first_diverging"]
    assert first["op_type"] == "ConvTranspose" and first["line"].startswith("on call 2: "), first


def _onnx_node_case(name):
    from interop.cases.onnx_conformance import onnx_backend_cases, run_onnx_backend_case

    (case,) = [c for c in onnx_backend_cases(("node",)) if c.id == f"onnx_node_{name}"]
    return lambda: run_onnx_backend_case(case)


@pytest.mark.parametrize("name, line", [
    ("test_dropout_default_old", "DEFECT PRESENT: forward call 1, output 0 (node 'y', Dropout): expected [-1, 0, 1]"),
    ("test_castlike_FLOAT_to_DOUBLE", "DEFECT PRESENT: import: node 'output' (ONNX op CastLike) imported as "
                                      "GenericOperator"),
])
def test_an_onnx_backend_test_gets_a_bundle_of_its_own_graph_and_expected_values(tmp_path, name, line):
    """onnx's backend tests hand Aidge a model with its expected outputs, no torch: the bundle is that
    model unchanged, the data set's inputs and the outputs the test ships, and its repro.py fails as
    the case did, in a fresh interpreter without torch (issue 60: the ONNX source's 1-node reproducers)."""
    from interop.cases.onnx_conformance import onnx_test

    meta = _run_case(tmp_path, name, _onnx_node_case(name))
    folder = tmp_path / name
    assert meta["reproduces"] and meta["nodes"] == 1 and meta["expected_from"] == ONNX_TEST_EXPECTED
    test = onnx_test("node", name)
    assert open(folder / "model.onnx", "rb").read() == test.model.SerializeToString()
    want = test.data_sets[0][1][0]
    from onnx import numpy_helper, load_tensor

    np.testing.assert_array_equal(numpy_helper.to_array(load_tensor(str(folder / "test_data_set_0" / "output_0.pb"))),
                                  want)
    assert "the outputs onnx's backend test ships" in (folder / "repro.py").read_text()
    assert bundle_facts(folder)["expected_from"] == ONNX_TEST_EXPECTED
    done = _fresh(folder)
    assert done.returncode == 1 and line in done.stdout, done.stdout + done.stderr


def test_an_onnx_backend_test_whose_process_dies_gets_its_bundle_from_the_parent(tmp_path):
    """What the child leaves before Aidge runs (the model and the data set's inputs) is enough for the
    parent to finish the bundle of a case that died: expected values from onnxruntime, said so."""
    from interop.cases.onnx_conformance import onnx_test

    nodeid = "t.py::test_onnx_backend[onnx_node_test_dropout_default_old]"
    run = tmp_path / "run"
    capture.start(bundle_folder(run, nodeid), nodeid, None, tmp_path / "log",
                  pending=write_pending)
    try:
        test = onnx_test("node", "test_dropout_default_old")
        capture.note_onnx(test.model, ["x"], test.data_sets[0][0], test.data_sets[0][1], rtol=1e-3, atol=1e-5)
    finally:
        capture.stop()
    meta = complete_pending(run, nodeid, {"category": "crash", "phase": "forward",
                                                     "error": "crash: process killed by SIGSEGV during forward"})
    assert meta is not None and meta["inputs_from"] == "the test's data set 0" and meta["nodes"] == 1
    assert meta["expected_from"].startswith("onnxruntime") and meta["repro"]["exit"] == 1  # Dropout: wrong values


def _crashing_bundle(tmp_path, nodes, inputs, feeds, initializers=()):
    """A bundle folder holding a graph Aidge 0.10.1 dies on, and the meta a crash leaves."""
    from onnx import helper, TensorProto

    graph = helper.make_graph(nodes, "g", inputs, [helper.make_empty_tensor_value_info(nodes[-1].output[0])],
                              initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    folder = tmp_path / "bundle"
    names = [i.name for i in inputs]
    _write_layout(folder, model, names, feeds, [], {
        "CASE": "c", "WHAT": "crash", "PHASE": "forward", "CALLS": 1, "RTOL": 1e-5, "ATOL": 1e-8, "FAITHFUL": True,
        "DATA_INPUTS": names, "N_OUTPUTS": 0, "PARAMS": [], "GRAD_OUTPUTS": []})
    run = run_repro(folder, timeout=60)
    assert run["exit"] is not None and run["exit"] < 0, run  # the whole graph dies (the defect this test needs)
    return folder, model, names, {"case": "c", "failure": "crash", "reproduces": True, "repro": run}


def test_a_crash_is_reduced_to_the_node_that_kills_the_process_with_its_feeders(tmp_path):
    """masked.normalize's graph: Max of a tensor and a 0-d ConstantOfShape output dies; the node alone,
    its ConstantOfShape input made a constant, does not: the node with the nodes feeding it does."""
    from onnx import helper, TensorProto, numpy_helper

    x = np.random.default_rng(0).standard_normal((5, 5))
    nodes = [helper.make_node("ReduceL1", ["x", "axes"], ["r"], keepdims=1),
             helper.make_node("Cast", ["r"], ["c"], to=TensorProto.DOUBLE),
             helper.make_node("ConstantOfShape", ["empty"], ["eps"],
                              value=numpy_helper.from_array(np.array([1e-12]), "v")),
             helper.make_node("Max", ["c", "eps"], ["m"]),
             helper.make_node("Div", ["x", "m"], ["y"])]
    inits = [numpy_helper.from_array(np.array([1], np.int64), "axes"),
             numpy_helper.from_array(np.zeros((0,), np.int64), "empty")]
    folder, model, names, meta = _crashing_bundle(
        tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [5, 5])], [x], inits)
    out = reduce_crash(folder, model, names, [x], 1e-5, 1e-8, meta)
    assert out["kept"] and out["op_type"] == "Max" and out["crashing"]["op_type"] == "Max", out
    assert out["nodes"] < len(nodes) and out["repro"]["exit"] < 0
    assert _fresh(folder / "reduced").returncode < 0  # the kept graph dies in a fresh interpreter too
    assert not (folder / ".prefix").exists()


def test_a_crash_on_a_graph_no_reference_can_run_keeps_its_shortest_dying_prefix(tmp_path):
    """nonzero(as_tuple) of a 0-d tensor: Split's sizes exceed its input's dim, so neither onnxruntime nor
    onnx's reference computes the values; the graph's first nodes up to Split are the reproducer."""
    from onnx import helper, TensorProto, numpy_helper

    x = np.array(0.5, np.float32)
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["t"], perm=[1, 0]),
             helper.make_node("Split", ["t", "sizes"], ["s"], axis=1),
             helper.make_node("Squeeze", ["s", "axes"], ["y"])]
    inits = [numpy_helper.from_array(np.array([1], np.int64), "sizes"),
             numpy_helper.from_array(np.array([1], np.int64), "axes")]
    folder, model, names, meta = _crashing_bundle(
        tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])], [x], inits)
    out = reduce_crash(folder, model, names, [x], 1e-5, 1e-8, meta)
    assert out["kept"] and out["op_type"] == "Split" and out["nodes"] == 3, out
    assert _fresh(folder / "reduced").returncode < 0


def test_a_crash_in_the_last_node_names_it_though_no_shorter_prefix_dies(tmp_path):
    """Max last (no node after it): no prefix shorter than the graph dies, so the last node is the one
    that kills the process, and it is named (before, ``crashing`` was None and the reason blamed memory
    corrupted across nodes). Measured: as the graph's output, Max with its feeders does not die alone,
    so the full graph stays the reproducer."""
    from onnx import helper, TensorProto, numpy_helper

    x = np.random.default_rng(0).standard_normal((5, 5))
    nodes = [helper.make_node("ReduceL1", ["x", "axes"], ["r"], keepdims=1),
             helper.make_node("Cast", ["r"], ["c"], to=TensorProto.DOUBLE),
             helper.make_node("ConstantOfShape", ["empty"], ["eps"],
                              value=numpy_helper.from_array(np.array([1e-12]), "v")),
             helper.make_node("Max", ["c", "eps"], ["m"])]
    inits = [numpy_helper.from_array(np.array([1], np.int64), "axes"),
             numpy_helper.from_array(np.zeros((0,), np.int64), "empty")]
    folder, model, names, meta = _crashing_bundle(
        tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [5, 5])], [x], inits)
    out = reduce_crash(folder, model, names, [x], 1e-5, 1e-8, meta)
    assert out["crashing"]["op_type"] == "Max", out
    if not out["kept"]:
        assert out["nodes"] == len(nodes) and "its last node 'Max' does" in out["why"], out
