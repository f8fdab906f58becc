"""The ``export_cpp`` backend, build side: Aidge's generated C++ (aidge-export-cpp 0.10.1)
for an exported torch model, compiled into a shared library and cached.

:func:`build_export` takes the in-memory ONNX export of a model (:mod:`.onnx_export`) and
its example inputs and returns a :class:`CompiledExport` (the library's path, the export's
input and output descriptions, generation and compile seconds). Everything is cached under
:func:`cache_root` by a hash of the ONNX bytes, the input shapes and dtypes, the layout mode
(``dformat``), the aidge-export-cpp version and the compiler command: a model is generated
and compiled once per machine, and every later ``wrap`` of it loads the library.

How (facts in docs/aidge-notes.md, "Aidge C++ export"):

1. aidge_onnx imports the ONNX model (Flatten removed: it has no export kernel); each 4-D
   input is labelled NCHW (else the export reads it as NHWC).
2. ``aidge_core.export_utils.export(graph, ExportConfig(target="host", dformat=...,
   compile=False), input_tensors)`` generates the CMake project in a build directory of
   the cache; it also writes ``exported_graph.mmd`` into the *current directory*, so the
   current directory is the build directory for the duration of the call (and restored).
   Its progress bars and Aidge's log lines are captured, never printed.
3. The generated network (``dnn/src/forward.cpp`` and the weight arrays) is compiled as one
   translation unit into ``libmodel.so`` with the generated project's own flags
   (``-O3 -ffast-math -march=native``): one compiler process (a single core), about 5x less
   CPU than the per-file CMake build, because every weight file includes ``<complex>``.
   ``main.cpp`` and the embedded input are left out: the library exports ``model_forward``.

A failure of generation or compilation is an :class:`~interop.errors.AidgeError` of phase
``compile`` that names the Aidge node(s) and the torch-side ONNX node(s) (``/conv1/Conv``:
the torch module path); failures are cached too (same inputs, same failure).
"""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import Sequence
import importlib

from ..errors import AidgeError, AidgeNotImplementedError, aidge_error_from
from . import runtime as rt
from .onnx_export_graph import ExportedModel
from ..env import read
from .graph import _import_graph

__all__ = ["CACHE_ENV", "CXX_ENV", "DFORMATS", "DEFAULT_DFORMAT", "CXXFLAGS", "CompiledExport", "build_export",
           "cache_root"]

#: overrides the cache directory (default ``~/.cache/aidge-torch-interop/export_cpp``)
CACHE_ENV = "INTEROP_EXPORT_CACHE"
#: the C++ compiler (default ``g++``)
CXX_ENV = "CXX"
#: layout modes: ``torch`` asks the export for torch's channel-first layout at its boundary
#: (``dformat`` ``nchw`` / ``ncw`` / ``nc`` after the first input's rank; the export inserts
#: transposes around its channel-last kernels); ``default`` lets the export choose
#: (``dformat=None``: channel-last at the boundary), and the bridge transposes there itself.
#: Inputs are labelled with torch's layout in both modes.
DFORMATS = ("torch", "default")
#: the layout policy of the backend (docs/backend-export-cpp.md)
DEFAULT_DFORMAT = "torch"
#: rank -> torch's layout name in Aidge's ``dformat`` enum
TORCH_FORMATS = {2: "nc", 3: "ncw", 4: "nchw"}
#: the generated CMakeLists.txt's flags for GNU/Clang (what a user's build uses)
CXXFLAGS = ("-O3", "-ffast-math", "-march=native", "-std=c++17")

_BUILD_LOCK = threading.Lock()  # os.chdir is process-wide


@dataclasses.dataclass(frozen=True)
class CompiledExport:
    """A compiled export: ``library`` exports ``model_forward(in..., out**...)``."""

    key: str
    directory: Path
    library: Path
    #: the manifest's ``inputs`` / ``outputs``: ``{"name", "dtype", "size", "dims"}`` in the
    #: order of ``model_forward``'s parameters
    inputs: list[dict]
    outputs: list[dict]
    #: seconds spent generating and compiling when it was built (not this call)
    generation_s: float
    compile_s: float
    #: the exported (adapted) graph's nodes: ``[name, type]``
    nodes: list[list[str]]
    #: the layout of each output at the boundary, from the layer headers (``NCHW``, ``NHWC``...)
    output_formats: list[str | None]
    #: True when this call found it in the cache
    cached: bool = False


def cache_root() -> Path:
    """``$INTEROP_EXPORT_CACHE``, else ``$XDG_CACHE_HOME`` or ``~/.cache``, then
    ``aidge-torch-interop/export_cpp``."""
    if (cache := read(CACHE_ENV)) is not None:
        return cache.expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "aidge-torch-interop" / "export_cpp"


def _compiler() -> str:
    return os.environ.get(CXX_ENV, "").strip() or "g++"


