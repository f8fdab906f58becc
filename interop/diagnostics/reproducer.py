"""A standalone reproducer for a failing case: the bundle an Aidge developer runs without this suite.

:func:`write_bundle` is the writer :mod:`interop.bridge.capture` hands a failing case to, in
the process that saw the failure (the forked case child). It writes, into the case's folder::

    model.onnx                      exactly the graph Aidge was given
    test_data_set_0/input_K.pb      the inputs of the call the case failed on (its first call's when
                                    they hold the same values; ONNX backend-test layout)
    test_data_set_0/output_K.pb     torch's outputs on them (the expected values)
    test_data_set_0/grad_*.pb       backward: the output gradient, torch's input and parameter gradients
    aidge.log                       Aidge's own log lines for this case (Notice and above)
    repro.py                        numpy + onnx + Aidge only: exit 1 while the defect is there, 0 once fixed
    reduced/                        the same layout for the smallest graph found that still fails
    meta.json                       what was written and checked (read into the case's record)

Before anything is blamed on Aidge the export is checked (:func:`export_check`): the full
``onnx.checker`` check, an onnxruntime session on the same file, and onnxruntime's outputs
against torch's. Each ``repro.py`` is then run in a fresh interpreter (``python -I``, with
``torch`` and ``interop`` made unimportable) and its exit status kept: a bundle *reproduces*
when that run exits 1 (or dies by a signal: a crash).

Reduction (:func:`reduce_bundle`): for an error, the node Aidge named; for a value mismatch,
the first node whose Aidge output differs from onnxruntime's on the same graph (every
intermediate exposed on both sides, compared in topological order). That node alone is
extracted with the values it really received (onnxruntime's intermediates; inputs computed
from constants only stay constants, so that Aidge can forward dims as it did) and kept only if
its own ``repro.py`` reproduces in a fresh interpreter. Why our own code and not polygraphy's
``debug reduce``: that tool bisects against a check *command* (minutes per model here), and we
already hold every intermediate value; onnx's ``Extractor`` keeps the producing subgraph, not
the node alone.
"""
from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..bridge.ort import aidge_node_indices
from ..oracle.divergence import first_diverging_output
from ..oracle.onnxruntime import ort_session

__all__ = ["write_bundle", "write_onnx_bundle", "ONNX_TEST_EXPECTED", "export_check", "run_repro", "reduce_bundle", "BODY_PATH", "max_bundle_bytes",
           "repro_script", "script_literal", "script_settings", "bundle_folder", "record_fields", "first_diverging_node", "FreshServer",
           "start_fresh_server", "stop_fresh_server", "bundle_facts", "run_fresh", "write_pending", "complete_pending", "PENDING", "verdict_of",
           "phase_of", "load_in_aidge", "AidgeRefused", "reduce_crash", "bundle_aidge_types", "backward_divergence"]

BODY_PATH = Path(__file__).with_name("repro_body.py")
#: a bundle's size bound (MB), beyond which only its reduced graph is kept
MAX_MB_ENV = "INTEROP_REPRO_MAX_MB"
DEFAULT_MAX_MB = 20.0
#: forward calls a reproducer makes at most (a defect seen on a later call: ConvTranspose's state)
MAX_CALLS = 3
REPRO_TIMEOUT_S = 120
#: ``meta["expected_from"]`` of a bundle whose expected values came with its ONNX model (onnx's backend tests)
ONNX_TEST_EXPECTED = "onnx's backend test"
#: the largest graph whose intermediates onnx's (pure Python) reference evaluator computes when onnxruntime cannot
REFERENCE_MAX_NODES = 64
#: what runs a repro.py "fresh": isolated mode, torch and interop unimportable
_FRESH = ("import runpy, sys\n"
          "for name in ('torch', 'interop'):\n"
          "    sys.modules[name] = None\n"
          "sys.argv = sys.argv[1:]\n"
          "runpy.run_path(sys.argv[0], run_name='__main__')\n")


def max_bundle_bytes() -> int:
    from ..env import read

    return read(MAX_MB_ENV)  # bytes; declared in interop.env.VARIABLES (default DEFAULT_MAX_MB)


def _c_order(array):
    """A C-ordered copy that keeps the shape (``np.ascontiguousarray`` makes a 0-d array 1-d)."""
    return np.array(array, order="C", copy=True)


# ---------------------------------------------------------------------------------------------
def _tensor_file(path: Path, array: np.ndarray, name: str) -> None:
    from onnx import numpy_helper

    path.write_bytes(numpy_helper.from_array(_c_order(array), name).SerializeToString())


def _np(t) -> np.ndarray:
    """A numpy copy of a torch tensor; bfloat16 (numpy has none) as ml_dtypes' bfloat16, the type onnx's
    numpy_helper reads and writes for a BFLOAT16 TensorProto (onnx depends on ml_dtypes)."""
    import torch

    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        import ml_dtypes

        return t.view(torch.uint16).numpy().copy().view(ml_dtypes.bfloat16)
    return t.numpy().copy()


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


FACTORY_BODY_PATH = Path(__file__).with_name("repro_factory_body.py")


#: repro.py's docstring line of what it needs (an ONNX graph, or one node built from its factory): fixed text
_HEADER_TEXT = (
    "Needs: numpy, onnx, aidge_core, aidge_backend_cpu, aidge_onnx (the Aidge release in meta.json).",
    "Needs: numpy, onnx (to read the .pb files), aidge_core, aidge_backend_cpu (the release in meta.json).")


def script_settings(text: str) -> dict[str, Any]:
    """A generated script's module-level settings (upper-case names bound to literals), read with
    ``ast.literal_eval``: data, never run."""
    import ast

    out: dict[str, Any] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id.isupper():
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return out


