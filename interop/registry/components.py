"""Which Aidge library a defect lives in, decided from evidence, never from the defect's kind.

- A failure with Aidge's own words: the library whose binary (or Python source) holds the
  longest fixed fragment of the message. Measured 2026-12-06 (Aidge 0.10.1, ``strings``):
  "backward() not implemented yet for operator of type X" is a string of ``lib_aidge_core.so``,
  not of ``lib_aidge_backend_cpu.so``, though the ledger used to file every "no backward" against
  the CPU backend.
- No words: a wrong shape is aidge_core's (an operator's output dims are computed by its
  ``forwardDims``, in aidge_core, whatever the backend); a wrong value or a crash in a kernel,
  the library that runs the operator's kernel on that backend.
- An ONNX op without an importer: aidge_onnx (whose converters are one Python file per op).

Reads the installed packages' files (found with ``importlib.util.find_spec``, never imported);
the bytes are read once per process. Never prints.
"""
from __future__ import annotations

import functools
import importlib.util
import re
import threading
from pathlib import Path

__all__ = ["component_of", "LIBRARIES", "KERNEL_LIBRARY"]

#: the Aidge distributions a message can come from, in the order they are searched (the lowest
#: library first: a string both hold is the core's), with the files that hold their strings
LIBRARIES: dict[str, tuple[str, ...]] = {
    "aidge_core": ("*.so",),
    "aidge_backend_cpu": ("*.so",),
    "aidge_backend_cuda": ("*.so",),
    "aidge_learning": ("*.so",),
    "aidge_onnx": ("**/*.py",),
    "aidge_export_cpp": ("**/*.py", "**/*.hpp", "**/*.jinja"),
}
#: the backend -> the library that runs its kernels
KERNEL_LIBRARY = {"cpu": "aidge_backend_cpu", "cuda": "aidge_backend_cuda", "export_cpp": "aidge_export_cpp"}

#: what varies in a message: quoted names, bracketed lists, words holding digits, the bridge's prefix
_VARYING = re.compile(r"'[^']*'|\"[^\"]*\"|\[[^\]]*\]|\([^)]*\)|\S*\d\S*|<[^>]*>|\{[^}]*\}")
_BRIDGE_PREFIX = re.compile(r"^(?:crash[^:]*:\s*|Aidge \w+ failed \([^)]*\):\s*|[A-Za-z]+Error:\s*)+")
_MIN_FRAGMENT = 14
#: the suite's own words for a process that died or hung (interop.equivalence.isolation): no
#: Aidge library said them, so they are never looked for in Aidge's files ("during forward"
#: is in aidge_export_cpp's templates: before 2026-12-07 every SIGSEGV in a cpu forward was
#: filed against aidge_export_cpp)
_SUITE_WORDS = re.compile(r"process killed by SIG\w+|process exited with|timed out after|hang(?:s|ed)? (?:in|during)",
                          re.IGNORECASE)
_LOCK = threading.Lock()


@functools.lru_cache(maxsize=None)
def _blobs(library: str) -> tuple[bytes, ...]:
    with _LOCK:
        spec = importlib.util.find_spec(library)
        if spec is None or not spec.origin:
            return ()
        root = Path(spec.origin).parent
        files = sorted({p for pattern in LIBRARIES[library] for p in root.glob(pattern) if p.is_file()})
        return tuple(p.read_bytes() for p in files)


def _fragments(message: str) -> list[str]:
    text = _BRIDGE_PREFIX.sub("", " ".join(str(message or "").split()))
    pieces = [p.strip(" :;,.-") for p in _VARYING.split(text)]
    return sorted({p for p in pieces if len(p) >= _MIN_FRAGMENT}, key=len, reverse=True)


def _shrunk(fragment: str) -> list[str]:
    """The fragment, then the fragment with words dropped from its end, then from its start (a
    format string's ``{}`` sits where the message has an operator's name), longest first."""
    words = fragment.split(" ")
    out = [" ".join(words[:k]) for k in range(len(words), 0, -1)] + [" ".join(words[k:]) for k in range(1, len(words))]
    return [f for f in out if len(f) >= _MIN_FRAGMENT]


@functools.lru_cache(maxsize=4096)
def _holder(message: str) -> tuple[str, str] | None:
    tries = sorted({s for fragment in _fragments(message) for s in _shrunk(fragment)}, key=len, reverse=True)
    for fragment in tries:
        needle = fragment.encode()
        for library in LIBRARIES:
            if any(needle in blob for blob in _blobs(library)):
                return library, fragment
    return None


def component_of(kind: str, message: str, *, backend: str = "cpu", onnx_op: str | None = None) -> tuple[str, str]:
    """``(component, evidence)``: the Aidge library where the code that fails lives, and one
    line saying how that was decided."""
    if kind in ("no importer", "converter failure"):
        return "aidge_onnx", ("aidge_onnx imports ONNX nodes (one converter per op)"
                              + (f"; ONNX op {onnx_op}" if onnx_op else ""))
    found = _holder(message) if message and not _SUITE_WORDS.search(message) else None
    if kind == "no kernel":
        # the registrar's words are aidge_core's; the kernel it does not find is the backend's to register
        library = KERNEL_LIBRARY.get(backend, "aidge_core")
        said = f" (the message {found[1][:60]!r} is aidge_core's registrar)" if found else ""
        return library, f"no {backend} kernel is registered for the key: kernels are registered by {library}{said}"
    if found is not None:
        library, fragment = found
        return library, f"the message's text {fragment[:80]!r} is in {library}'s installed files"
    if kind == "wrong shape" and backend != "export_cpp":
        return "aidge_core", "a wrong output shape: output dims are computed by the operator's forwardDims, in aidge_core"
    library = KERNEL_LIBRARY.get(backend, "aidge_core")
    if message and _SUITE_WORDS.search(message):
        return library, f"the process died or hung with no message of Aidge's: the {backend} backend that ran the operator"
    if message:
        return library, f"no installed Aidge file holds the message's text: the {backend} backend that ran it"
    return library, f"no message ({kind}): the library that runs the operator's {backend} kernel"
