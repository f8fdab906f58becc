"""Exceptions raised by the interop library.

Every Aidge failure is re-raised as an :class:`AidgeError` subclass that names the
Aidge operator (when it can be found in the message) and the phase it happened in
(``export``, ``import``, ``compile``, ``forward``, ``backward``, ``step``), and keeps
Aidge's own text, so reports can quote it verbatim.
"""
from __future__ import annotations

import re

from .registry.identify import identify

__all__ = [
    "InteropError",
    "AidgeError",
    "AidgeNotImplementedError",
    "UnsupportedOperatorError",
    "ExportError",
    "TracingError",
    "StatefulModelError",
    "ShapeSpecializedError",
    "CudaUnavailableError",
    "BackwardNotApplicableError",
    "NotComparableError",
    "AidgeCrash",
    "AidgeCudaKernelImageError",
    "OutputShapeError",
    "aidge_error_from",
    "KERNEL_IMAGE_RE",
    "NOT_IMPLEMENTED_RE",
    "EXTERNAL_SIGNALS",
    "BACKWARD_NOT_IMPLEMENTED_RE",
    "GENERIC_OPERATOR_RE",
    "aidge_category",
]


class InteropError(Exception):
    """Base class of every error raised by this library.

    ``category``: the finding's category (:data:`interop.categories.CATEGORY_TABLE`)
    where the error knows it, decided here, where it is raised, from its typed fields; the
    records (:mod:`interop.records`) read it, never the message. None: the error does not say
    (the records then fall back on :func:`interop.reporting.categorize` of its text).
    """

    category: str | None = None


class ExportError(InteropError):
    """torch.onnx.export failed for the model (phase ``export``). ``exporter``: the route
    that failed (``"torchscript"`` or ``"dynamo"``; None when not torch's exporter), and
    ``failed_routes`` (route -> torch's error) when several were tried."""

    category = "export_error (test strategy)"
    phase = "export"

    def __init__(self, *args, exporter: str | None = None):
        super().__init__(*args)
        self.exporter = exporter
        self.failed_routes: dict[str, str] = {}


class TracingError(ExportError):
    """The export's trace depends on input values: the graph would be right for the example
    input only. ``locations``: ``(file, line, torch's warning)`` of each dependency."""

    def __init__(self, message: str, locations=()):
        self.locations = list(locations)
        super().__init__(message)


class StatefulModelError(ExportError):
    """The model's forward updates its own buffers (a call counter, a running estimate outside a
    normalisation layer): its exported graph holds their values at export time, so every later call
    would differ from torch's, silently. Refused at ``wrap``, whatever the route (``buffers``: names)."""

    def __init__(self, message: str, buffers=(), exporter: str | None = None):
        super().__init__(message, exporter=exporter)
        self.buffers = list(buffers)


class ShapeSpecializedError(InteropError, ValueError):
    """An AidgeModule was called with input shapes for which the model's ONNX graph differs
    from the one it was wrapped with (the model bakes a shape into its graph, e.g.
    ``x.view(x.size(0), -1)``): running Aidge would give wrong shapes or corrupt memory."""

    category = "export_error (test strategy)"


class CudaUnavailableError(InteropError, RuntimeError):
    """The CUDA backend was asked for but CUDA or aidge_backend_cuda is missing."""


class BackwardNotApplicableError(InteropError, NotImplementedError):
    """Training asked of a forward-only backend (``export_cpp``: Aidge's generated C++ has
    no backward and no training mode). Not an Aidge defect: the phase does not apply."""


class NotComparableError(InteropError, ValueError):
    """torch's own call fails on the inputs as the check feeds them (fresh copies that carry
    their values, not their memory layout): the callable depends on more than the values
    (``as_strided`` on a view into a larger storage), which an ONNX graph cannot express. No
    verdict on Aidge; a problem of the case (category ``not_comparable (test strategy)``)."""

    category = "not_comparable (test strategy)"