def script_literal(value: Any) -> str:
    """``value`` as Python source that evaluates to it and does nothing else: str, bytes, int, bool,
    None, float (``float('nan')``/``float('inf')`` where ``repr`` gives a bare name), and lists,
    tuples and str-keyed dicts of those. The one way a generated script receives data (a case label,
    a node id, Aidge's message): never text pasted into code, a docstring or a comment. A str
    subclass's own ``__repr__`` is not trusted (``str.__repr__`` escapes quotes, backslashes and
    every non-printable character: NUL, CR, ESC, U+2028); anything else is a TypeError."""
    if isinstance(value, np.generic):  # a numpy scalar (a tolerance, a count): its Python value
        value = value.item()
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return int.__repr__(int(value))
    if isinstance(value, float):
        value = float(value)
        return float.__repr__(value) if value == value and abs(value) != float("inf") else f"float({str(value)!r})"
    if isinstance(value, str):
        return str.__repr__(value)
    if isinstance(value, bytes):
        return bytes.__repr__(bytes(value))
    if isinstance(value, (list, tuple)):
        items = [script_literal(v) for v in value]
        if isinstance(value, tuple):
            return "(" + "".join(f"{i}, " for i in items) + ")"
        return "[" + ", ".join(items) + "]"
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("a generated script's dict setting needs str keys")
        return "{" + ", ".join(f"{script_literal(k)}: {script_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"a generated script cannot hold a {type(value).__name__} setting")


#: whose the expected values in test_data_set_0/ are, as repro.py's docstring says it: fixed text, by key
_EXPECTED_TEXT = {"torch": "torch's outputs", ONNX_TEST_EXPECTED: "the outputs onnx's backend test ships"}


def repro_script(settings: dict[str, Any], *, factory: bool = False, expected: str = "torch") -> str:
    """A ``repro.py``: a fixed docstring, its settings as Python literals (:func:`script_literal`:
    the case's label, node id and message are data, never code nor docstring text: ``--help``
    prints them), then the body (``repro_body.py``; for one Aidge node built from its factory,
    ``repro_body.py``'s helpers and main around the run() of ``repro_factory_body.py``)."""
    header = ["#!/usr/bin/env python3",
              '"""Reproducer of one failing case (written by aidge_torch_interop; runs without it).',
              "",
              "The case and what the suite saw are CASE and WHAT below; python repro.py --help prints them.",
              _HEADER_TEXT[1] if factory else _HEADER_TEXT[0],
              "Run: python repro.py   Exit status: 1 while the defect is present, 0 once Aidge computes the",
              f"expected values ({_EXPECTED_TEXT[expected]}, stored in test_data_set_0/), 2 if the bundle cannot be read",
              "(or the command line is wrong).",
              "python repro.py --save-actual DIR writes Aidge's own outputs (first call) and gradients to DIR.",
              '"""']
    for key, value in settings.items():
        if not (isinstance(key, str) and key.isidentifier() and key.isascii() and key.isupper()):
            raise ValueError(f"a generated script's setting needs an upper-case ASCII name, not {key!r}")
        header.append(f"{key} = {script_literal(value)}")
    lines = BODY_PATH.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() and not line.startswith("#"))
    lines = lines[start:]
    if factory:
        run_at = lines.index("def run():")
        main_at = next(i for i, line in enumerate(lines) if line.startswith("def main("))
        own = FACTORY_BODY_PATH.read_text(encoding="utf-8").splitlines()
        own = own[next(i for i, line in enumerate(own) if line.strip() and not line.startswith("#")):]
        lines = lines[:run_at] + own + ["", ""] + lines[main_at:]
    body = "\n".join(["# ---- numpy, onnx and Aidge only from here (no torch, no aidge_torch_interop) ----"] + lines)
    return "\n".join(header) + "\n\n" + body + "\n"


def _fresh_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")}
    env["OMP_NUM_THREADS"] = "1"
    return env


def verdict_of(code: int | None, output: str) -> dict[str, Any]:
    """``{"exit": code, "line": ...}``: a repro.py run's verdict line (its last DEFECT PRESENT, FIXED or
    cannot-run line, else the output's last line)."""
    lines = [line for line in output.splitlines() if line.startswith(("DEFECT PRESENT", "FIXED", "cannot run"))]
    line = lines[-1] if lines else (output.strip().splitlines() or [""])[-1]
    return {"exit": code, "line": line[:2000]}


def run_repro(folder: Path, timeout: float = REPRO_TIMEOUT_S) -> dict[str, Any]:
    """``folder/repro.py`` in a fresh interpreter: ``{"exit": status, "line": its verdict line}``
    (a negative status: killed by that signal). Through this process's :class:`FreshServer` when one
    was started (a fork of an interpreter that imported numpy, onnx and Aidge only: ~0.1 s instead of
    ~2 s of imports), else ``python -I`` with torch and interop made unimportable."""
    server = _SERVER
    if server is not None:
        result = server.run(folder, timeout)
        if result is not None:
            return result
    try:
        done = subprocess.run([sys.executable, "-I", "-c", _FRESH, str(folder / "repro.py")], cwd=folder,
                              env=_fresh_env(), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"exit": None, "line": f"timed out after {timeout:g} s"}
    return verdict_of(done.returncode, done.stdout + "\n" + done.stderr)



def run_fresh(script: Path, timeout: float = REPRO_TIMEOUT_S) -> dict[str, Any]:
    """``script`` run as a reproducer's user runs it, in its folder, in a fresh interpreter
    (``python -I``, torch and interop unimportable): ``{"exit": status, or None when it timed out,
    "output": its stdout and stderr}``."""
    script = Path(os.path.abspath(script))
    try:
        done = subprocess.run([sys.executable, "-I", "-c", _FRESH, str(script)], cwd=script.parent, env=_fresh_env(),
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"exit": None, "output": f"(timed out after {timeout:g} s)"}
    return {"exit": done.returncode, "output": done.stdout + done.stderr}

