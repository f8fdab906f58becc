# ---- the reproducer's body: numpy, onnx and Aidge only (no torch, no interop) -------------------
# This file is the part of every generated ``repro.py`` below its settings (the constants CASE,
# PHASE, CALLS, RTOL, ATOL, FAITHFUL, DATA_INPUTS, N_OUTPUTS, PARAMS, GRAD_OUTPUTS and WHAT are written above it by interop.reproducers.script). It is never imported by the
# suite: it is text, kept as a Python file so that it is linted and read like code.
# The settings are Python literals (interop.reproducers.script.script_literal); this body shows case text (CASE,
# WHAT, Aidge's messages) through _shown() only: one line, control characters as escapes.
import argparse
import os
import re
import stat
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "test_data_set_0")


def _c_order(array):
    """A C-ordered copy that keeps the shape (``np.ascontiguousarray`` makes a 0-d array 1-d)."""
    return np.array(array, order="C", copy=True)


class Unreadable(Exception):
    """The bundle itself cannot be read (exit 2): not the defect."""


def _read(path):
    """The bytes of a regular file of the bundle. A missing file, a directory, a FIFO or a device is
    :class:`Unreadable`: checked with os.stat before it is opened, then opened without blocking (a
    FIFO with no writer would hang a plain open) and checked again on the open file."""
    shown = os.path.relpath(path, HERE)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise Unreadable(f"{shown}: not a regular file")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise Unreadable(f"{shown}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise Unreadable(f"{shown}: not a regular file")
        return f.read()


def _load(name):
    path = os.path.join(DATA, name)
    try:
        tensor = onnx.load_tensor_from_string(_read(path))
    except Unreadable:
        raise
    except Exception as exc:  # noqa: BLE001  (protobuf's DecodeError and kin)
        raise Unreadable(f"{os.path.relpath(path, HERE)}: not a TensorProto ({type(exc).__name__}: {exc})") from None
    return numpy_helper.to_array(tensor)


def _model():
    """model.onnx, read and checked to be a whole model (an empty or cut file parses as a model
    without its graph, opsets or outputs): :class:`Unreadable` otherwise, not Aidge's import defect."""
    try:
        model = onnx.load_model_from_string(_read(os.path.join(HERE, "model.onnx")))
    except Unreadable:
        raise
    except Exception as exc:  # noqa: BLE001
        raise Unreadable(f"model.onnx: not an ONNX model ({type(exc).__name__}: {exc})") from None
    if model.ir_version <= 0 or not model.opset_import or not model.graph.node or not model.graph.output:
        raise Unreadable("model.onnx: not a whole ONNX model (empty or cut short: no ir_version, opset, node or "
                         "output)")
    return model


def _shown(text):
    """``text`` on one line, each control or other non-printable character as its escape (``\\x1b``,
    ``\\n``): a case label or a message never moves the terminal nor starts a second verdict line."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _fmt(a, limit=6):
    flat = np.asarray(a).reshape(-1)
    body = ", ".join(f"{v:.6g}" if np.issubdtype(flat.dtype, np.floating) else str(v) for v in flat[:limit])
    return f"[{body}{', ...' if flat.size > limit else ''}] shape {list(np.shape(a))}"


def _compare(what, actual, expected):
    """None when ``actual`` matches ``expected`` (shape, then values within RTOL/ATOL, NaN
    where NaN), else one line: expected against actual."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        return f"{what}: shape {list(actual.shape)}, expected {list(expected.shape)}"
    floating = np.issubdtype(expected.dtype, np.floating) or expected.dtype.name == "bfloat16"  # ml_dtypes' (onnx)
    if expected.dtype == np.bool_ or not floating:
        bad = actual.astype(expected.dtype) != expected
    else:
        a, e = actual.astype(np.float64), expected.astype(np.float64)
        close = np.isclose(a, e, rtol=RTOL, atol=ATOL, equal_nan=True)
        bad = ~close
    if not bad.any():
        return None
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    worst = float(np.nanmax(diff)) if np.isfinite(diff).any() else float("nan")
    return (f"{what}: expected {_fmt(expected)}, actual {_fmt(actual)}; {int(bad.sum())} of {bad.size} elements "
            f"differ beyond rtol={RTOL:g} atol={ATOL:g}, max |diff| {worst:.6g}, first at {list(index)} "
            f"(expected {expected[index]!r}, actual {actual[index]!r})")


def _aidge_dtype(core, array):
    return getattr(core.dtype, {"bool": "boolean"}.get(array.dtype.name, array.dtype.name))


#: ``python repro.py --save-actual DIR`` (main() sets it): Aidge's own outputs (and gradients) go to DIR
#: under the names of the expected files, so that a bundle can be checked against itself
SAVE_ACTUAL = None


def _save(name, array):
    if SAVE_ACTUAL:
        os.makedirs(SAVE_ACTUAL, exist_ok=True)
        with open(os.path.join(SAVE_ACTUAL, name), "wb") as f:
            f.write(numpy_helper.from_array(_c_order(array), name.rsplit(".", 1)[0]).SerializeToString())


#: node types whose output dims depend on the *values* of their first input
_DIMS_FROM_INPUT_0_VALUES = frozenset({"ConstantOfShape", "NonZero", "Range", "Shape"})


def _aidge_words(core, fn):
    """``(fn(), what Aidge logged meanwhile)``: its warnings and errors, each on one line (Aidge
    wraps a long message over several log lines), through a temporary log file."""
    fd, path = tempfile.mkstemp(prefix="aidge-", suffix=".log")
    os.close(fd)
    try:
        core.Log.set_file_name(path)
        core.Log.set_file_level(core.Level.Warn)
        try:
            result = fn()
        finally:
            core.Log.set_file_name("")
        with open(path, errors="replace") as f:
            text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", f.read())
    finally:
        os.remove(path)
    said = []
    for line in text.splitlines():
        level, sep, rest = line.partition(":")
        if sep and level.strip() in ("WARNING", "ERROR", "FATAL") and level == level.strip():
            said.append(rest.strip())
        elif said and line.startswith(("WARNING ", "ERROR ", "FATAL ")):
            said[-1] += " " + line.split(None, 1)[-1].strip()
    return result, list(dict.fromkeys(said))


def _dims_not_forwarded(core, graph):
    """The bridge's compile-time check (interop.bridge.graph.check_dims_forwarded), the same steps:
    ``GraphView.compile`` may fail to compute a node's output dims and only *log* it (ConvDepthWise2D
    with a channel multiplier: "Wrong input size ... Expected dims are [x, 6, x, x]"); running the graph
    then writes outside the undefined output (SIGSEGV, SIGABRT in free(), a hang or garbage). A node
    whose dims were not forwarded and whose inputs are all defined and come from graph inputs or
    Producers is asked again with data dependency allowed; a plain False is the defect (its line, with
    Aidge's words), an exception there is inconclusive. None when every node's dims are known."""
    for node in graph.get_nodes():
        op = node.get_operator()
        if not hasattr(op, "dims_forwarded") or op.dims_forwarded():
            continue
        inputs = [op.get_input(i) for i in range(node.get_nb_inputs())]
        if any(t is not None and t.undefined() for t in inputs):
            continue  # fed by nodes that have not run yet: dims come at forward time
        parents = [node.get_parent(i) for i in range(node.get_nb_inputs())]
        computed = [i for i, p in enumerate(parents) if p is not None and p.type() != "Producer"]
        if any(i > 0 for i in computed) or (computed and node.type() in _DIMS_FROM_INPUT_0_VALUES):
            continue  # an input computed by a node that has not run holds no values yet
        try:
            ok, said = _aidge_words(core, lambda op=op: op.forward_dims(True))
        except Exception:  # noqa: BLE001
            continue
        if not ok:
            dims = [list(t.dims) if t is not None else None for t in inputs]
            words = f" Aidge: {' | '.join(said)}" if said else ""
            return (f"Aidge cannot compute the output dims of node {node.name()!r} (type {node.type()}) from its "
                    f"input dims {dims}; GraphView.compile only logged it, so the graph is not run (it would "
                    f"write outside the undefined output).{words}")
    return None


def run():
    """The defect's line, or None when Aidge computes what is expected."""
    import aidge_core as core
    import aidge_backend_cpu  # noqa: F401  (registers the CPU kernels)
    import aidge_onnx

    core.Log.set_console_level(core.Level.Warn)  # Aidge's own words stay visible
    inputs = [_load(f"input_{i}.pb") for i in range(len(DATA_INPUTS))]
    expected = [_load(f"output_{i}.pb") for i in range(N_OUTPUTS)]
    model = _model()  # an unreadable file is exit 2, before Aidge is asked
    try:
        graph = aidge_onnx.convert_onnx_to_aidge(model)
    except Exception as exc:  # noqa: BLE001
        return f"import: aidge_onnx raised {type(exc).__name__}: {exc}"
    generic = [n for n in graph.get_nodes() if type(n.get_operator()).__name__ == "GenericOperatorOp"]
    if generic:
        return "import: " + ", ".join(f"node {n.name()!r} (ONNX op {n.type()})" for n in generic) + \
            " imported as GenericOperator: Aidge cannot run it"
    core.remove_flatten(graph)
    dims = [list(x.shape) for x in inputs]
    try:
        if FAITHFUL:
            graph.set_backend("cpu")
            if graph.forward_dtype([_aidge_dtype(core, x) for x in inputs]):
                graph.forward_dims(dims)
            elif all(x.dtype == np.float32 for x in inputs):
                # as the bridge does: only float32 data fed, the float32 compile changes nothing
                graph.compile("cpu", core.dtype.float32, dims=dims)
            else:
                return "compile: GraphView.forward_dtype returned False"
        else:
            graph.compile("cpu", core.dtype.float32, dims=dims)
        scheduler = core.SequentialScheduler(graph)
    except Exception as exc:  # noqa: BLE001
        return f"compile: {type(exc).__name__}: {exc}"
    problem = _dims_not_forwarded(core, graph)
    if problem:  # what the bridge refuses at compile, never run: it would corrupt memory or hang
        return f"compile: {problem}"
    feeds = [core.Tensor(_c_order(x if FAITHFUL or not np.issubdtype(x.dtype, np.floating)
                                              else x.astype(np.float32))) for x in inputs]
    outputs = [node.get_operator().get_output(i) for node, i in graph.get_ordered_outputs()]
    names = [f"output {k} (node {node.name()!r}, {node.type()})" for k, (node, _) in enumerate(graph.get_ordered_outputs())]
    for call in range(1, CALLS + 1):
        try:
            scheduler.forward(True, feeds)
        except Exception as exc:  # noqa: BLE001
            return f"forward (call {call}): {type(exc).__name__}: {exc}"
        for k, (name, out, want) in enumerate(zip(names, outputs, expected)):
            if call == 1:
                _save(f"output_{k}.pb", np.array(out, copy=True))
            line = _compare(f"forward call {call}, {name}", np.array(out, copy=True), want)
            if line and not SAVE_ACTUAL:
                return line
    if PHASE != "backward":
        return None
    for out, k in zip(outputs, range(N_OUTPUTS)):
        grad = out.grad
        if list(grad.dims) != list(out.dims):
            grad.resize(list(out.dims))
        np.asarray(grad)[...] = _load(f"grad_output_{k}.pb") if k in GRAD_OUTPUTS else 0
    producers = {p.name(): p.get_operator().get_output(0) for p in core.producers(graph)}
    for t in producers.values():
        np.asarray(t.grad)[...] = 0
    free = [(n, i) for n, i in graph.get_ordered_inputs() if n.get_parent(i) is None]
    by_name = {}
    for n, i in free:
        try:
            by_name[n.input_name(i)] = n.get_operator().get_input(i)
        except Exception:  # noqa: BLE001
            pass
    try:
        scheduler.backward()
    except Exception as exc:  # noqa: BLE001
        return f"backward: {type(exc).__name__}: {exc}"
    for k, name in enumerate(DATA_INPUTS):
        path = os.path.join(DATA, f"grad_input_{k}.pb")
        if os.path.exists(path) and name in by_name:
            _save(f"grad_input_{k}.pb", np.array(by_name[name].grad, copy=True))
            line = _compare(f"backward, gradient of input {name!r}", np.array(by_name[name].grad, copy=True),
                            _load(f"grad_input_{k}.pb"))
            if line and not SAVE_ACTUAL:
                return line
    for k, name in enumerate(PARAMS):
        if name not in producers:
            return f"backward: no Producer named {name!r} in the Aidge graph"
        _save(f"grad_param_{k}.pb", np.array(producers[name].grad, copy=True))
        line = _compare(f"backward, gradient of parameter {name!r}", np.array(producers[name].grad, copy=True),
                        _load(f"grad_param_{k}.pb"))
        if line and not SAVE_ACTUAL:
            return line
    return None


def main(argv=None):
    """Exit status: 1 while the defect is present, 0 once fixed, 2 for an unreadable bundle or a wrong
    command line (argparse's own status)."""
    global SAVE_ACTUAL

    parser = argparse.ArgumentParser(
        prog="repro.py", add_help=False,
        description="Reproduces one failing case of aidge_torch_interop with numpy, onnx and Aidge only. Exit "
                    "status: 1 while the defect is present, 0 once Aidge computes the expected values, 2 if the "
                    "bundle cannot be read.")
    parser.add_argument("-h", "--help", action="store_true", help="show this help, the case and what the suite saw")
    parser.add_argument("--save-actual", metavar="DIR",
                        help="write Aidge's own outputs (first call) and gradients to DIR, under the expected files' "
                             "names")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.help:
        parser.print_help()
        print(f"\ncase: {_shown(CASE)}\nwhat the suite saw: {_shown(WHAT)}")
        return 0
    if args.save_actual is not None and not args.save_actual.strip():
        parser.error("--save-actual needs a folder")
    SAVE_ACTUAL = args.save_actual
    print(f"{_shown(CASE)}: {_shown(WHAT)}")
    try:
        problem = run()
    except Exception as exc:  # noqa: BLE001  (an unreadable bundle is not the defect)
        print(f"cannot run the reproducer: {_shown(type(exc).__name__)}: {_shown(exc)}")
        return 2
    if problem is None:
        print("FIXED: Aidge computes the expected values (torch's) within the tolerance")
        return 0
    print(f"DEFECT PRESENT: {_shown(problem)}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