class AidgeError(InteropError, RuntimeError):
    """An error raised by Aidge, with the phase and the operator it concerns.

    ``attribution``: None (Aidge's, by its category), or ``"export"`` when the graph Aidge was given
    is invalid ONNX (onnx's full checker refuses it: :func:`interop.bridge.export_validity.blame_invalid_export`),
    with ``attribution_reason`` saying so."""

    attribution: str | None = None
    attribution_reason: str | None = None

    def __init__(self, phase: str, message: str, operator: str | None = None, node: str | None = None):
        self.phase = phase
        self.operator = operator
        self.node = node
        self.aidge_message = message
        where = []
        if operator:
            where.append(f"operator {operator}")
        if node:
            where.append(f"node {node!r}")
        loc = f" ({', '.join(where)})" if where else ""
        super().__init__(f"Aidge {phase} failed{loc}: {message}")

    @property
    def category(self) -> str:
        """From the class and the phase (the same rules as :func:`interop.reporting.categorize`
        applies to the text, with this module's Aidge message patterns)."""
        return aidge_category(self.phase, self.aidge_message,
                              not_implemented=isinstance(self, AidgeNotImplementedError))

    @property
    def defect(self) -> dict | None:
        """Which known Aidge defect this is, as ``verify``, ``check``, the records and the ledger
        name it (:func:`interop.registry.identify.identify`: ``{"id", "title", "component",
        "evidence", "registered"}``); None when the graph Aidge was given is at fault."""
        if self.attribution == "export":
            return None

        return identify({"category": self.category, "phase": self.phase,
                         "error": (str(self.aidge_message).strip().splitlines() or [""])[0],
                         "aidge_operator": self.operator})


class AidgeNotImplementedError(AidgeError, NotImplementedError):
    """Aidge has no implementation of an operator for this phase/backend."""


class UnsupportedOperatorError(AidgeError):
    """An ONNX node imported as a GenericOperator: Aidge has no native operator for it."""

    category = "unsupported_operator"


class AidgeCudaKernelImageError(AidgeError):
    """Aidge's own CUDA kernels are not compiled for this GPU ("no kernel image is
    available for execution on the device"): aidge-backend-cuda 0.10.1 ships sm_52 code
    only. A packaging defect of Aidge, reported in category ``cuda_kernel_image``, never
    as a numerical mismatch."""

    category = "cuda_kernel_image"


class OutputShapeError(AidgeError):
    """Aidge returned an output whose shape is not the one torch gives for these input shapes
    (category ``output_shape_differs``): raised before the output reaches the caller, never a
    wrong-sized tensor. Seen on 0.10.1 with sizes Aidge kept from an earlier call."""

    category = "output_shape_differs"


class AidgeCrash(AidgeError):
    """The process running Aidge died (a signal such as SIGSEGV/SIGABRT, an abrupt exit or
    a timeout) instead of raising: see :func:`interop.equivalence.isolation.run_isolated`.

    ``str(e)`` starts with ``crash: process killed by SIGABRT during compile`` (the phase
    comes from the Python stack of the dying process), followed by that stack.
    ``.signal`` is the signal name (``"SIGABRT"``) or None for an exit without a signal;
    ``.timed_out`` is True when the process was killed for running too long.
    """

    def __init__(self, phase: str, message: str, *, signal: str | None = None,
                 timed_out: bool = False, traceback: str = "", operator: str | None = None):
        self.phase = phase
        self.operator = operator
        self.node = None
        self.aidge_message = message
        self.signal = signal
        self.timed_out = timed_out
        self.traceback = traceback
        text = f"{message}\n{traceback.rstrip()}" if traceback.strip() else message
        InteropError.__init__(self, text)

    @property
    def category(self) -> str:
        """``hang`` (killed at the case timeout), ``killed`` (a signal from outside: SIGKILL,
        SIGTERM, SIGHUP, SIGINT, never what Aidge raises itself; the OOM killer, a user, CI),
        else ``crash``."""
        if getattr(self, "timed_out", False):
            return "hang"
        if getattr(self, "signal", None) in EXTERNAL_SIGNALS:
            return "killed"
        return "crash"


# Patterns of Aidge 0.10.1 messages that name the operator type.
_OPERATOR_PATTERNS = (
    re.compile(r"Backward not yet implemented for ([\w<>]+)"),
    re.compile(r"backward\(\) not implemented yet for operator of type (\w+)"),
    re.compile(r"[Nn]o (?:available |registered )?(?:implementation|backend) .*?for (?:operator )?(?:type )?\"?(\w+)"),
    re.compile(r"(\w+)Op(?:::|Impl)"),
    re.compile(r"operator of type (\w+)"),
    re.compile(r"Operator (\w+)"),
)

