"""Reducing a failing bundle to the smallest graph that still fails (the reduction is described in
:mod:`interop.reproducers`' docstring): the reference values of every intermediate
(onnxruntime's, :func:`ort_values`, or onnx's reference evaluator's, :func:`_reference_values`),
the first node whose Aidge output differs (:func:`first_diverging_node`), one node extracted with
the values it received (:func:`single_node_model`), and the reductions of a mismatch or an error
(:func:`reduce_bundle`) and of a crash (:func:`reduce_crash`).
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from ..equivalence.isolation import run_isolated
from ..oracle.divergence import first_diverging_output
from ..oracle.onnxruntime import ort_session
from .aidge import _aidge_names, _aidge_values, _backward_node, _onnx_node_for
from .layout import _one_line, _write_layout
from .run import REPRO_TIMEOUT_S, _reproduces, phase_of, run_repro

#: the largest graph whose intermediates onnx's (pure Python) reference evaluator computes when onnxruntime cannot
REFERENCE_MAX_NODES = 64

_ort_session = ort_session  # the one session factory (interop.oracle.onnxruntime)


def session_feeds(session, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    types = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(int64)": np.int64,
             "tensor(int32)": np.int32, "tensor(bool)": np.bool_, "tensor(float16)": np.float16}
    wanted = {i.name: types.get(i.type) for i in session.get_inputs()}
    return {k: (v.astype(wanted[k]) if wanted.get(k) is not None else v) for k, v in feeds.items() if k in wanted}


def _every_value_an_output(proto):
    """A copy of ``proto`` whose graph outputs every node's outputs (each intermediate value)."""
    import onnx

    model = onnx.ModelProto()
    model.CopyFrom(proto)
    known = {o.name for o in model.graph.output}
    for node in model.graph.node:
        for name in node.output:
            if name and name not in known:
                model.graph.output.append(onnx.ValueInfoProto(name=name))
                known.add(name)
    return model


