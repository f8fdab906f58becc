"""Writing a failing case's reproducer bundle (the layout is described in
:mod:`interop.reproducers`' docstring): from the capture of a torch model
(:func:`write_bundle`), of one Aidge node built from its factory (:func:`write_factory_bundle`) or
of an ONNX model run as it is (:func:`write_onnx_bundle`); the export check
(:func:`export_check`, :func:`export_valid`), Aidge's own words (:func:`aidge_said`,
:func:`import_kind`), and the bundle of a case whose process died, begun by the child
(:func:`write_pending`) and finished by the parent (:func:`complete_pending`).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from .layout import (_apply_size_bound, _np, _one_line, _rtol_atol, _tensor_file, _versions, _what,
                           _write_json, _write_layout, bundle_folder)
from .reduce import _ort_session, reduce_bundle, reduce_crash, session_feeds
from .run import _reproduces, run_repro
from .script import ONNX_TEST_EXPECTED, repro_script
from ..bridge.capture import aidge_log_text
from ..oracle.onnxruntime import graph_refusal
from ..registry.identify import importer_kind

#: forward calls a reproducer makes at most (a defect seen on a later call: ConvTranspose's state)
MAX_CALLS = 3


def _torch_expected(entry, inputs, backward: bool, grad_outputs=None) -> dict[str, Any]:
    """torch's outputs on ``inputs`` (and, for ``backward``, its input and parameter gradients for
    ``grad_outputs``, by default the first backward's), computed on the capture's copy of the model. An input
    torch cannot differentiate (SoftMarginLoss's target: "not differentiable with respect to
    argument 'target'") is left out of the gradients, the last such first, as the suite does."""
    wanted = [backward and x.is_floating_point() for x in inputs]
    while True:
        try:
            return _torch_expected_once(entry, inputs, backward, wanted, grad_outputs)
        except RuntimeError as exc:
            if "not differentiable" not in str(exc) or not any(wanted[1:]):
                raise
            last = max(i for i, w in enumerate(wanted) if w and i > 0)
            wanted[last] = False


def _torch_expected_once(entry, inputs, backward: bool, wanted: list[bool], grad_outputs=None) -> dict[str, Any]:
    import torch
    from torch.utils import _pytree as pytree

    model = entry.snapshot
    with torch.random.fork_rng(devices=[]):
        xs = [x.detach().clone().requires_grad_(w) for x, w in zip(inputs, wanted)]
        with torch.set_grad_enabled(backward):
            out = model(*xs)
        leaves = [leaf for leaf in pytree.tree_leaves(out) if isinstance(leaf, torch.Tensor)]
        result: dict[str, Any] = {"outputs": [_np(leaf) for leaf in leaves]}
        if not backward:
            return result
        state = entry.exported.initializer_to_state
        params = dict(model.named_parameters())
        names = [p for p in entry.param_producers if state.get(p) in params]
        grads_out = (grad_outputs if grad_outputs is not None else entry.first_grad_outputs) or [None] * len(leaves)
        pairs = [(leaf, g if g is not None else torch.zeros_like(leaf))
                 for leaf, g in zip(leaves, grads_out) if leaf.requires_grad]
        wrt = [x for x in xs if x.requires_grad] + [params[state[p]] for p in names]
        grads = torch.autograd.grad([p[0] for p in pairs], wrt, [p[1] for p in pairs], allow_unused=True) \
            if pairs and wrt else [None] * len(wrt)
        grads = list(grads)
        result["grad_outputs"] = [None if g is None else _np(g) for g in grads_out]
        differentiated = [i for i, x in enumerate(xs) if x.requires_grad]
        # keyed by the model input's position (the inputs left out have none)
        result["grad_inputs"] = {i: (np.zeros(tuple(xs[i].shape), np.float32) if g is None else _np(g))
                                 for i, g in zip(differentiated, grads)}
        result["grad_params"] = [(p, np.zeros(tuple(params[state[p]].shape), np.float32) if g is None else _np(g))
                                 for p, g in zip(names, grads[len(differentiated):])]
        return result


def export_check(model_path: Path, feeds: dict[str, np.ndarray], expected: list[np.ndarray] | None,
                 rtol: float, atol: float) -> dict[str, Any]:
    """Is the export valid? ``onnx.checker`` (full check), an onnxruntime session, and onnxruntime's
    outputs against torch's. ``valid`` is False when the checker refuses the file or onnxruntime calls
    it invalid (the exporter's fault); onnxruntime lacking a kernel (``NOT_IMPLEMENTED``: Erf in
    float64) says nothing of the file: ``valid`` stays the checker's (:func:`export_valid`)."""
    out: dict[str, Any] = {"checker": "ok", "onnxruntime": "ok", "valid": True}
    refusal = graph_refusal(Path(model_path))  # the oracle's one rule; the fields keep who refused
    if refusal:
        who, _, words = refusal.partition(": ")
        out.update({"checker" if who == "onnx's checker" else "onnxruntime": words, "valid": False})
    try:
        session = _ort_session(Path(model_path))
    except Exception as exc:  # noqa: BLE001
        out.update(onnxruntime=_one_line(exc))
        out["valid"] = export_valid(out)
        return out
    if expected is None:
        return out
    try:
        got = session.run(None, session_feeds(session, feeds))
    except Exception as exc:  # noqa: BLE001
        out.update(onnxruntime=f"run: {_one_line(exc)}")
        return out
    worst, agree = 0.0, True
    for a, e in zip(got, expected):
        a, e = np.asarray(a), np.asarray(e)
        if a.shape != e.shape:
            agree = False
            continue
        if np.issubdtype(e.dtype, np.floating):
            diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
            ok = np.isclose(a.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
            agree &= bool(ok.all())
            if np.isfinite(diff).any():
                worst = max(worst, float(np.nanmax(diff)))
        else:
            agree &= bool((a == e).all())
    out.update(onnxruntime_matches_torch=agree, onnxruntime_max_abs_diff=worst)
    return out


def export_valid(check: dict[str, Any]) -> bool:
    """A stored check's verdict (a bundle written by an older version included), by the oracle's
    rule (:func:`interop.oracle.onnxruntime.graph_refusal`): valid unless onnx's full check refuses
    it or onnxruntime refuses it for a reason other than a kernel it lacks (NOT_IMPLEMENTED)."""
    if check.get("checker", "ok") != "ok":
        return False
    ort = str(check.get("onnxruntime", "ok"))
    return ort == "ok" or ort.startswith("run:") or "NOT_IMPLEMENTED" in ort


def write_factory_bundle(state, exc: BaseException) -> dict[str, Any]:
    """The reproducer of a case that built one Aidge node from its ``aidge_core`` factory (Aidge's own
    benchmark configurations: no ONNX, :func:`interop.bridge.capture.note_factory`): the inputs and
    torch's outputs in ``test_data_set_0/``, a ``repro.py`` that builds, compiles and runs the node as
    the suite does and exits 1 while the defect is there (for a negative case: while Aidge runs an
    input it should refuse), checked in a fresh process; returns (and writes) ``meta.json``."""
    spec = state.factory
    folder = Path(state.directory)
    if folder.exists():
        shutil.rmtree(folder)
    data = folder / "test_data_set_0"
    data.mkdir(parents=True)
    names = [name if array is not None else None for name, array in spec["arrays"]]
    for k, (name, array) in enumerate(spec["arrays"]):
        if array is not None:
            _tensor_file(data / f"input_{k}.pb", np.asarray(array), str(name))
    expected = [np.asarray(e) for e in spec.get("expected") or ()]
    for k, y in enumerate(expected):
        _tensor_file(data / f"output_{k}.pb", y, f"output_{k}")
    rtol, atol = _rtol_atol(state.tolerance, expected)
    meta: dict[str, Any] = {"case": state.case, "failure": _what(exc), "phase": getattr(exc, "phase", None) or "forward",
                            "calls": 1, "inputs_from": "the case's generated inputs", "versions": _versions(),
                            "tolerance": {"rtol": rtol, "atol": atol},
                            "factory": {"operation": spec["operation"], "attributes": spec["attributes"],
                                        "negative": spec["negative"]}}
    settings = {"CASE": state.case, "WHAT": meta["failure"], "PHASE": meta["phase"], "CALLS": 1, "RTOL": rtol,
                "ATOL": atol, "OPERATION": spec["operation"],
                "ATTRIBUTES_JSON": json.dumps(spec["attributes"], sort_keys=True, default=str),
                "INPUT_NAMES": names, "RANK": spec["rank"], "DIMS_FROM_DATA": bool(spec["dims_from_data"]),
                "NEGATIVE": bool(spec["negative"]), "N_OUTPUTS": len(expected)}
    (folder / "repro.py").write_text(repro_script(settings, factory=True), encoding="utf-8")

    log = aidge_log_text(state)
    (folder / "aidge.log").write_text(log, encoding="utf-8")
    meta["aidge_said"] = aidge_said(log)
    if expected or spec["negative"]:
        meta["repro"] = run_repro(folder)
        meta["reproduces"] = _reproduces(meta["repro"])
    else:
        meta["reproduces"] = False
        meta["expected_error"] = "no expected values: the case failed before torch's reference was computed"
    meta["nodes"] = 1
    meta["reduced"] = {"kept": False, "nodes": 1, "why": "one Aidge node built from its factory"}
    if type(exc).__name__ in ("EquivalenceError", "OutputShapeError"):  # a mismatch: the node is the one that diverges
        meta["reduced"]["first_diverging"] = {"onnx_node": None, "op_type": None,
                                              "aidge_type": str(spec["operation"]).removesuffix("Op"),
                                              "line": "one Aidge node built from its factory"}
    _write_json(folder / "meta.json", meta)
    return meta


def write_bundle(state, exc: BaseException) -> dict[str, Any]:
    """Write the reproducer of the capture's latest wrapped model into ``state.directory`` (see the
    module docstring); returns (and writes) its ``meta.json``. A case that wrapped nothing but built
    one Aidge node from its factory gets :func:`write_factory_bundle`."""
    from ..bridge.onnx_export_graph import unused_graph_inputs

    if not state.entries and getattr(state, "factory", None):
        return write_factory_bundle(state, exc)
    if not state.entries and getattr(state, "onnx", None):
        return write_onnx_bundle(state, exc)
    entry = state.latest()
    folder = Path(state.directory)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    exported = entry.exported
    backward = entry.backward_calls > 0 and entry.first_grad_outputs is not None
    # the inputs of the call the failure came on (a case's call 2 may feed other values than call 1)
    model_inputs, failing_call, inputs_from = entry.failing_call()
    grad_outputs = entry.failing_grad_outputs() if backward else None
    unused = unused_graph_inputs(exported.proto, exported.input_names)
    used = [k for k, name in enumerate(exported.input_names) if name not in unused]
    data_inputs = [exported.input_names[k] for k in used]
    meta: dict[str, Any] = {"case": state.case, "failure": _what(exc), "phase": "backward" if backward else "forward",
                            "calls": max(1, min(entry.forward_calls, MAX_CALLS)), "exporter": exported.exporter,
                            "inputs_from": inputs_from, "failing_call": failing_call, "versions": _versions()}
    expected = None
    if entry.snapshot is not None:
        try:
            expected = _torch_expected(entry, model_inputs, backward, grad_outputs)
        except Exception as err:  # noqa: BLE001
            meta["expected_error"] = f"torch could not recompute the expected values: {_one_line(err)}"
    else:
        meta["expected_error"] = f"the model could not be copied: {entry.snapshot_error}"
    inputs = [_np(model_inputs[k]) for k in used]
    outputs = expected["outputs"] if expected else []
    rtol, atol = _rtol_atol(state.tolerance, outputs)
    meta["tolerance"] = {"rtol": rtol, "atol": atol}
    if expected is not None and backward:
        grad_inputs = {used.index(i): g for i, g in expected["grad_inputs"].items() if i in used}
        grads = {"grad_outputs": expected["grad_outputs"], "grad_inputs": grad_inputs,
                 "grad_params": expected["grad_params"]}
    else:
        grads = None
    settings = {"CASE": state.case, "WHAT": meta["failure"], "PHASE": meta["phase"], "CALLS": meta["calls"],
                "RTOL": rtol, "ATOL": atol, "FAITHFUL": True,  # the bridge compiles every graph with its own dtypes
                "DATA_INPUTS": data_inputs,
                "N_OUTPUTS": len(outputs),
                "PARAMS": [name for name, _ in (grads or {}).get("grad_params", [])],
                "GRAD_OUTPUTS": [k for k, g in enumerate((grads or {}).get("grad_outputs", [])) if g is not None]}
    _write_layout(folder, exported.proto, data_inputs, inputs, outputs, settings, grads)
    return _check_and_reduce(state, exc, folder, exported.proto, data_inputs, inputs,
                             outputs if expected is not None else None, rtol, atol, meta)


def _check_and_reduce(state, exc: BaseException, folder: Path, proto, data_inputs: list[str], inputs: list,
                      outputs: list | None, rtol: float, atol: float, meta: dict[str, Any]) -> dict[str, Any]:
    """The part of every graph bundle after its layout is written: Aidge's log, the export check,
    the reproducer run in a fresh interpreter, the reduction, the size bound, ``meta.json``
    (``outputs`` None: no expected values, so nothing to reproduce against)."""
    log = aidge_log_text(state)
    (folder / "aidge.log").write_text(log, encoding="utf-8")
    meta["aidge_said"] = aidge_said(log)
    kind = import_kind(exc)
    if kind:
        meta["import_kind"] = kind
    meta["export_check"] = export_check(folder / "model.onnx", dict(zip(data_inputs, inputs)), outputs, rtol, atol)
    if outputs is not None:
        meta["repro"] = run_repro(folder)
        meta["reproduces"] = _reproduces(meta["repro"])
    else:
        meta["reproduces"] = False
    try:
        meta["reduced"] = reduce_bundle(folder, exc, data_inputs, inputs, True, rtol, atol, meta)
    except Exception as err:  # noqa: BLE001 - a full bundle without a reduced one, said so
        meta["reduced"] = {"kept": False, "why": f"reduction failed: {_one_line(err)}"}
    meta["nodes"] = len(proto.graph.node)
    _apply_size_bound(folder, meta)
    _write_json(folder / "meta.json", meta)
    return meta


def write_onnx_bundle(state, exc: BaseException) -> dict[str, Any]:
    """The reproducer of a case that ran an ONNX model as it is, with the expected outputs that came
    with it (onnx's backend tests, :func:`interop.bridge.capture.note_onnx`): the model unchanged,
    the failing data set's inputs and expected outputs, the same ``repro.py``, export check and
    reduction as a torch case's (:func:`write_bundle`)."""
    spec = state.onnx
    folder = Path(state.directory)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    proto, data_inputs = spec["model"], list(spec["data_inputs"])
    inputs = [np.asarray(x) for x in spec["inputs"]]
    outputs = [np.asarray(y) for y in spec["expected"]]
    rtol, atol = spec["rtol"], spec["atol"]
    meta: dict[str, Any] = {"case": state.case, "failure": _what(exc), "phase": "forward", "calls": 1,
                            "exporter": None, "inputs_from": f"the test's data set {spec['data_set']}",
                            "failing_call": 1, "versions": _versions(), "expected_from": spec["expected_from"],
                            "tolerance": {"rtol": rtol, "atol": atol}}
    settings = {"CASE": state.case, "WHAT": meta["failure"], "PHASE": "forward", "CALLS": 1, "RTOL": rtol,
                "ATOL": atol, "FAITHFUL": True, "DATA_INPUTS": data_inputs, "N_OUTPUTS": len(outputs),
                "PARAMS": [], "GRAD_OUTPUTS": []}
    _write_layout(folder, proto, data_inputs, inputs, outputs, settings, expected=ONNX_TEST_EXPECTED)
    return _check_and_reduce(state, exc, folder, proto, data_inputs, inputs, outputs, rtol, atol, meta)


def aidge_said(log: str, limit: int = 8) -> list[str]:
    """Aidge's own warnings and errors of a case (its log's WARNING, ERROR and FATAL entries, each
    with its continuation lines joined), first ``limit`` distinct ones."""
    said: list[str] = []
    current: list[str] | None = None
    for line in log.splitlines():
        head, sep, rest = line.partition(":")
        level = head.strip().split(" ")[0]
        if sep and level in ("WARNING", "ERROR", "FATAL") and head.strip() == level:
            current = [rest.strip()]
            said.append(current)  # type: ignore[arg-type]
        elif current is not None and line.startswith(("WARNING ", "ERROR ", "FATAL ")):
            current.append(line.split(None, 1)[1].strip() if len(line.split(None, 1)) > 1 else "")
        else:
            current = None
    out: list[str] = []
    for parts in said:
        text = " ".join(p for p in parts if p)  # type: ignore[union-attr]
        if text and text not in out:
            out.append(text[:500])
    return out[:limit]


def import_kind(exc: BaseException) -> str | None:
    """For an ONNX op imported as GenericOperator: ``converter failure`` when aidge_onnx has a converter
    for that op (it declined or raised on this node's attributes or inputs: its words are in aidge.log),
    ``no converter`` when it has none; None for any other failure."""
    if getattr(exc, "phase", None) != "import" or "GenericOperator" not in str(exc):
        return None
    op = getattr(exc, "operator", None)
    if not op:
        return None

    return importer_kind(op)


def _complete_factory_pending(folder: Path, pending: Path, nodeid: str, record: dict[str, Any], log: str) -> dict:
    """:func:`complete_pending` for one Aidge node from its factory: the node, its inputs and a script
    that builds and runs it (no expected values: the defect is the death, which the script shows)."""
    import onnx
    from onnx import numpy_helper

    info = json.loads((pending / "factory.json").read_text(encoding="utf-8"))
    names = list(info.get("input_names") or [])
    for k, name in enumerate(names):
        if name is not None:
            (folder / "test_data_set_0").mkdir(parents=True, exist_ok=True)
            array = numpy_helper.to_array(onnx.load_tensor(str(pending / f"input_{k}.pb")))
            _tensor_file(folder / "test_data_set_0" / f"input_{k}.pb", array, name)
    error = " ".join(str(record.get("error") or record.get("category") or "the process died").split())[:400]
    rtol, atol = _rtol_atol(None, [])
    meta: dict[str, Any] = {"case": nodeid, "failure": error, "phase": record.get("phase") or "forward", "calls": 1,
                            "inputs_from": "the case's generated inputs", "versions": _versions(),
                            "tolerance": {"rtol": rtol, "atol": atol},
                            "factory": {"operation": info.get("operation"), "attributes": info.get("attributes"),
                                        "negative": bool(info.get("negative"))}}
    settings = {"CASE": nodeid, "WHAT": error, "PHASE": meta["phase"], "CALLS": 1, "RTOL": rtol, "ATOL": atol,
                "OPERATION": info.get("operation"),
                "ATTRIBUTES_JSON": json.dumps(info.get("attributes") or {}, sort_keys=True, default=str),
                "INPUT_NAMES": names, "RANK": int(info.get("rank") or 4),
                "DIMS_FROM_DATA": bool(info.get("dims_from_data")), "NEGATIVE": bool(info.get("negative")),
                "N_OUTPUTS": 0}
    (folder / "repro.py").write_text(repro_script(settings, factory=True), encoding="utf-8")
    (folder / "aidge.log").write_text(log, encoding="utf-8")
    meta["aidge_said"] = aidge_said(log)
    meta["repro"] = run_repro(folder, timeout=60)
    # a case that timed out (a memory-unsafe node hangs or dies, depending on the heap): a hang again reproduces it
    meta["reproduces"] = _reproduces(meta["repro"]) or (meta["repro"].get("exit") is None and "timed out" in error)
    meta["nodes"] = 1
    meta["reduced"] = {"kept": False, "nodes": 1, "why": "one Aidge node built from its factory"}
    shutil.rmtree(pending, ignore_errors=True)
    _write_json(folder / "meta.json", meta)
    return meta


PENDING = ".pending"


def write_pending(state, entry) -> None:
    """What the parent needs to finish the bundle if the case's process dies: the graph (once per
    wrap), the inputs (the example inputs, then the first call's), the compile mode. Written by the
    case child before Aidge runs; removed when the case ends without dying."""
    from ..bridge.onnx_export_graph import unused_graph_inputs

    import onnx

    folder = Path(state.directory) / PENDING
    folder.mkdir(parents=True, exist_ok=True)
    if entry is None:  # one Aidge node from its factory (capture.note_factory): its spec and inputs
        spec = state.factory
        if spec is not None:
            for k, (name, array) in enumerate(spec["arrays"]):
                if array is not None:
                    _tensor_file(folder / f"input_{k}.pb", np.asarray(array), str(name))
            _write_json(folder / "factory.json", {k: v for k, v in spec.items() if k not in ("arrays", "expected")}
                        | {"input_names": [None if a is None else str(n) for n, a in spec["arrays"]]})
            return
        spec = state.onnx  # an ONNX model run as it is (capture.note_onnx): the model, the data set's inputs
        if not spec.get("_pending_model"):
            onnx.save(spec["model"], str(folder / "model.onnx"))
            spec["_pending_model"] = True
        for k, (name, array) in enumerate(zip(spec["data_inputs"], spec["inputs"])):
            _tensor_file(folder / f"input_{k}.pb", np.asarray(array), name)
        _write_json(folder / "pending.json", {"data_inputs": spec["data_inputs"], "faithful": True, "exporter": None,
                                              "inputs_from": f"the test's data set {spec['data_set']}"})
        return
    exported = entry.exported
    if not getattr(entry, "_pending_model", False):
        onnx.save(exported.proto, str(folder / "model.onnx"))
        entry._pending_model = True
    unused = unused_graph_inputs(exported.proto, exported.input_names)
    used = [k for k, name in enumerate(exported.input_names) if name not in unused]
    inputs = entry.first_inputs if entry.first_inputs is not None else entry.example_inputs
    for k, i in enumerate(used):
        _tensor_file(folder / f"input_{k}.pb", _np(inputs[i]), exported.input_names[i])
    _write_json(folder / "pending.json", {"data_inputs": [exported.input_names[k] for k in used],
                                          "faithful": True, "exporter": exported.exporter,
                                          "inputs_from": "first call" if entry.first_inputs is not None
                                          else "wrap's example inputs"})


def complete_pending(run_dir: Path, nodeid: str, record: dict[str, Any], log: str = "") -> dict[str, Any] | None:
    """The bundle of a case whose process died (a crash or a time-out), finished by the parent from
    what the child left (:func:`write_pending`): torch's values died with the child, so the expected
    values are onnxruntime's on the same graph (said in meta.json); the defect is the crash itself,
    which the repro shows as a death by signal. None when the child left nothing."""
    import onnx
    from onnx import numpy_helper

    folder = bundle_folder(run_dir, nodeid)
    pending = folder / PENDING
    if (pending / "factory.json").is_file():
        return _complete_factory_pending(folder, pending, nodeid, record, log)
    if not (pending / "pending.json").is_file() or not (pending / "model.onnx").is_file():
        return None
    info = json.loads((pending / "pending.json").read_text(encoding="utf-8"))
    data_inputs = list(info.get("data_inputs") or [])
    inputs = [numpy_helper.to_array(onnx.load_tensor(str(pending / f"input_{k}.pb"))) for k in range(len(data_inputs))]
    proto = onnx.load(str(pending / "model.onnx"))
    error = " ".join(str(record.get("error") or record.get("category") or "the process died").split())[:400]
    meta: dict[str, Any] = {"case": nodeid, "failure": error, "phase": record.get("phase") or "forward", "calls": 1,
                            "exporter": info.get("exporter"), "inputs_from": info.get("inputs_from"),
                            "versions": _versions(), "expected_from": "onnxruntime (the case's process died)"}
    rtol, atol = _rtol_atol(None, [])
    meta["tolerance"] = {"rtol": rtol, "atol": atol}
    outputs: list[np.ndarray] = []
    try:
        session = _ort_session(proto.SerializeToString())
        outputs = [np.asarray(o) for o in session.run(None, session_feeds(session, dict(zip(data_inputs, inputs))))]
    except Exception as exc:  # noqa: BLE001 - the repro then runs the graph without expected values
        meta["expected_error"] = f"onnxruntime could not compute the expected values: {_one_line(exc)}"
    settings = {"CASE": nodeid, "WHAT": error, "PHASE": "forward", "CALLS": 1, "RTOL": rtol, "ATOL": atol,
                "FAITHFUL": bool(info.get("faithful")), "DATA_INPUTS": data_inputs, "N_OUTPUTS": len(outputs),
                "PARAMS": [], "GRAD_OUTPUTS": []}
    _write_layout(folder, proto, data_inputs, inputs, outputs, settings)
    (folder / "aidge.log").write_text(log, encoding="utf-8")
    meta["aidge_said"] = aidge_said(log)
    meta["export_check"] = export_check(folder / "model.onnx", dict(zip(data_inputs, inputs)), None, rtol, atol)
    meta["repro"] = run_repro(folder, timeout=60)
    meta["reproduces"] = _reproduces(meta["repro"])
    try:
        meta["reduced"] = reduce_crash(folder, proto, data_inputs, inputs, rtol, atol, meta)
    except Exception as err:  # noqa: BLE001 - the full graph stays the reproducer, said so
        meta["reduced"] = {"kept": False, "why": f"reduction failed: {_one_line(err)}"}
    meta["nodes"] = len(proto.graph.node)
    shutil.rmtree(pending, ignore_errors=True)
    _apply_size_bound(folder, meta)
    _write_json(folder / "meta.json", meta)
    return meta