# The Aidge messages that tell what kind of failure it is: the one definition of each, read by
# aidge_error_from (the class of the error), interop.categories (the category of a
# failure message) and the pytest plugin (a cuda_kernel_image XFAIL).
#: Aidge's CUDA kernels are not compiled for this GPU (a packaging defect)
KERNEL_IMAGE_RE = re.compile(r"no kernel image is available|invalid device function|CUDA_ERROR_NO_BINARY_FOR_GPU"
                             r"|no binary for GPU|AidgeCudaKernelImageError", re.I)
#: Aidge has no implementation of the operator (or of its dtype, or its backward) on the backend
NOT_IMPLEMENTED_RE = re.compile(r"not (?:yet )?implemented|[Nn]o (?:available |registered )?(?:implementation|kernel)"
                                r"|missing .*impl|missing or invalid registrar key|not yet supported", re.I)


#: signals a process gets from outside (a user, CI, the OOM killer), never from a fault of its own:
#: a process they end was killed, it did not crash
EXTERNAL_SIGNALS = ("SIGKILL", "SIGTERM", "SIGHUP", "SIGINT")
#: Aidge has no backward for the operator
BACKWARD_NOT_IMPLEMENTED_RE = re.compile(r"[Bb]ackward not yet implemented|backward\(\) not implemented yet")
#: aidge_onnx imported the node as a GenericOperator (no native Aidge operator)
GENERIC_OPERATOR_RE = re.compile(r"imported as GenericOperator|GenericOperator node|no native (?:Aidge )?operator")


def aidge_category(phase: str | None, message: str, *, not_implemented: bool = False) -> str:
    """The category of an Aidge failure of ``phase`` with Aidge's ``message``."""
    if KERNEL_IMAGE_RE.search(message):
        return "cuda_kernel_image"
    if GENERIC_OPERATOR_RE.search(message):
        return "unsupported_operator"
    missing = not_implemented or bool(NOT_IMPLEMENTED_RE.search(message))
    if BACKWARD_NOT_IMPLEMENTED_RE.search(message) or (phase == "backward" and missing):
        return "backward_not_implemented"
    if phase in ("forward", "compile") and missing:
        return "forward_not_implemented"
    return {"import": "import_error", "compile": "compile_error",
            "export": "export_error (test strategy)"}.get(phase or "", "aidge_error")


def operator_from_message(message: str) -> str | None:
    """The Aidge operator type named in an Aidge error message, or None."""
    for pattern in _OPERATOR_PATTERNS:
        m = pattern.search(message)
        if m:
            return _canonical_operator(m.group(1))
    return None


def _canonical_operator(name: str) -> str:
    """``BatchNorm_Op<2>`` (a C++ class name) -> ``BatchNorm2D`` (the Aidge node type)."""
    m = re.fullmatch(r"(\w+?)_?Op(?:<(\d)>)?", name)
    if m:
        return f"{m.group(1)}{m.group(2)}D" if m.group(2) else m.group(1)
    return name


def aidge_error_from(exc: BaseException, phase: str, *, node: str | None = None,
                     operator: str | None = None) -> AidgeError:
    """Turn an exception raised by Aidge's Python bindings into an :class:`AidgeError`."""
    if isinstance(exc, AidgeError):
        return exc
    message = str(exc).strip() or type(exc).__name__
    op = operator or operator_from_message(message)
    if KERNEL_IMAGE_RE.search(message):
        cls = AidgeCudaKernelImageError
    elif NOT_IMPLEMENTED_RE.search(message):
        cls = AidgeNotImplementedError
    else:
        cls = AidgeError
    error = cls(phase, message, operator=op, node=node)
    known = _known_defect(error)
    if known is not None:  # what the traceback says under Aidge's words: the registry's id and title
        error.add_note(f"{KNOWN_DEFECT_NOTE} {known['id']}: {known['title']} (component {known['component']})")
    return error


#: the note an AidgeError carries when the registry knows its defect (dropped if the export is at fault)
KNOWN_DEFECT_NOTE = "known Aidge defect"


def _known_defect(error: AidgeError) -> dict | None:
    try:
        found = error.defect
    except Exception:  # noqa: BLE001 - a registry that cannot be read costs the note, never the error
        return None
    return found if found and found.get("registered") else None