def ort_values(proto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every intermediate value of ``proto`` on ``feeds``, computed by onnxruntime."""
    model = _every_value_an_output(proto)
    session = _ort_session(model.SerializeToString(), optimize=False)
    values = session.run(None, session_feeds(session, feeds))
    out = dict(feeds)
    out.update({o.name: np.asarray(v) for o, v in zip(session.get_outputs(), values)})
    from onnx import numpy_helper

    for init in proto.graph.initializer:
        out.setdefault(init.name, numpy_helper.to_array(init))
    return out


_REGISTRAR = re.compile(r'registrar key: "\[(?P<dtype>\w+),.*?OperatorImpl_cpuINS_\d+(?P<op>[A-Za-z]+?)_Op')


def _node_of_registrar_error(proto, message: str, ort: dict[str, np.ndarray]):
    """The node a "missing or invalid registrar key" error is about when the scheduler cannot say:
    the first node of the ONNX graph of that operator type whose first input has the key's dtype."""
    m = _REGISTRAR.search(message)
    if not m:
        return None
    op, dtype = m.group("op").lower(), m.group("dtype")
    for node in proto.graph.node:
        if node.op_type.lower() != op or not node.input:
            continue
        value = ort.get(node.input[0])
        if value is not None and value.dtype.name == dtype:
            return node
    return None


def first_diverging_node(folder: Path, proto, inputs, faithful: bool, rtol: float, atol: float,
                         ort: dict[str, np.ndarray], calls: int = 1):
    """``(onnx node, aidge node type, line)``: the first node, in the ONNX graph's order, whose Aidge
    output differs from onnxruntime's on the same graph and inputs, on Aidge's ``calls``-th call (a
    defect that shows on a later call: the inputs are the same each call, so onnxruntime's values
    stand); None when none does."""
    # in a child of its own: a crash of Aidge here costs the reduction, never the case's result
    aidge = run_isolated(_aidge_values, folder, inputs, faithful, calls, timeout=REPRO_TIMEOUT_S)
    names = _aidge_names(proto)
    if "error" in aidge:  # Aidge raised on its first call: the node it was running
        phase, name, message = aidge["error"]
        node = proto.graph.node[names[name]] if name in names else _node_of_registrar_error(proto, message, ort)
        return (node, None, f"{phase}: {message}") if node is not None else None
    by_onnx = {}
    for name, (atype, outs) in aidge.items():
        if name in names:
            by_onnx[names[name]] = (name, atype, outs)
    found = first_diverging_output(proto.graph.node, {k: outs for k, (_, _, outs) in by_onnx.items()}, ort,
                                   rtol=rtol, atol=atol)
    if found is not None:
        return proto.graph.node[found.node_index], by_onnx[found.node_index][1], found.line
    if len(proto.graph.node) == 1 and 0 in by_onnx and calls == 1:  # nothing differs on the first call: the only node
        return proto.graph.node[0], by_onnx[0][1], _ONLY_NODE
    return None


_ONLY_NODE = ("the graph's only node: its first call's outputs match onnxruntime's (the defect is in backward or on a "
              "later call)")


_LATER_CALL = re.compile(r"forward call (\d+),")
_OUTPUT_NODE = re.compile(r"\(node '([^']*)', (\w+)\)")


def _diverging_without_intermediates(proto, meta: dict[str, Any]):
    """``(onnx node, aidge type, line)`` when no intermediate differs from onnxruntime's on the first
    call but the node is still known: the graph's only node (its defect is in backward or on a later
    call), or the output node the reproducer's first-call line names (every node Aidge keeps under an
    ONNX name matched onnxruntime before it; the nodes aidge_onnx renames or splits have none to match).
    None for a defect shown on a later call only (the output node is then not the cause)."""
    line = str((meta.get("repro") or {}).get("line") or "")
    m = _OUTPUT_NODE.search(line)
    if len(proto.graph.node) == 1:
        return proto.graph.node[0], m.group(2) if m else proto.graph.node[0].op_type, _ONLY_NODE
    if m and "forward call 1," in line:
        index = _aidge_names(proto).get(m.group(1))
        if index is not None:
            return (proto.graph.node[index], m.group(2),
                    "the output node the reproducer names: no node before it differs from onnxruntime's")
    return None


def single_node_model(proto, node, ort: dict[str, np.ndarray], data_names: set[str], around=()):
    """``(model, data inputs, their values, outputs)``: ``node`` alone (with ``around``: the nodes that
    feed it, in the graph's order, before it). An input that depends on the graph's data inputs is a
    graph input fed with the value it received; one computed from constants only is an initializer
    (Aidge forwards dims from constants, as in the full graph). The outputs are ``node``'s."""
    import onnx
    from onnx import helper, numpy_helper

    dynamic = set(data_names)
    for n in proto.graph.node:
        if any(i in dynamic for i in n.input if i):
            dynamic.update(o for o in n.output if o)
    kept = list(around) + [node]
    made = {o for n in kept for o in n.output if o}
    inputs, values, inits = [], [], []
    for name in [i for n in kept for i in n.input]:
        if not name or name in made or any(i.name == name for i in inputs) or any(i.name == name for i in inits):
            continue
        value = ort.get(name)
        if value is None:
            raise ValueError(f"no value for input {name!r} of node {node.name!r}")
        if name in dynamic:
            inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype),
                                                        list(value.shape)))
            values.append(value)
        else:
            inits.append(numpy_helper.from_array(np.asarray(value), name))
    used = {i for n in proto.graph.node for i in n.input} | {o.name for o in proto.graph.output}
    outs = [o for k, o in enumerate(node.output) if o and (k == 0 or o in used)]  # BatchNorm's unused stats: no
    expected = [ort[o] for o in outs]
    graph_outputs = [helper.make_tensor_value_info(o, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
                     for o, v in zip(outs, expected)]
    copies = []
    for n in kept:
        copy = onnx.NodeProto()
        copy.CopyFrom(n)
        copies.append(copy)
    graph = helper.make_graph(copies, f"reduced_{node.op_type}", inputs, graph_outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=list(proto.opset_import), producer_name="aidge_torch_interop")
    model.ir_version = proto.ir_version
    return model, [i.name for i in inputs], values, expected


def reduce_bundle(folder: Path, exc: BaseException, data_inputs, inputs, faithful: bool, rtol: float, atol: float,
                  meta: dict[str, Any]) -> dict[str, Any]:
    """The smallest failing graph found (see the module docstring), written to ``folder/reduced``
    and kept only when its own ``repro.py`` reproduces in a fresh interpreter."""
    import onnx

    if not meta.get("reproduces"):
        return {"kept": False, "why": "the full graph does not reproduce: nothing to reduce"}
    check = meta.get("export_check") or {}
    if not check.get("valid", True):
        return {"kept": False, "why": "the export is invalid (onnx's checker or onnxruntime refuses the file): no "
                                      "reference for intermediate values, and the export is at fault"}
    proto = onnx.load(str(folder / "model.onnx"))
    result: dict[str, Any] = {}
    if check.get("onnxruntime") == "ok":
        ort = ort_values(proto, dict(zip(data_inputs, inputs)))
    elif len(proto.graph.node) > REFERENCE_MAX_NODES:
        return {"kept": False, "why": f"onnxruntime cannot run the export, and its {len(proto.graph.node)} nodes are "
                                      f"more than onnx's reference evaluator is run on here ({REFERENCE_MAX_NODES}): "
                                      "no intermediate values"}
    else:  # a valid file onnxruntime has no kernel for (AveragePool in float64): onnx's reference evaluator
        try:
            ort = _reference_values(proto, dict(zip(data_inputs, inputs)))
        except Exception as err:  # noqa: BLE001
            return {"kept": False, "why": "onnxruntime cannot run the export and onnx's reference evaluator failed "
                                          f"on it ({_one_line(err)}): no intermediate values"}
        result["reference"] = "onnx.reference.ReferenceEvaluator (onnxruntime cannot run the export: " \
                              f"{str(check.get('onnxruntime'))[:160]})"
        agrees = _reference_agrees_with_torch(folder, proto, ort, rtol, atol)
        if agrees is False:  # the graph itself computes something else than torch: no Aidge node to blame
            found = first_diverging_node(folder, proto, inputs, faithful, rtol, atol, ort)
            if found is not None and found[2] == _ONLY_NODE:  # its outputs match the reference's
                found = None
            # No node is blamed on the reference's word alone: it is not a witness where it differs from
            # torch (onnx 1.23.2's AveragePool with ceil_mode differs from onnxruntime's in float32, and
            # Aidge agrees with onnxruntime there: opinfo avg_pool2d s1 float64, checked 2026-12-04).
            result.update(kept=False, reference_matches_torch=False,
                          why="onnx's reference evaluator differs from torch on the exported graph (the export is at "
                              "fault, or the reference is) and " + (
                                  "Aidge agrees with it on every node" if found is None else
                                  f"Aidge differs from it at node {found[0].name!r}: not blamed on the reference's "
                                  "word alone"))
            return result
    # a value or shape mismatch: the node the bridge names is an output's, the divergence may start earlier
    mismatch = type(exc).__name__ in ("EquivalenceError", "OutputShapeError")
    aidge_node = None if mismatch else getattr(exc, "node", None)
    node = _onnx_node_for(proto, aidge_node)
    how = f"the node Aidge's error names ({aidge_node})" if node is not None else None
    if node is None:
        found = first_diverging_node(folder, proto, inputs, faithful, rtol, atol, ort) or \
            _diverging_without_intermediates(proto, meta)
        later = _LATER_CALL.search(str((meta.get("repro") or {}).get("line") or ""))
        if found is None and later and int(later.group(1)) > 1:  # right on call 1, wrong on call N: compare call N
            found = first_diverging_node(folder, proto, inputs, faithful, rtol, atol, ort, calls=int(later.group(1)))
            if found is not None:
                found = (found[0], found[1], f"on call {later.group(1)}: {found[2]}")
        if found is None:
            out = {"kept": False, "why": "no node's output differs from onnxruntime's on the full graph's first call "
                                         "(a defect across calls, or in backward: not reduced)"}
            backward = _backward_node(folder, meta, rtol, atol) if len(proto.graph.node) > 1 else None
            if backward is not None:  # the bundle's meta.json keeps a wrong gradient sum; the record reads first_diverging
                out["gradient_sum" if backward.get("gradient_sum") else "first_diverging"] = backward
            return out
        node, atype, line = found
        if "reference" in result:  # the values compared with are the reference evaluator's
            line = line.replace("onnxruntime's", "onnx's reference evaluator's").replace("onnxruntime", "onnx's reference")
        if atype is None:
            how = "the node Aidge was running when it raised"
        else:
            how = line.split(":")[0] if line.startswith(("the graph's only node", "the output node")) \
                else "the first node whose Aidge output differs from " + (
                    "onnx's reference evaluator's" if "reference" in result else "onnxruntime's")
            result["first_diverging"] = {"onnx_node": node.name, "op_type": node.op_type, "aidge_type": atype,
                                         "line": line}
    if len(proto.graph.node) <= 1:
        result.update(kept=False, why="the graph already has one node", nodes=len(proto.graph.node), how=how)
        return result
    phase = meta.get("phase", "forward")
    want = phase_of((meta.get("repro") or {}).get("line"))
    settings = {"CASE": meta["case"], "WHAT": meta["failure"], "PHASE": phase, "CALLS": meta["calls"], "RTOL": rtol,
                "ATOL": atol, "FAITHFUL": faithful, "PARAMS": []}
    last, kept = _with_feeders(folder / "reduced", proto, node, ort, data_inputs, settings,
                               lambda run: _reproduces(run) and phase_of(run.get("line")) == want,
                               backward=phase == "backward")
    if last is not None:
        depth, around, run = last
        result.update(node=node.name, op_type=node.op_type, nodes=len(around) + 1, how=how, repro=run)
        if kept:
            result["kept"] = True
            if around:
                result["how"] = f"{how}, with the nodes feeding it up to {depth} step(s) back (the node alone does " \
                                "not fail the same way)"
            return result
    result.update(kept=False, nodes=1, why="the node alone, and with the nodes feeding it up to 3 steps back, does not "
                                           "fail the same way (state across calls, graph-level shape inference or "
                                           "memory: the full graph is the reproducer)")
    return result


def _with_feeders(target: Path, proto, node, values: dict[str, np.ndarray], data_inputs, settings: dict[str, Any],
                  accept, *, backward: bool = False, timeout: float = REPRO_TIMEOUT_S):
    """``node`` alone, then with the nodes that feed it up to 1, 2, 3 steps back (at most 8 nodes, each
    graph once), extracted with the ``values`` it received (:func:`single_node_model`) into ``target``
    and run in a fresh interpreter. ``settings``: the script's settings but its inputs, outputs and
    output gradients (``CASE`` gets the reduction's name; ``backward``: every floating output's gradient
    is ones). Returns ``((depth, around, run) of the last graph tried or None, whether ``accept(run)``
    took it)``: ``target`` holds the taken graph, or is removed."""
    tried, last = set(), None
    for depth in range(0, 4):
        around = _feeders(proto, node, depth)
        if len(around) + 1 > 8 or (depth and len(around) in tried):
            continue
        tried.add(len(around))
        try:
            model, names, vals, expected = single_node_model(proto, node, values, set(data_inputs), around)
        except ValueError:
            continue
        shutil.rmtree(target, ignore_errors=True)
        grads = None
        if backward:
            grads = {"grad_outputs": [np.ones_like(e) if np.issubdtype(e.dtype, np.floating) else None
                                      for e in expected]}
        what = f"node {node.name or node.op_type!r}, {node.op_type}" + (
            f", and the {len(around)} node(s) feeding it" if around else "")
        _write_layout(target, model, names, vals, expected,
                      dict(settings, CASE=settings["CASE"] + f" (reduced to {what})", DATA_INPUTS=names,
                           N_OUTPUTS=len(expected),
                           GRAD_OUTPUTS=[k for k, g in enumerate((grads or {}).get("grad_outputs", [])) if g is not None]),
                      grads)
        last = (depth, around, run_repro(target, timeout=timeout))
        if accept(last[2]):
            return last, True
    shutil.rmtree(target, ignore_errors=True)
    return last, False


#: the prefixes of a crashing graph run, at most (each is one fresh-interpreter run)
CRASH_REDUCE_MAX_NODES = 48


def _prefix_model(proto, k: int):
    """The graph's first ``k`` nodes, the ``k``-th node's outputs as the graph's (untyped: Aidge's
    importer infers them)."""
    from onnx import helper

    nodes = list(proto.graph.node)[:k]
    outputs = [helper.make_empty_tensor_value_info(o) for o in nodes[-1].output if o]
    graph = helper.make_graph(nodes, f"prefix_{k}_{nodes[-1].op_type}", list(proto.graph.input), outputs,
                              initializer=list(proto.graph.initializer))
    model = helper.make_model(graph, opset_imports=list(proto.opset_import), producer_name="aidge_torch_interop")
    model.ir_version = proto.ir_version
    return model


def _dies(run: dict[str, Any]) -> bool:
    return isinstance(run.get("exit"), int) and run["exit"] < 0


def reduce_crash(folder: Path, proto, data_inputs, inputs, rtol: float, atol: float,
                 meta: dict[str, Any]) -> dict[str, Any]:
    """The node that kills the process (a graph whose ``repro.py`` died by a signal), found without
    reference values: the graph's prefixes (its first k nodes, the k-th node's outputs as the graph's)
    are run in fresh interpreters, in order, and the first that dies names the node. That node is then
    extracted alone, then with the nodes feeding it up to 3 steps back, fed the values onnxruntime (or
    onnx's reference evaluator) gives it, and the first of those that dies too is kept in
    ``folder/reduced``; otherwise the dying prefix is (no intermediate values needed: an export onnx
    refuses still crashes Aidge, which must refuse it instead). A hang is not reduced (each try would
    wait out its time-out)."""
    died = (meta.get("repro") or {}).get("exit")
    if not meta.get("reproduces") or not isinstance(died, int) or died >= 0:
        return {"kept": False, "why": "not a death by a signal (a time-out, or the graph does not reproduce): not "
                                      "reduced; the full graph is the reproducer"}
    nodes = list(proto.graph.node)
    if len(nodes) <= 1:
        return {"kept": False, "why": "the graph already has one node", "nodes": len(nodes)}
    target = folder / "reduced"
    base = {"CASE": meta["case"], "WHAT": meta["failure"], "PHASE": "forward", "CALLS": 1, "RTOL": rtol,
            "ATOL": atol, "FAITHFUL": True, "PARAMS": [], "GRAD_OUTPUTS": []}
    tried = 0
    found = None
    for k in range(1, len(nodes)):  # the whole graph (k = len) is known to die
        if nodes[k - 1].op_type == "Constant":
            continue
        if tried >= CRASH_REDUCE_MAX_NODES:
            return {"kept": False, "why": f"no prefix of the first {tried} node(s) kills the process: not reduced; "
                                          "the full graph is the reproducer"}
        tried += 1
        shutil.rmtree(target, ignore_errors=True)
        node = nodes[k - 1]
        settings = dict(base, CASE=meta["case"] + f" (its first {k} node(s), up to {node.name or node.op_type!r})",
                        DATA_INPUTS=list(data_inputs), N_OUTPUTS=0)
        _write_layout(target, _prefix_model(proto, k), list(data_inputs), inputs, [], settings)
        run = run_repro(target, timeout=30)
        if _dies(run):
            found = (k, node, run)
            break
    if found is None:
        k, node, run = len(nodes), nodes[-1], meta.get("repro") or {}
    else:
        k, node, run = found
    prefix_dir = folder / ".prefix"
    shutil.rmtree(prefix_dir, ignore_errors=True)
    if found is not None:
        target.rename(prefix_dir)
    crashing = {"onnx_node": node.name, "op_type": node.op_type,
                "line": f"the process dies in node {node.name or node.op_type!r} ({node.op_type}): the graph up to it "
                        "dies, the graph before it does not"}
    feeds = dict(zip(data_inputs, inputs))
    values, source = None, "onnxruntime"
    try:
        values = ort_values(proto, feeds)
    except Exception:  # noqa: BLE001 - onnx's reference evaluator, on a small graph
        if len(nodes) <= REFERENCE_MAX_NODES:
            try:
                values, source = _reference_values(proto, feeds), "onnx's reference evaluator"
            except Exception:  # noqa: BLE001 - then the dying prefix is the reproducer
                values = None
    if values is not None:
        last, kept = _with_feeders(target, proto, node, values, data_inputs, base, _dies, timeout=30)
        if kept:
            depth, around, one = last
            shutil.rmtree(prefix_dir, ignore_errors=True)
            return {"kept": True, "node": node.name, "op_type": node.op_type, "nodes": len(around) + 1,
                    "repro": one, "crashing": crashing,
                    "how": "the node whose prefix first kills the process" + (
                        f", with the nodes feeding it up to {depth} step(s) back" if around else " alone")
                    + f", fed the values {source} gives it"}
    if found is None:  # no shorter prefix dies: the whole graph is the shortest, its last node the one that kills
        return {"kept": False, "nodes": len(nodes), "crashing": crashing,
                "why": f"no shorter prefix kills the process, so its last node {node.name or node.op_type!r} does; that "
                       "node alone, fed the reference's values, does not (or no reference can compute them): the full "
                       "graph is the reproducer"}
    prefix_dir.rename(target)
    return {"kept": True, "node": node.name, "op_type": node.op_type, "nodes": k, "repro": run, "crashing": crashing,
            "how": f"the graph's first {k} node(s): the shortest prefix that kills the process (the node alone, fed "
                   "the reference's values, does not, or no reference can compute them)"}


def _reference_values(proto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What :func:`ort_values` gives, computed by onnx's reference evaluator (every node output
    exposed): for a valid graph onnxruntime has no kernel for."""
    from onnx import numpy_helper
    from onnx.reference import ReferenceEvaluator

    model = _every_value_an_output(proto)
    wanted = {i.name for i in model.graph.input}
    values = ReferenceEvaluator(model).run(None, {k: v for k, v in feeds.items() if k in wanted})
    out = dict(feeds)
    out.update({o.name: np.asarray(v) for o, v in zip(model.graph.output, values)})
    for init in proto.graph.initializer:
        out.setdefault(init.name, numpy_helper.to_array(init))
    return out


def _reference_agrees_with_torch(folder: Path, proto, values: dict[str, np.ndarray], rtol: float,
                                 atol: float) -> bool | None:
    """Whether the reference's graph outputs equal torch's stored ones (``test_data_set_0/output_K.pb``)
    within the case's tolerance; None when there are none to compare."""
    import onnx
    from onnx import numpy_helper

    data = folder / "test_data_set_0"
    compared = False
    for k, out in enumerate(proto.graph.output):
        path = data / f"output_{k}.pb"
        if not path.is_file() or out.name not in values:
            continue
        want, got = numpy_helper.to_array(onnx.load_tensor(str(path))), np.asarray(values[out.name])
        compared = True
        if want.shape != got.shape:
            return False
        if np.issubdtype(want.dtype, np.floating):
            if not np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                              equal_nan=True).all():
                return False
        elif not (got.astype(want.dtype) == want).all():
            return False
    return True if compared else None


def _feeders(proto, node, depth: int) -> list:
    """The nodes that feed ``node`` within ``depth`` steps, in the graph's order."""
    producer = {o: n for n in proto.graph.node for o in n.output if o}
    wanted, frontier = set(), [node]
    for _ in range(depth):
        parents = [producer[i] for n in frontier for i in n.input if i in producer]
        frontier = [p for p in parents if id(p) not in wanted]
        wanted.update(id(p) for p in frontier)
    return [n for n in proto.graph.node if id(n) in wanted]