#: the fork server's program: imports numpy, onnx and Aidge (torch and interop unimportable), then
#: for each request line (a bundle folder) forks a child that runs its repro.py as __main__
_SERVER_CODE = r"""
import json, os, select, signal, sys, runpy, traceback
for name in ("torch", "interop"):
    sys.modules[name] = None
import numpy, onnx, aidge_core, aidge_backend_cpu, aidge_onnx
out = os.fdopen(os.dup(1), "w")
for line in sys.stdin:
    req = json.loads(line)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.dup2(w, 1)
        os.dup2(w, 2)
        code = 0
        try:
            os.chdir(req["folder"])
            sys.argv = [os.path.join(req["folder"], "repro.py")] + list(req.get("args") or [])
            runpy.run_path(sys.argv[0], run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 3
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    os.close(w)
    chunks, killed = [], False
    while True:
        ready, _, _ = select.select([r], [], [], req["timeout"])
        if not ready:
            os.kill(pid, signal.SIGKILL)
            killed = True
            break
        data = os.read(r, 65536)
        if not data:
            break
        chunks.append(data)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    code = None if killed else (os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status))
    text = b"".join(chunks).decode(errors="replace")[-20000:]
    out.write(json.dumps({"exit": code, "output": text}) + "\n")
    out.flush()
"""


class FreshServer:
    """One clean interpreter per process that writes bundles (see :func:`run_repro`). Started by the
    parent of the case children (they inherit its pipes); one request at a time."""

    def __init__(self, python: str | Path | None = None):
        self.owner = os.getpid()
        self.proc = subprocess.Popen([str(python or sys.executable), "-I", "-c", _SERVER_CODE], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_fresh_env(),
                                     text=True, bufsize=1, start_new_session=True)

    def alive(self) -> bool:
        """Whether the server runs. Only its parent may ask the OS (``Popen.poll`` in a forked child
        waits for a process that is not its child, and reads that as an exit); a child tells by
        whether the server's pid still exists."""
        if os.getpid() == self.owner:
            return self.proc.poll() is None
        try:
            os.kill(self.proc.pid, 0)
        except OSError:
            return False
        return True

    def run(self, folder: Path, timeout: float, args: tuple[str, ...] = ()) -> dict[str, Any] | None:
        """The verdict (``args``: repro.py's own, as ``--save-actual DIR``), or None when the server is
        gone (the caller falls back to a subprocess)."""
        if not self.alive():
            return None
        try:
            self.proc.stdin.write(json.dumps({"folder": str(folder), "timeout": timeout, "args": list(args)}) + "\n")
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout + 30)
            if not ready:  # the server itself hangs: it goes, the caller falls back
                self.close()
                return None
            answer = json.loads(self.proc.stdout.readline())
        except (OSError, ValueError):
            return None
        if answer.get("exit") is None:  # killed at its time-out, as run_repro's subprocess says it
            return {"exit": None, "line": f"timed out after {timeout:g} s"}
        return verdict_of(answer.get("exit"), answer.get("output") or "")

    def close(self) -> None:
        if os.getpid() != self.owner:  # a child's copy: the server is its parent's
            return
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


_SERVER: FreshServer | None = None


def start_fresh_server() -> None:
    """Start this process's :class:`FreshServer` (once; its children inherit it)."""
    global _SERVER
    if _SERVER is None or not _SERVER.alive():
        try:
            _SERVER = FreshServer()
        except OSError:
            _SERVER = None


def stop_fresh_server() -> None:
    global _SERVER
    if _SERVER is not None:
        _SERVER.close()
        _SERVER = None


def phase_of(line: str | None) -> str:
    """The phase a reproducer's verdict line names (``import``, ``compile``, ``forward``, ``backward``)."""
    text = (line or "").removeprefix("DEFECT PRESENT: ")
    return text.split(":")[0].split(" ")[0].split(",")[0]


def _reproduces(result: dict[str, Any]) -> bool:
    code = result.get("exit")
    return code == 1 or (isinstance(code, int) and code < 0)


# ---------------------------------------------------------------------------------------------
def export_check(model_path: Path, feeds: dict[str, np.ndarray], expected: list[np.ndarray] | None,
                 rtol: float, atol: float) -> dict[str, Any]:
    """Is the export valid? ``onnx.checker`` (full check), an onnxruntime session, and onnxruntime's
    outputs against torch's. ``valid`` is False when the checker refuses the file or onnxruntime calls
    it invalid (the exporter's fault); onnxruntime lacking a kernel (``NOT_IMPLEMENTED``: Erf in
    float64) says nothing of the file: ``valid`` stays the checker's (:func:`export_valid`)."""
    from ..oracle.onnxruntime import graph_refusal

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
        got = session.run(None, _ort_feeds(session, feeds))
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


_ort_session = ort_session  # the one session factory (interop.oracle.onnxruntime)


def _ort_feeds(session, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    types = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(int64)": np.int64,
             "tensor(int32)": np.int32, "tensor(bool)": np.bool_, "tensor(float16)": np.float16}
    wanted = {i.name: types.get(i.type) for i in session.get_inputs()}
    return {k: (v.astype(wanted[k]) if wanted.get(k) is not None else v) for k, v in feeds.items() if k in wanted}


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}"[:600]