def _cache_key(exported: ExportedModel, example_inputs: Sequence, dformat: str) -> str:
    h = hashlib.sha256()
    h.update(exported.proto.SerializeToString(deterministic=True))
    for x in example_inputs:
        h.update(repr((tuple(x.shape), str(x.dtype))).encode())
    h.update(repr((dformat, metadata.version("aidge_export_cpp"), metadata.version("aidge_core"),
                   _compiler(), CXXFLAGS)).encode())
    return h.hexdigest()[:32]


def build_export(exported: ExportedModel, example_inputs: Sequence, *, dformat: str = DEFAULT_DFORMAT,
                 verbose: bool = False) -> CompiledExport:
    """The compiled export of ``exported`` at the shapes of ``example_inputs`` (torch CPU
    tensors), from the cache or built now. Raises :class:`AidgeError` (phase ``compile``)."""
    if dformat not in DFORMATS:
        raise ValueError(f"unknown export layout mode {dformat!r}: expected one of {DFORMATS}")
    key = _cache_key(exported, example_inputs, dformat)
    root = cache_root()
    final = root / key[:2] / key
    final.parent.mkdir(parents=True, exist_ok=True)
    with open(final.parent / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process building the same model waits for it
        found = _load_cached(final)
        if found is not None:
            return found
        return _build(exported, example_inputs, dformat, key, final, verbose)


def _load_cached(final: Path) -> CompiledExport | None:
    meta_path = final / "meta.json"
    if not meta_path.is_file():
        return None
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if "error" in meta:
        err = meta["error"]
        cls = AidgeNotImplementedError if err.get("not_implemented") else AidgeError
        raise cls("compile", err["message"], operator=err.get("operator"), node=err.get("node"))
    return _compiled(final, meta, cached=True)


def _compiled(final: Path, meta: dict, cached: bool) -> CompiledExport:
    return CompiledExport(key=meta["key"], directory=final, library=final / "libmodel.so", inputs=meta["inputs"],
                          outputs=meta["outputs"], generation_s=meta["generation_s"], compile_s=meta["compile_s"],
                          nodes=meta["nodes"], output_formats=meta["output_formats"], cached=cached)


def _build(exported, example_inputs, dformat, key, final: Path, verbose: bool) -> CompiledExport:
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=final.parent))
    try:
        try:
            meta = {"key": key, "dformat": dformat}
            t0 = time.perf_counter()
            nodes, manifest = _generate(exported, example_inputs, dformat, tmp / "export", verbose)
            meta["generation_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            _compile_library(tmp / "export", tmp / "libmodel.so", nodes, exported)
            meta["compile_s"] = time.perf_counter() - t0
            meta.update(inputs=manifest["inputs"], outputs=manifest["outputs"], nodes=nodes,
                        output_formats=[_output_format(tmp / "export", o["name"]) for o in manifest["outputs"]])
        except AidgeError as exc:
            meta = {"key": key, "error": {"message": exc.aidge_message, "operator": exc.operator, "node": exc.node,
                                          "not_implemented": isinstance(exc, AidgeNotImplementedError)}}
            _publish(tmp, final, meta)
            raise
        _publish(tmp, final, meta)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _compiled(final, meta, cached=False)


def _publish(tmp: Path, final: Path, meta: dict) -> None:
    (tmp / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)


# -- generation -----------------------------------------------------------------------------
def _torch_nodes(exported: ExportedModel) -> str:
    """The ONNX nodes of the export, ``/conv1/Conv (Conv)``: what the torch model became."""
    return ", ".join(f"{n.name} ({n.op_type})" for n in exported.proto.graph.node)


def _generate(exported: ExportedModel, example_inputs, dformat: str, folder: Path, verbose: bool):
    core = rt.aidge_core()
    export_utils = importlib_export_utils()
    import aidge_export_cpp  # noqa: F401  (registers the export_cpp kernels)

    with rt.quiet_aidge(verbose):
        graph = _import_graph(exported)
    tensors = []
    for x in example_inputs:
        t = core.Tensor(x.detach().cpu().contiguous().numpy())
        if x.dim() in TORCH_FORMATS:  # torch's channel-first layout (unlabelled: read as channel-last)
            t.set_data_format(getattr(core.dformat, TORCH_FORMATS[x.dim()]), False)
        tensors.append(t)
    config = export_utils.ExportConfig(
        target="host", export_folder=str(folder), dtype="float32", cuda=False,
        dformat=TORCH_FORMATS.get(example_inputs[0].dim()) if dformat == "torch" else None, compile=False,
        application=export_utils.ExportApplication(kind="output"))
    captured = io.StringIO()
    before = [(n.name(), n.type()) for n in graph.get_nodes()]
    with _BUILD_LOCK, _in_directory(folder.parent), rt.quiet_aidge(verbose), _no_memory_plot(), \
            contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
        try:
            export_utils.export(graph, config, input_tensors=tensors)
        except Exception as exc:
            raise _generation_error(exc, graph, before, exported, captured.getvalue()) from exc
    manifest = json.loads((folder / ".aidge-export.json").read_text(encoding="utf-8"))
    nodes = sorted([n.name(), n.type()] for n in graph.get_nodes())
    return nodes, manifest


def importlib_export_utils():
    module = importlib.import_module("aidge_core.export_utils")
    module.ExportConfig = importlib.import_module("aidge_core.export_utils.config").ExportConfig
    module.ExportApplication = importlib.import_module("aidge_core.export_utils.artifact").ExportApplication
    return module


@contextlib.contextmanager
def _no_memory_plot():
    """The export draws a memory-occupancy plot (``stats/memory_info.png``, matplotlib) that
    the generated code does not use: 1.2 s of the 1.7 s a one-operator generation takes
    (measured). Left out while the export runs (``aidge_core.mem_info.log_meminfo``; the
    text summary ``stats/memory_info.txt`` is still written)."""
    import aidge_core.mem_info as mem_info

    original = mem_info.log_meminfo
    def no_plot(mem_manager, path, *args, **kwargs):
        Path(path).parent.mkdir(parents=True, exist_ok=True)  # what the plot did besides drawing

    mem_info.log_meminfo = no_plot
    try:
        yield
    finally:
        mem_info.log_meminfo = original


@contextlib.contextmanager
def _in_directory(path: Path):
    """The export writes ``exported_graph.mmd`` into the current directory: make it ``path``."""
    previous = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


def _generation_error(exc: BaseException, graph, before, exported: ExportedModel, log: str) -> AidgeError:
    """Name the Aidge node the export stopped at (its progress bar's last ``Processing
    node: <name>[<type>]``) or, failing that, every node; and the torch-side ONNX nodes."""
    message = str(exc).strip() or type(exc).__name__
    last = None
    for line in log.replace("\r", "\n").splitlines():
        if "Processing node: " in line:
            last = line.split("Processing node: ", 1)[1].split(", with backend")[0].strip()
    node = operator = None
    # "No implementation found for node Exp[Exp]", "... for node _1_Conv_0 (of type ConvDepthWise2D)"
    named = re.search(r"node (\S+)\[(\w+)\]", message) or re.search(r"node (\S+) \(of type (\w+)\)", message)
    computing = [(n, t) for n, t in before if t not in ("Producer", "Identity")]
    if named:
        node, operator = named.groups()
    elif last and "[" in last:
        node, operator = last[:-1].split("[", 1) if last.endswith("]") else (last, None)
    elif len(computing) == 1:  # a one-operator graph: that operator
        node, operator = computing[0]
    where = (f"at Aidge node {node!r} ({operator})" if node else
             "in the graph of nodes " + ", ".join(f"{n} ({t})" for n, t in sorted(before)))
    text = (f"aidge-export-cpp generation failed: {message} [{where}; the torch model exported as ONNX nodes "
            f"{_torch_nodes(exported)}]")
    return aidge_error_from(RuntimeError(text), "compile", node=node, operator=operator)


# -- compilation ----------------------------------------------------------------------------
def _compile_library(folder: Path, library: Path, nodes, exported: ExportedModel) -> None:
    sources = [folder / "dnn" / "src" / "forward.cpp", *sorted((folder / "dnn" / "src").rglob("parameters/*.cpp"))]
    unity = folder / "unity_build.cpp"
    unity.write_text("".join(f'#include "{s}"\n' for s in sources), encoding="utf-8")
    command = [_compiler(), *CXXFLAGS, "-shared", "-fPIC", "-w", f"-I{folder / 'dnn'}",
               f"-I{folder / 'dnn' / 'include'}", f"-I{folder}", str(unity), "-o", str(library)]
    try:
        proc = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AidgeError("compile", f"cannot run the C++ compiler ({' '.join(command[:1])}): {exc}") from exc
    if proc.returncode != 0:
        first = next((line for line in proc.stderr.splitlines() if "error" in line), proc.stderr[-500:])
        node = next((name for name, _ in nodes if name in first), None)
        raise AidgeError("compile", f"the generated C++ does not compile ({_compiler()} exit {proc.returncode}): "
                         f"{first.strip()}; the torch model exported as ONNX nodes {_torch_nodes(exported)}",
                         node=node)


def _output_format(folder: Path, name: str) -> str | None:
    """The layout the export gives output ``name`` (``<NAME>_DEV_FMT`` in its layer header)."""
    needle = f"{name.upper()}_DEV_FMT"
    for header in (folder / "dnn" / "include" / "layers").glob("*.h"):
        for line in header.read_text(encoding="utf-8", errors="replace").splitlines():
            if needle in line and line.lstrip().startswith("#define"):
                return line.split()[-1].rsplit("::", 1)[-1].strip()
    return None