# ---------------------------------------------------------------------------------------------
def _write_layout(folder: Path, proto, data_inputs: list[str], inputs: list[np.ndarray], outputs: list[np.ndarray],
                  settings: dict[str, Any], grads: dict[str, Any] | None = None, expected: str = "torch") -> None:
    import onnx

    data = folder / "test_data_set_0"
    data.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, str(folder / "model.onnx"))
    for k, (name, x) in enumerate(zip(data_inputs, inputs)):
        _tensor_file(data / f"input_{k}.pb", x, name)
    out_names = [o.name for o in proto.graph.output]
    for k, y in enumerate(outputs):
        _tensor_file(data / f"output_{k}.pb", y, out_names[k] if k < len(out_names) else f"output_{k}")
    if grads:
        for k, g in enumerate(grads.get("grad_outputs") or []):
            if g is not None:
                _tensor_file(data / f"grad_output_{k}.pb", g, f"grad_output_{k}")
        for k, g in (grads.get("grad_inputs") or {}).items():
            _tensor_file(data / f"grad_input_{k}.pb", g, f"grad_{data_inputs[k]}" if k < len(data_inputs) else "")
        for k, (name, g) in enumerate(grads.get("grad_params") or []):
            _tensor_file(data / f"grad_param_{k}.pb", g, f"grad_{name}")
    (folder / "repro.py").write_text(repro_script(settings, expected=expected), encoding="utf-8")


def _what(exc: BaseException) -> str:
    phase = getattr(exc, "phase", None)
    text = " ".join(str(exc).split())
    return (f"{phase}: " if phase else "") + f"{type(exc).__name__}: {text}"[:400]


def _rtol_atol(tolerance, outputs: list[np.ndarray]) -> tuple[float, float]:
    from ..oracle.tolerance import tolerance_for

    dtype = next((o.dtype.name for o in outputs if np.issubdtype(o.dtype, np.floating)), "float32")
    tol = tolerance_for(tolerance, dtype)
    return tol.rtol, tol.atol


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
    from ..bridge.capture import aidge_log_text

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
    from ..bridge.onnx_export import unused_graph_inputs

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
    from ..bridge.capture import aidge_log_text

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
    from ..registry.identify import importer_kind

    return importer_kind(op)


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for name in ("aidge_core", "aidge_backend_cpu", "aidge_onnx", "onnx", "onnxruntime", "torch", "numpy"):
        try:
            out[name] = metadata.version(name.replace("_", "-"))
        except metadata.PackageNotFoundError:
            pass
    return out


def _write_json(path: Path, obj: Any) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, sort_keys=True, default=str)
    os.chmod(tmp, 0o644)  # mkstemp's 0600: the bundle is to be shared
    os.replace(tmp, path)


def _apply_size_bound(folder: Path, meta: dict[str, Any]) -> None:
    """Over the bound: the full graph goes, the reduced one stays (the record says which)."""
    limit = max_bundle_bytes()
    full = sum(p.stat().st_size for p in [folder / "model.onnx", *(folder / "test_data_set_0").glob("*.pb")]
               if p.is_file())
    meta["full_bytes"] = full
    if full <= limit:
        return
    for p in [folder / "model.onnx", folder / "repro.py"]:
        p.unlink(missing_ok=True)
    shutil.rmtree(folder / "test_data_set_0", ignore_errors=True)
    meta["full_removed"] = (f"the full graph's bundle ({full / 1e6:.1f} MB) is over the bound "
                            f"(${MAX_MB_ENV}, {limit / 1e6:g} MB): only " +
                            ("the reduced graph is kept" if meta.get("reduced", {}).get("kept") else
                             "this description is kept (no reduced graph reproduces); replay the case with the suite"))


# ---------------------------------------------------------------------------------------------
def _onnx_node_for(proto, aidge_name: str | None):
    """The ONNX node Aidge named ``aidge_name`` (see :func:`_aidge_names`), or None."""
    if not aidge_name:
        return None
    index = _aidge_names(proto).get(aidge_name)
    return None if index is None else proto.graph.node[index]


_aidge_names = aidge_node_indices  # the one map (interop.bridge.ort), under the name this module's readers use


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


def _ort_values(proto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every intermediate value of ``proto`` on ``feeds``, computed by onnxruntime."""
    model = _every_value_an_output(proto)
    session = _ort_session(model.SerializeToString(), optimize=False)
    values = session.run(None, _ort_feeds(session, feeds))
    out = dict(feeds)
    out.update({o.name: np.asarray(v) for o, v in zip(session.get_outputs(), values)})
    from onnx import numpy_helper

    for init in proto.graph.initializer:
        out.setdefault(init.name, numpy_helper.to_array(init))
    return out


class AidgeRefused(Exception):
    """:func:`load_in_aidge` could not take a graph: ``phase`` (import or compile) and the cause."""

    def __init__(self, phase: str, cause: BaseException | str):
        super().__init__(f"{phase}: {cause}")
        self.phase, self.cause = phase, cause


def load_in_aidge(proto, inputs: list[np.ndarray], *, faithful: bool = True, refuse_generic: bool = False):
    """``(graph, scheduler, feeds)``: ``proto`` imported by aidge_onnx (which renames it in place),
    compiled for the CPU as the bridge does (the graph's own dtypes; ``faithful=False``: float32, for a bundle
    written before 2026-12-06 that says FAITHFUL = False), and the inputs as Aidge tensors; :class:`AidgeRefused` when it cannot be (``refuse_generic``: a
    node imported as GenericOperator too). The caller holds ``quiet_aidge``."""
    from ..bridge import runtime as rt

    core, aidge_onnx = rt.aidge_core(), rt.aidge_onnx()
    try:
        graph = aidge_onnx.convert_onnx_to_aidge(proto)
    except Exception as exc:  # noqa: BLE001
        raise AidgeRefused("import", exc) from exc
    if refuse_generic:
        from ..bridge.graph import generic_nodes

        generic = generic_nodes(graph)
        if generic:
            raise AidgeRefused("import", ", ".join(f"{n.type()} ({n.name()})" for n in generic[:4])
                               + " imported as GenericOperator")
    core.remove_flatten(graph)
    dims = [list(x.shape) for x in inputs]
    try:
        if faithful:  # the bridge's one compile, its float32 exception included
            from ..bridge.graph import compile_with_own_dtypes

            compile_with_own_dtypes(graph, "cpu", dims, [getattr(core.dtype, x.dtype.name) for x in inputs],
                                    [x.dtype.name for x in inputs])
        else:
            graph.compile("cpu", core.dtype.float32, dims=dims)
        scheduler = core.SequentialScheduler(graph)
    except Exception as exc:  # noqa: BLE001
        raise AidgeRefused("compile", exc) from exc
    feeds = [core.Tensor(_c_order(x if faithful or not np.issubdtype(x.dtype, np.floating) else x.astype(np.float32)))
             for x in inputs]
    return graph, scheduler, feeds


def _aidge_values(folder: Path, inputs, faithful: bool, calls: int = 1) -> dict[str, Any]:
    """Every Aidge node's outputs after ``calls`` forwards of ``folder/model.onnx`` on the same inputs
    (node name -> (type, outputs) of the last); when a phase raises, ``{"error": (phase, node name or
    None, message)}``: the node is the one the scheduler was running
    (:func:`interop.bridge.runner.unfinished_node`)."""
    import onnx

    from ..bridge import runtime as rt
    from ..bridge.runner import unfinished_node

    with rt.quiet_aidge():
        try:
            _, scheduler, feeds = load_in_aidge(onnx.load(str(folder / "model.onnx")), inputs, faithful=faithful)
        except AidgeRefused as exc:
            cause = exc.cause if isinstance(exc.cause, BaseException) else RuntimeError(exc.cause)
            return {"error": ("compile", None, _one_line(cause))}
        for _ in range(max(1, calls)):
            try:
                scheduler.forward(True, feeds)
            except Exception as exc:  # noqa: BLE001
                node = unfinished_node(scheduler, "forward")
                return {"error": ("forward", node.name() if node is not None else None, _one_line(exc))}
        order = [n for n in scheduler.get_sequential_static_scheduling() if n.type() != "Producer"]
        values = {}
        for node in order:
            op = node.get_operator()
            outs = []
            for i in range(node.get_nb_outputs()):
                try:
                    outs.append(np.array(op.get_output(i), copy=True))
                except Exception:  # noqa: BLE001
                    outs.append(None)
            values[node.name()] = (node.type(), outs)
    return values


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
    from ..equivalence.isolation import run_isolated

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


def _single_node_model(proto, node, ort: dict[str, np.ndarray], data_names: set[str], around=()):
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
        ort = _ort_values(proto, dict(zip(data_inputs, inputs)))
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
    target = folder / "reduced"
    phase = meta.get("phase", "forward")
    want = phase_of((meta.get("repro") or {}).get("line"))
    tried = set()
    # the node alone, then with the nodes that feed it up to 1, 2, 3 steps back (at most 8 nodes)
    for depth in range(0, 4):
        around = _feeders(proto, node, depth)
        if len(around) + 1 > 8 or (depth and len(around) in tried):
            continue
        tried.add(len(around))
        try:
            model, names, values, expected = _single_node_model(proto, node, ort, set(data_inputs), around)
        except ValueError:
            continue
        shutil.rmtree(target, ignore_errors=True)
        grads = None
        if phase == "backward":
            grads = {"grad_outputs": [np.ones_like(e) if np.issubdtype(e.dtype, np.floating) else None
                                      for e in expected]}
        what = f"node {node.name or node.op_type!r}, {node.op_type}" + (
            f", and the {len(around)} node(s) feeding it" if around else "")
        settings = {"CASE": meta["case"] + f" (reduced to {what})", "WHAT": meta["failure"], "PHASE": phase,
                    "CALLS": meta["calls"], "RTOL": rtol, "ATOL": atol, "FAITHFUL": faithful, "DATA_INPUTS": names,
                    "N_OUTPUTS": len(expected), "PARAMS": [],
                    "GRAD_OUTPUTS": [k for k, g in enumerate((grads or {}).get("grad_outputs", [])) if g is not None]}
        _write_layout(target, model, names, values, expected, settings, grads)
        run = run_repro(target)
        result.update(node=node.name, op_type=node.op_type, nodes=len(around) + 1, how=how, repro=run)
        if _reproduces(run) and phase_of(run.get("line")) == want:
            result["kept"] = True
            if around:
                result["how"] = f"{how}, with the nodes feeding it up to {depth} step(s) back (the node alone does " \
                                "not fail the same way)"
            return result
    shutil.rmtree(target, ignore_errors=True)
    result.update(kept=False, nodes=1, why="the node alone, and with the nodes feeding it up to 3 steps back, does not "
                                           "fail the same way (state across calls, graph-level shape inference or "
                                           "memory: the full graph is the reproducer)")
    return result


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
    values = None
    try:
        values = _ort_values(proto, feeds)
    except Exception:  # noqa: BLE001 - onnx's reference evaluator, on a small graph
        if len(nodes) <= REFERENCE_MAX_NODES:
            try:
                values = _reference_values(proto, feeds)
            except Exception:  # noqa: BLE001 - then the dying prefix is the reproducer
                values = None
    if values is not None:
        for depth in range(0, 4):
            around = _feeders(proto, node, depth)
            if len(around) + 1 > 8:
                break
            try:
                model, names, vals, expected = _single_node_model(proto, node, values, set(data_inputs), around)
            except ValueError:
                break
            shutil.rmtree(target, ignore_errors=True)
            what = f"node {node.name or node.op_type!r}, {node.op_type}" + (
                f", and the {len(around)} node(s) feeding it" if around else "")
            settings = dict(base, CASE=meta["case"] + f" (reduced to {what})", DATA_INPUTS=names,
                            N_OUTPUTS=len(expected))
            _write_layout(target, model, names, vals, expected, settings)
            one = run_repro(target, timeout=30)
            if _dies(one):
                shutil.rmtree(prefix_dir, ignore_errors=True)
                return {"kept": True, "node": node.name, "op_type": node.op_type, "nodes": len(around) + 1,
                        "repro": one, "crashing": crashing,
                        "how": "the node whose prefix first kills the process" + (
                            f", with the nodes feeding it up to {depth} step(s) back" if around else " alone")
                        + ", fed the values " + ("onnxruntime" if "onnxruntime" in str(meta.get("export_check"))
                                                 and (meta.get("export_check") or {}).get("onnxruntime") == "ok"
                                                 else "the reference") + " gives it"}
        shutil.rmtree(target, ignore_errors=True)
    if found is None:
        return {"kept": False, "nodes": 1, "crashing": None,
                "why": "no prefix of the graph kills the process (memory corrupted across nodes): the full graph is "
                       "the reproducer"}
    prefix_dir.rename(target)
    return {"kept": True, "node": node.name, "op_type": node.op_type, "nodes": k, "repro": run, "crashing": crashing,
            "how": f"the graph's first {k} node(s): the shortest prefix that kills the process (the node alone, fed "
                   "the reference's values, does not, or no reference can compute them)"}


def _reference_values(proto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What :func:`_ort_values` gives, computed by onnx's reference evaluator (every node output
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


# ---------------------------------------------------------------------------------------------
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def bundle_folder(directory: Path, nodeid: str) -> Path:
    """The folder of a test's bundle in a run: ``reproducers/<test id, filename-safe>``; a long id is
    cut and given a hash of the whole, so that two tests never share one."""
    import hashlib

    slug = _SLUG.sub("_", nodeid.split("::", 1)[-1]).strip("_") or "test"
    if len(slug) > 120:
        slug = slug[:100] + "-" + hashlib.sha1(nodeid.encode()).hexdigest()[:12]
    return Path(directory) / "reproducers" / slug


def backward_divergence(folder: Path, rtol: float, atol: float) -> dict[str, Any] | None:
    """The first node, from the outputs back, whose input gradients Aidge computes wrongly, for a
    bundle with a backward (``test_data_set_0/grad_output_*.pb``): the bundle's graph imported and
    run forward then backward in Aidge (its output gradients the stored ones), and each node's
    input gradients compared with the float64 reference VJP of that ONNX node alone, given the
    input values and output gradients Aidge itself had there
    (:func:`interop.oracle.divergence.first_diverging_backward`; nodes over
    ``VJP_MAX_ELEMENTS`` skipped). An input that feeds several nodes is not compared: Aidge's
    gradient there is the sum over its consumers; when every node agrees, such a tensor whose
    gradient is not the sum of its consumers' references is returned instead
    (``gradient_sum``). None when all agree. The reduction
    calls it for a backward mismatch of several nodes that no forward value names
    (:func:`_backward_node`). Raises :class:`AidgeRefused` when Aidge cannot take the graph."""
    import onnx
    from onnx import numpy_helper

    from ..bridge import runtime as rt
    from ..oracle.divergence import first_diverging_backward

    proto = onnx.load(str(folder / "model.onnx"))
    data = folder / "test_data_set_0"
    initializers = {t.name for t in proto.graph.initializer}
    names = [i.name for i in proto.graph.input if i.name not in initializers]
    read = lambda f: numpy_helper.to_array(onnx.load_tensor(str(data / f)))  # noqa: E731
    inputs = [read(f"input_{i}.pb") for i in range(len(names))]
    consumers: dict[str, int] = {}
    for n in proto.graph.node:
        for name in set(n.input):
            consumers[name] = consumers.get(name, 0) + 1
    steps, types, shared = [], {}, {}
    with rt.quiet_aidge():
        graph, scheduler, feeds = load_in_aidge(onnx.load(str(folder / "model.onnx")), inputs)
        scheduler.forward(True, feeds)
        for k, (node, i) in enumerate(graph.get_ordered_outputs()):
            out = node.get_operator().get_output(i)
            grad = out.grad
            if list(grad.dims) != list(out.dims):
                grad.resize(list(out.dims))
            path = data / f"grad_output_{k}.pb"
            np.asarray(grad)[...] = read(path.name) if path.is_file() else 0
        scheduler.backward()
        for node in reversed(scheduler.get_sequential_static_scheduling()):
            onode = _onnx_node_for(proto, node.name())
            if node.type() == "Producer" or onode is None or onode.op_type != node.type() and \
                    len(onode.input) != node.get_operator().nb_inputs():
                continue  # a node Aidge made of several ONNX nodes has no one ONNX node to compare with
            op = node.get_operator()
            count = min(len(onode.input), op.nb_inputs())
            types[onode.name] = node.type()
            for i in range(min(len(onode.input), op.nb_inputs())):
                name = onode.input[i]
                if name and consumers.get(name, 0) > 1 and op.get_input(i) is not None:
                    entry = shared.setdefault(name, {"grad": np.array(op.get_input(i).grad, copy=True), "steps": []})
                    entry["steps"].append({"node": onode, "inputs": {k: np.array(op.get_input(j), copy=True)
                                                                     for j, k in enumerate(onode.input[:op.nb_inputs()])
                                                                     if k and op.get_input(j) is not None},
                                           "grad_outputs": [np.array(op.get_output(j).grad, copy=True)
                                                            for j in range(op.nb_outputs())]})
            steps.append({"node": onode,
                          "inputs": {onode.input[i]: np.array(op.get_input(i), copy=True) for i in range(count)
                                     if onode.input[i] and op.get_input(i) is not None},
                          "grad_outputs": [np.array(op.get_output(i).grad, copy=True) for i in range(op.nb_outputs())],
                          # a tensor feeding several nodes holds the sum of their gradients: not this node's alone
                          "grad_inputs": {onode.input[i]: np.array(op.get_input(i).grad, copy=True) for i in range(count)
                                          if onode.input[i] and op.get_input(i) is not None
                                          and consumers.get(onode.input[i], 0) == 1}})
    found = first_diverging_backward(steps, rtol, atol)
    if found is None:
        return _shared_gradient_sum(shared, rtol, atol)
    return {"onnx_node": found["onnx_node"], "op_type": found["op_type"], "aidge_type": types.get(found["onnx_node"]),
            "input": found["input"], "max_abs_diff": found["max_abs_diff"], "checked": found["checked"],
            "skipped": found["skipped"]}


def _shared_gradient_sum(shared: dict[str, dict], rtol: float, atol: float) -> dict[str, Any] | None:
    """Where every node's own gradients agree: the first tensor feeding several nodes whose Aidge
    gradient differs from the sum of its consumers' reference VJPs (a consumer's contribution, which
    the walk cannot compare alone, or the sum itself is wrong: it does not say which), as
    ``{"tensor", "consumers", "max_abs_diff", "gradient_sum": True}``; None when they agree or a
    consumer is over the bound."""
    from ..oracle.divergence import VJPTooLarge, gradient_differs, node_vjp

    for name, entry in shared.items():
        try:
            total = sum(node_vjp(s["node"], s["inputs"], s["grad_outputs"], wrt=[name])[name] for s in entry["steps"])
        except (VJPTooLarge, KeyError):
            continue
        actual = entry["grad"].astype(np.float64)
        if gradient_differs(actual, total, rtol, atol):
            diff = float(np.max(np.abs(actual - total))) if actual.shape == np.shape(total) else float("inf")
            return {"tensor": name, "consumers": [s["node"].name for s in entry["steps"]], "max_abs_diff": diff,
                    "gradient_sum": True}
    return None


def _backward_node(folder: Path, meta: dict[str, Any], rtol: float, atol: float) -> dict[str, Any] | None:
    """A backward mismatch's first diverging node by the per-node reference
    (:func:`backward_divergence`), as a record's ``first_diverging``, or its wrong gradient sum over
    a shared tensor's consumers (``gradient_sum``: no one node to name); None when it names neither or
    cannot run (a help, not a need: the bundle stays as it is)."""
    line = str((meta.get("repro") or {}).get("line") or "")
    if not line.startswith("DEFECT PRESENT: backward,") or not (folder / "test_data_set_0" / "grad_output_0.pb").is_file():
        return None  # the bundle's own script fails on a gradient (not a forward call, not a backward error)
    try:
        found = backward_divergence(folder, rtol, atol)
    except Exception:  # noqa: BLE001
        return None
    if found is None or found.get("gradient_sum"):
        return found  # a wrong sum over a tensor's consumers: no one node to name
    return {"onnx_node": found["onnx_node"], "op_type": found["op_type"], "aidge_type": found.get("aidge_type"),
            "line": f"backward: the first node, from the outputs back, whose gradient of input {found['input']!r} "
                    f"differs from a float64 reference of that node alone given Aidge's own output gradients "
                    f"there (max |diff| {found['max_abs_diff']:.3g})"}


def bundle_aidge_types(folder: Path) -> list[str] | None:
    """The Aidge operator types (Producers left out, sorted) of a bundle's graph as aidge_onnx
    imports it: the reduced graph when one was kept, else the full one. None when there is no
    graph or Aidge cannot import it (its log stays quiet). What names a row's Aidge operator where
    the record names none but its one-node graph's ONNX op (``Log`` is Aidge's ``Ln``)."""
    for model in (folder / "reduced" / "model.onnx", folder / "model.onnx"):
        if model.is_file() and not model.is_symlink():
            break
    else:
        return None
    try:
        if model.stat().st_size > 64_000_000:
            return None
        import onnx

        from ..bridge import runtime as rt

        with rt.quiet_aidge():
            graph = rt.aidge_onnx().convert_onnx_to_aidge(onnx.load(str(model)))
            return sorted({n.type() for n in graph.get_nodes()} - {"Producer"})
    except Exception:  # noqa: BLE001 - a name is a help, not a need
        return None


def record_fields(directory: Path, nodeid: str, record: dict[str, Any], log: str = "") -> dict[str, Any]:
    """What a failing test's record says of its reproducer (``reproducer``), of the first diverging
    node (``first_diverging``), and the attribution moved to the export when onnx's checker or
    onnxruntime refuses the graph that Aidge was given."""
    folder = bundle_folder(directory, nodeid)
    meta_path = folder / "meta.json"
    if record.get("category") in ("crash", "hang") and not meta_path.is_file() and (folder / PENDING).is_dir():
        try:
            complete_pending(directory, nodeid, record, log)
        except Exception:  # noqa: BLE001 - then no bundle, said below
            pass
    if not meta_path.is_file() or meta_path.is_symlink():
        if record.get("category") in ("crash", "hang", "killed"):
            why = "the case's process died before it could write one (crash or time-out)"
        else:
            why = "no Aidge graph was built for this case (the failure came before or outside wrap)"
        return {"reproducer": {"written": False, "why": why}}
    try:
        if meta_path.stat().st_size > 4_000_000:
            raise ValueError("meta.json over 4 MB")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if not isinstance(meta, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:
        return {"reproducer": {"written": False, "why": f"{meta_path}: unreadable ({exc})"}}
    reduced = meta.get("reduced") if isinstance(meta.get("reduced"), dict) else {}
    check = dict(meta["export_check"]) if isinstance(meta.get("export_check"), dict) else {}
    if check:
        check["valid"] = export_valid(check)  # the rule of this version, whatever wrote the bundle
    rel = folder.relative_to(directory).as_posix()
    out: dict[str, Any] = {"reproducer": {
        "written": True, "path": rel, "reproduces": bool(meta.get("reproduces")),
        "line": (meta.get("repro") or {}).get("line"), "nodes": meta.get("nodes"),
        "reduced": f"{rel}/reduced" if reduced.get("kept") else None,
        "reduced_nodes": reduced.get("nodes") if reduced.get("kept") else None,
        "reduced_why": None if reduced.get("kept") else reduced.get("why"),
        "full_removed": meta.get("full_removed"),
        "export_valid": check.get("valid"), "onnxruntime_matches_torch": check.get("onnxruntime_matches_torch")}}
    op = _single_op(folder / "reduced" if reduced.get("kept") else folder)
    if not op and isinstance(reduced.get("crashing"), dict):  # a crash: the node whose prefix first dies
        op = reduced["crashing"].get("op_type")
    if op:
        out["reproducer"]["op"] = op
    said = meta.get("aidge_said")
    if isinstance(said, list) and said:
        out["reproducer"]["aidge_said"] = [str(s) for s in said[:8]]
    if meta.get("import_kind") in ("converter failure", "no converter"):
        out["reproducer"]["import_kind"] = meta["import_kind"]
    if isinstance(reduced.get("first_diverging"), dict):
        out["first_diverging"] = reduced["first_diverging"]
    # a crash or a hang stays Aidge's (memory-unsafe: a graph onnx refuses is to be refused, not to kill
    # the process), as the table triage and the plain run say; before 2026-12-07 a findings run alone
    # moved them to the export (index_select of a 0-d tensor: Gather's SIGSEGV, 4 cases)
    from ..oracle.attribution import invalid_graph_excuses

    if check.get("valid") is False and record.get("attribution") == "aidge" \
            and invalid_graph_excuses(record.get("category")):
        refusal = check.get("checker") if check.get("checker") != "ok" else check.get("onnxruntime")
        out["attribution"] = "export"
        out["attribution_reason"] = f"the exported graph is invalid, so Aidge is not blamed: {refusal}"
    return out


def bundle_facts(folder: Path) -> dict[str, Any]:
    """What a bundle folder (a bundle, or its ``reduced/``) says of its *own* graph, read from
    ``meta.json`` (the parent's for ``reduced/``): ``reduced``, ``line`` (the verdict its own
    ``repro.py`` printed when it was written: for ``reduced/``, ``meta["reduced"]["repro"]``, not the
    full graph's), ``expected_from`` (whose values ``test_data_set_0/output_K.pb`` hold), ``versions``
    (the packages of the process that wrote it), ``calls``. ``{}`` when there is no readable meta.json."""
    folder = Path(folder)
    reduced = folder.name == "reduced" and (folder.parent / "meta.json").is_file()
    path = (folder.parent if reduced else folder) / "meta.json"
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 4_000_000:
            return {}
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(meta, dict):
        return {}
    red = meta.get("reduced") if isinstance(meta.get("reduced"), dict) else {}
    own = (red if reduced else meta).get("repro")
    if reduced:
        expected_from = "onnx's reference evaluator" if red.get("reference") else "onnxruntime"
    elif meta.get("expected_from") == ONNX_TEST_EXPECTED:
        expected_from = ONNX_TEST_EXPECTED
    elif meta.get("expected_from"):
        expected_from = "onnxruntime"
    else:
        expected_from = "torch"
    check = meta.get("export_check") if isinstance(meta.get("export_check"), dict) else {}
    return {"reduced": reduced, "line": (own or {}).get("line") if isinstance(own, dict) else None,
            "expected_from": expected_from, "calls": meta.get("calls"),
            "versions": meta.get("versions") if isinstance(meta.get("versions"), dict) else {},
            "onnxruntime_matches_torch": check.get("onnxruntime_matches_torch"),
            "factory": meta.get("factory") if isinstance(meta.get("factory"), dict) else None}


def _single_op(folder: Path) -> str | None:
    """The ONNX op of a bundle's graph when it has one node (what the ledger names a defect by when
    Aidge's message names no operator); None otherwise or when the graph cannot be read."""
    model = folder / "model.onnx"
    try:
        if model.is_symlink() or not model.is_file() or model.stat().st_size > 64_000_000:
            return None
        import onnx

        nodes = onnx.load(str(model), load_external_data=False).graph.node
    except Exception:  # noqa: BLE001 - a name is a help, not a need
        return None
    return nodes[0].op_type if len(nodes) == 1 else None


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


# ---------------------------------------------------------------------------------------------
PENDING = ".pending"


def write_pending(state, entry) -> None:
    """What the parent needs to finish the bundle if the case's process dies: the graph (once per
    wrap), the inputs (the example inputs, then the first call's), the compile mode. Written by the
    case child before Aidge runs; removed when the case ends without dying."""
    from ..bridge.onnx_export import unused_graph_inputs

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
        outputs = [np.asarray(o) for o in session.run(None, _ort_feeds(session, dict(zip(data_inputs, inputs))))]
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
