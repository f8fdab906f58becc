"""Failure categories: which categories there are (their emoji, kind and meaning),
:func:`categorize`, which tells a failure's category from its message, and the one decider of
what a failure is (:func:`failure_facts`: its category, phase and attribution;
:func:`attribution_rule`: who is to blame).

The decider lives here, in the lowest layer, because every place that names a failure reads it:
the expected-failure guard (:mod:`interop.cases.expected_failures`, which re-exports it), the
records (:mod:`interop.records.classify`), the console reader (:mod:`interop.records.sources`)
and ``verify``'s :class:`~interop.equivalence.verdict.Verdict`; ``equivalence`` sits below
``cases``, and the decider needs nothing but these categories and the crash message's pattern
(issue 46: one decision, one place).

:func:`categorize` maps a failure to ``(category, emoji)``. The Aidge categories are exactly
the keys of :data:`CATEGORIES` (the expected-failure table, :mod:`interop.cases.expected_failures`,
imports it and tags its entries with the same names); the others say that the test, not
Aidge, is at fault, or that no rule matched.

Nothing here imports torch, Aidge or :mod:`interop.cases.expected_failures`.

======================================  =====  ==========================================================
category                                emoji  recognised by (rules tried top to bottom; the first wins)
======================================  =====  ==========================================================
*(the tagged category)*                 *      an expected-failure tag ``[category] Operator phase: error``
                                               (strict xfail reasons, ExpectedAidgeFailure, XPASS(strict))
hang                                    ⏳     AidgeCrash of a process killed at its timeout: ``crash:
                                               process timed out after 120 s`` (a deadlock or endless loop)
accepts_invalid_input                   🚫     ``Aidge accepts invalid input``: a negative case of Aidge's own
                                               benchmark configurations ran to the end (AcceptsInvalidInputError)
killed                                  🛑     AidgeCrash of a process killed by a signal that comes from
                                               outside (SIGKILL, SIGTERM, SIGHUP, SIGINT: a user, CI, the OOM
                                               killer): ``crash: process killed by SIGKILL``; no verdict
case_memory (test strategy)             🟡     a case child that died at its memory bound (``crash: process
                                               ran out of memory``, ``it died at its memory bound``:
                                               ``INTEROP_CASE_MEMORY``) with no Aidge phase on its stack (the
                                               case's own code, torch's, the export): :func:`case_memory`
crash                                   💥     AidgeCrash: ``crash: process killed by SIGABRT during compile``,
                                               ``Fatal Python error``, an xdist worker that crashed
cuda_kernel_image                       📦     ``no kernel image is available``, ``invalid device function``
                                               (AidgeCudaKernelImageError: a packaging defect)
slowdown_vs_torch                       🐢     ``forward of model2 is 12.3x slower than model1`` (ModelTester
                                               with ``max_slowdown_ratio``); the benchmark JSONL too
config_error (test strategy)            🟡     ``ConfigError`` (``configs/X.json: case 'a.b': key 'k': ...``),
                                               ``JSONDecodeError``, ``malformed JSON``, ``unknown layout``,
                                               ``no expected Aidge node type declared``
export_error (test strategy)            🟡     ``ExportError`` (``torch.onnx.export failed``), ``TracingError``,
                                               ``ShapeSpecializedError`` (the static export), ``operator under
                                               test not in the imported Aidge graph`` (the export folded or
                                               decomposed it)
not_comparable (test strategy)          🟡     ``NotComparableError``: torch's own call fails on copies of the
                                               inputs that carry only their values (``as_strided`` on a view)
unsupported_operator                    🟠     UnsupportedOperatorError (``imported as GenericOperator``),
                                               OperatorNotInGraphError on a ``GenericOperator node``
backward_not_implemented                🟠     ``Backward not yet implemented for BatchNorm_Op<2> on backend
                                               cpu``, ``backward() not implemented yet for operator of type``
forward_not_implemented                 🟠     ``Aidge forward|compile failed`` + "not implemented", "no
                                               implementation|kernel", ``missing or invalid registrar key``
                                               (no kernel for the operator or the dtype on the backend)
import_error                            🟣     any other ``Aidge import failed``
compile_error                           🟣     any other ``Aidge compile failed``
aidge_error                             🟣     any other ``Aidge forward|backward|step failed`` (an AidgeError
                                               that fits no category above)
output_shape_differs                    🔴     EquivalenceError on ``output`` or ``loss`` whose shapes differ:
                                               ``[ReduceMean_x, epoch 0] output differs between model1
                                               (ReduceMean) and model2 (AidgeModule) [seed 1]`` then
                                               ``Shapes do not match at output: actual (1,) vs expected ()``
                                               (model2, Aidge, gives another shape than model1, torch);
                                               or the bridge's ``OutputShapeError`` (``Aidge's output
                                               has another shape than torch's; the bridge stops it``),
                                               raised before a wrong-sized output reaches the caller
shape_mismatch (test strategy)          🟡     any other shape error: ``Shapes do not match at output: actual
                                               (2, 12) vs expected (24,)`` outside such an EquivalenceError
                                               (or on grads and weights), ``Structure mismatch``, ``output(s)
                                               but N label(s)``, torch shape errors (``size mismatch``,
                                               ``shape '[..]' is invalid``) outside Aidge
export_error (test strategy)            🟡     EquivalenceError before any step: ``initial weights: fc.weight``
                                               or ``parameter names`` (the export's parameter mapping)
training_diverges                       🔴     EquivalenceError on ``weights after the SGD step: fc.weight``
gradients_differ                        🔴     EquivalenceError on ``input grad [0]`` or ``grad of fc.weight``
outputs_differ                          🔴     EquivalenceError on ``output`` or ``loss`` (``Tensors are not
                                               close at output!``), non-finite values
unknown                                 ❓     nothing above: read the message (a bug in the test itself?)
======================================  =====  ==========================================================

Emojis: 🔴 Aidge computes a different number (or shape); 🚫 Aidge runs what it should reject; 🟠 Aidge lacks the operator or kernel; 🟣 Aidge
rejects a valid graph; 💥 Aidge kills the process; ⏳ Aidge never finishes (killed at the
timeout); 📦 packaging defect; 🟡 the test strategy is at fault (fix the suite, not Aidge);
🐢 slower than the threshold; ❓ unclassified.
:data:`KINDS` groups them: ``aidge`` (🔴🚫🟠🟣💥⏳📦), ``test_strategy`` (🟡), ``performance``
(🐢), ``run`` (🛑: the run lost the case), ``unknown`` (❓).
"""
from __future__ import annotations

import dataclasses
import re

from .errors import BACKWARD_NOT_IMPLEMENTED_RE, GENERIC_OPERATOR_RE, KERNEL_IMAGE_RE, NOT_IMPLEMENTED_RE

__all__ = [
    "CATEGORIES",
    "CATEGORY_TABLE",
    "ATTRIBUTIONS",
    "KINDS",
    "categorize",
    "kind_of",
    "AIDGE_PHASES",
    "FailureFacts",
    "failure_facts",
    "attribution_rule",
    "case_memory",
    "CASE_MEMORY",
    "MEMORY_BOUND_RE",
]

#: Aidge category -> one-line meaning: the categories an expected failure
#: (:mod:`interop.cases.expected_failures`) may name. :data:`CATEGORY_TABLE` gives the report order.
CATEGORIES = {
    "backward_not_implemented": "Aidge has no backward kernel for the operator on this backend",
    "forward_not_implemented": "Aidge has no forward kernel for the operator/dtype on this backend",
    "unsupported_operator": "aidge_onnx imports the ONNX node as a GenericOperator (no native operator)",
    "import_error": "aidge_onnx fails to import the ONNX node",
    "compile_error": "GraphView.compile fails (dims/dtype/backend propagation)",
    "aidge_error": "Aidge raises an error on a valid graph or input (neither a missing kernel nor an "
                   "import/compile failure)",
    "outputs_differ": "forward outputs differ from torch beyond tolerance",
    "output_shape_differs": "Aidge's output has another shape than torch's (values may match)",
    "gradients_differ": "gradients (input or parameter) differ from torch beyond tolerance",
    "training_diverges": "weights differ from torch after the SGD step",
    "accepts_invalid_input": "Aidge runs a negative case of its own configurations (one it should reject) "
                             "to the end instead of raising",
    "crash": "the process dies (signal) inside Aidge",
    "hang": "the process does not finish within the case timeout (a deadlock or an endless loop); killed",
    "cuda_kernel_image": "Aidge's CUDA kernels are not compiled for this GPU (packaging defect)",
}

TEST_STRATEGY_CATEGORIES = {
    "shape_mismatch (test strategy)": "the two sides give different shapes: the case or its reference is wrong",
    "export_error (test strategy)": "torch.onnx.export (or the bridge's parameter mapping) fails on the test model",
    "config_error (test strategy)": "the operator configuration is malformed (JSON, layout, attribute)",
    "not_comparable (test strategy)": "torch's own call fails on copies of the inputs that carry only their "
                                      "values: the case depends on memory layout, which ONNX cannot express",
    "case_memory (test strategy)": "the case's own code (no Aidge phase on the stack when it failed) grew to "
                                   "the case child's memory bound (INTEROP_CASE_MEMORY): a smaller case or a "
                                   "higher bound, not an Aidge defect",
}
#: the category of a memory-bound death outside Aidge's code (:func:`case_memory`)
CASE_MEMORY = "case_memory (test strategy)"

#: category -> (emoji, kind, meaning). Report order.
CATEGORY_TABLE: dict[str, tuple[str, str, str]] = {
    "outputs_differ": ("🔴", "aidge", CATEGORIES["outputs_differ"]),
    "output_shape_differs": ("🔴", "aidge", CATEGORIES["output_shape_differs"]),
    "gradients_differ": ("🔴", "aidge", CATEGORIES["gradients_differ"]),
    "training_diverges": ("🔴", "aidge", CATEGORIES["training_diverges"]),
    "accepts_invalid_input": ("🚫", "aidge", CATEGORIES["accepts_invalid_input"]),
    "crash": ("💥", "aidge", CATEGORIES["crash"]),
    "hang": ("⏳", "aidge", CATEGORIES["hang"]),
    "backward_not_implemented": ("🟠", "aidge", CATEGORIES["backward_not_implemented"]),
    "forward_not_implemented": ("🟠", "aidge", CATEGORIES["forward_not_implemented"]),
    "unsupported_operator": ("🟠", "aidge", CATEGORIES["unsupported_operator"]),
    "import_error": ("🟣", "aidge", CATEGORIES["import_error"]),
    "compile_error": ("🟣", "aidge", CATEGORIES["compile_error"]),
    "aidge_error": ("🟣", "aidge", CATEGORIES["aidge_error"]),
    "cuda_kernel_image": ("📦", "aidge", CATEGORIES["cuda_kernel_image"]),
    **{name: ("🟡", "test_strategy", meaning) for name, meaning in TEST_STRATEGY_CATEGORIES.items()},
    "slowdown_vs_torch": ("🐢", "performance", "slower than torch by more than the threshold (not a change over time)"),
    "killed": ("🛑", "run", "the process running the case was killed from outside (SIGKILL, SIGTERM, SIGHUP: a user, "
                           "CI, the OOM killer): no verdict on anybody, rerun the case"),
    "unknown": ("❓", "unknown", "no rule matched: read the message"),
}

#: who a mismatch is attributed to (:mod:`interop.oracle.attribution` decides it)
ATTRIBUTIONS = {
    "aidge": "onnxruntime on the same ONNX model agrees with torch, Aidge does not",
    "export": "onnxruntime disagrees with torch too (or rejects the model): the torch -> ONNX lowering differs",
    "precision": "Aidge is no farther from torch's float64 result than torch float32 is",
    "unknown": "neither onnxruntime nor the float64 reference decides",
}

KINDS = {
    "aidge": "Aidge defects (report them upstream)",
    "test_strategy": "problems of the suite itself (fix the test)",
    "performance": "slowdowns over the threshold",
    "unknown": "unclassified failures",
    "run": "cases the run itself lost (a process killed from outside): no verdict",
}

_TAGGED = set(CATEGORIES) | set(CATEGORY_TABLE)


def kind_of(category: str) -> str:
    """``aidge`` / ``test_strategy`` / ``performance`` / ``unknown``."""
    return CATEGORY_TABLE.get(category, CATEGORY_TABLE["unknown"])[1]


def _result(category: str) -> tuple[str, str]:
    return category, CATEGORY_TABLE[category][0]


# ---------------------------------------------------------------------------------------
# categorize
# ---------------------------------------------------------------------------------------
_TAG = re.compile(r"^(?:\[XPASS\(strict\)\]\s*|(?:[\w.]*ExpectedAidgeFailure:\s*))?\[(?P<cat>[^\]]+)\]\s")
#: an AidgeCrash's message (interop.equivalence.isolation): what killed the process, in which phase, where
CRASH_MESSAGE_RE = re.compile(r"crash: process (?P<what>killed by (?P<sig>SIG\w+|signal \d+)|timed out after [\d.]+ ?s"
                              r"|exited with status -?\d+(?: without a result)?|ran out of memory)"
                              r"(?: during (?P<phase>\w+)| (?P<outside>outside the bridge's phases))?"
                              r"(?: \(innermost Python frame (?P<frame>[^)]+)\))?")
_CRASH = re.compile(CRASH_MESSAGE_RE.pattern + r"|Fatal Python error|worker '?gw\d+'? crashed"
                    r"|node down: Not properly terminated|[Ss]egmentation fault|core dumped")
#: a case child that failed at its memory bound (interop.equivalence.isolation: ``_memory_crash``, an
#: allocation failed in the child; ``_with_peak``, a child that died near its bound)
MEMORY_BOUND_RE = re.compile(r"crash: process ran out of memory\b|it died at its memory bound")
#: a case killed for running past its timeout: told apart from a process that died by itself
_HANG = re.compile(r"crash: process timed out after [\d.]+ ?s")
#: a process killed by a signal that only comes from outside (interop.errors.EXTERNAL_SIGNALS)
_KILLED = re.compile(r"crash: process killed by SIG(?:KILL|TERM|HUP|INT)\b")
#: ModelTester's max_slowdown_ratio failure
SLOWER_RE = re.compile(r"(?P<phase>forward|backward) of model2 is (?P<ratio>[\d.]+)x slower|"
                       r"\] (?:forward|backward) speed differs")
#: AcceptsInvalidInputError (interop.cases.aidge_check)
_ACCEPTS = re.compile(r"Aidge accepts invalid input")
_CONFIG = re.compile(r"\bConfigError\b|JSONDecodeError|malformed JSON|unknown (?:JSON )?layout|"
                     r"neither supported .*?nor ignored|no expected Aidge node type declared|"
                     r"\.json: (?:case|key) '", re.I)
_EXPORT = re.compile(r"\bExportError\b|\bShapeSpecializedError\b|\bTracingError\b|torch\.onnx\.export failed"
                     r"|Exporting the operator .+ to ONNX"
                     r"|operator under test not in the imported Aidge graph")
#: OutputShapeError (interop.errors): the bridge's shape guard stopped a wrong-sized Aidge output
_OUTPUT_SHAPE = re.compile(r"\bOutputShapeError\b|Aidge's output has another shape than torch's; the bridge stops it")
_NOT_COMPARABLE = re.compile(r"\bNotComparableError\b|torch's own call fails on copies of the inputs")
#: an AidgeError's message (interop.errors): ``Aidge <phase> failed (<where>): <Aidge's text>``
AIDGE_FAILURE_RE = re.compile(r"Aidge (?P<phase>export|import|compile|forward|backward|step) failed"
                              r"(?: \((?P<where>[^)]*)\))?: (?P<msg>[^\n]*)")
_GENERIC = GENERIC_OPERATOR_RE  # the one definition of each, in interop.errors
_BACKWARD_NI = BACKWARD_NOT_IMPLEMENTED_RE
#: an EquivalenceError (ModelTester): what model2 (Aidge) computes differs from model1 (torch)
_EQUIVALENCE = re.compile(r"\] (?P<what>.+?) differs between model1 \([^\n]*\) and model2 \(")
_SHAPES_DIFFER = re.compile(r"Shapes do not match")
_SHAPE = re.compile(r"Shapes do not match|Structure mismatch|output\(s\) but \d+ label\(s\)|size mismatch"
                    r"|shape '\[[^\]]*\]' is invalid|must match the size of tensor|mat\d? and mat\d? shapes cannot"
                    r"|shapes? mismatch", re.I)
_WHAT = re.compile(r"\] (?P<what>.+?) differs between model1|Tensors are not close at (?P<at>.+?)!"
                   r"|\d+ mismatch\(es\) in (?P<in>.+?):|Non-finite values at (?P<nf>[^:]+):")
_NOT_CLOSE = re.compile(r"Tensors are not close!|Mismatched elements: \d+ / \d+")


def categorize(rt_msg: str | None, ae_msg: str | None = None) -> tuple[str, str]:
    """``(category, emoji)`` for a failure.

    ``rt_msg`` is the runtime error / failure message (an exception that is not an
    assertion: an AidgeError, a crash, an xfail reason...), ``ae_msg`` the assertion message
    (an EquivalenceError or a plain ``assert``); either may be None. The rules and the table
    of categories are in the module docstring; the first matching rule wins.

    >>> categorize("Aidge backward failed (operator BatchNorm2D): Backward not yet implemented "
    ...            "for BatchNorm_Op<2> on backend cpu")
    ('backward_not_implemented', '🟠')
    >>> categorize(None, "[Conv2D_x, epoch 0] output differs between model1 (Conv2d) and model2 "
    ...            "(AidgeModule) [seed 1]\\nTensors are not close at output!")
    ('outputs_differ', '🔴')
    >>> categorize(None, "[ReduceMean_x, epoch 0] output differs between model1 (ReduceMean) and model2 "
    ...            "(AidgeModule) [seed 1]\\nShapes do not match at output: actual (1,) vs expected ()")
    ('output_shape_differs', '🔴')
    >>> categorize(None, "Shapes do not match at output: actual (1,) vs expected ()")
    ('shape_mismatch (test strategy)', '🟡')
    """
    parts = [m.strip() for m in (rt_msg, ae_msg) if m and m.strip()]
    if not parts:
        return _result("unknown")
    text = "\n".join(parts)
    for part in parts:
        tag = _TAG.match(part)
        if tag and tag.group("cat") in _TAGGED:
            return _result(tag.group("cat"))
    if _HANG.search(text):
        return _result("hang")
    if case_memory(None, text):
        return _result(CASE_MEMORY)
    if _KILLED.search(text):
        return _result("killed")
    if _CRASH.search(text):
        return _result("crash")
    if _ACCEPTS.search(text):
        return _result("accepts_invalid_input")
    if KERNEL_IMAGE_RE.search(text):
        return _result("cuda_kernel_image")
    if SLOWER_RE.search(text):
        return _result("slowdown_vs_torch")
    if _CONFIG.search(text):
        return _result("config_error (test strategy)")
    if _EXPORT.search(text):
        return _result("export_error (test strategy)")
    if _NOT_COMPARABLE.search(text):
        return _result("not_comparable (test strategy)")
    if _OUTPUT_SHAPE.search(text):
        return _result("output_shape_differs")
    aidge = AIDGE_FAILURE_RE.search(text)
    if aidge or _GENERIC.search(text) or _BACKWARD_NI.search(text):
        phase = aidge.group("phase") if aidge else None
        if _GENERIC.search(text):
            return _result("unsupported_operator")
        if _BACKWARD_NI.search(text) or (phase == "backward" and NOT_IMPLEMENTED_RE.search(text)):
            return _result("backward_not_implemented")
        if phase in ("forward", "compile") and NOT_IMPLEMENTED_RE.search(text):
            return _result("forward_not_implemented")
        if phase == "import":
            return _result("import_error")
        if phase == "compile":
            return _result("compile_error")
        if phase == "export":
            return _result("export_error (test strategy)")
        return _result("aidge_error")
    equivalence = _EQUIVALENCE.search(text)
    if (equivalence and equivalence.group("what").startswith(("output", "loss"))
            and _SHAPES_DIFFER.search(text)):
        return _result("output_shape_differs")
    if _SHAPE.search(text):
        return _result("shape_mismatch (test strategy)")
    what = what_differs(text)
    if what is not None:
        if what.startswith(("initial weights", "parameter")):
            return _result("export_error (test strategy)")
        if what.startswith("weights after the SGD step"):
            return _result("training_diverges")
        if what.startswith(("input grad", "grad of", "grad")):
            return _result("gradients_differ")
        return _result("outputs_differ")
    if _NOT_CLOSE.search(text):
        return _result("outputs_differ")
    return _result("unknown")


def what_differs(text: str) -> str | None:
    """What an equivalence failure compares (``output``, ``grad of fc.weight``...), or None."""
    m = _WHAT.search(text)
    if not m:
        return None
    return next(g for g in m.groups() if g is not None).strip()



# ---------------------------------------------------------------------------------------
# What a failure is: the one decider (the guard, the records, the console reader, verify's Verdict)
# ---------------------------------------------------------------------------------------
#: the bridge's phases in which Aidge's own code runs: a crash or a hang located there is Aidge's
AIDGE_PHASES = ("import", "compile", "forward", "backward", "step")
#: an expected-failure tag's phase (``[crash] Softmax forward: ...``: a strict xfail reason, an XPASS)
_TAG_PHASE = re.compile(_TAG.pattern + r"\S+ (?P<phase>" + "|".join(("export",) + AIDGE_PHASES) + r"):")


@dataclasses.dataclass(frozen=True)
class FailureFacts:
    """What a failure is, decided once by :func:`failure_facts`.

    ``decided``: ``"raise"`` when the exception carries its own category (the library's typed
    errors), ``"text"`` when it is read from its text (another library's exception, a plain
    ``assert``). ``stated``: whether the failure itself said its attribution (its ``attribution``
    attribute, or for a text-decided failure an ``attribution: X`` in its text) rather than the
    rule deriving it from the category and phase."""

    category: str
    decided: str
    phase: str | None
    attribution: str | None
    stated: bool


def _stated_attribution(text: str) -> str | None:
    found = re.search(r"(?:^|\n|\[)attribution:? (?P<who>" + "|".join(ATTRIBUTIONS) + r")\b", text or "")
    return found.group("who") if found else None


def _crash_phase(text: str) -> str | None:
    """The phase a crash's or a hang's text places it in: the isolation's ``crash: process ...
    during <phase>``, else an expected-failure tag's ``[crash] Operator <phase>:``; None when it
    names none (``outside the bridge's phases``, a worker that died)."""
    crash = CRASH_MESSAGE_RE.search(text or "")
    if crash and crash.group("phase"):
        return crash.group("phase")
    tag = _TAG_PHASE.match(text or "")
    return tag.group("phase") if tag else None


def case_memory(phase: str | None, text: str = "", hit: bool = False) -> bool:
    """Whether a failure is a memory-bound death of the case's own code: the case child hit its
    memory bound (``hit``: the crash's ``memory_bound_hit``; else its text says so,
    :data:`MEMORY_BOUND_RE`: a MemoryError, a ``std::bad_alloc``, torch's "can't allocate memory" of
    a child grown to its bound, or a child that died near it, SIGABRT/SIGSEGV/SIGKILL) while no Aidge
    phase was on its stack (``phase``, else the phase its text names, :func:`_crash_phase`; the phase
    is read from the child's stack at the moment of failure: the traceback of the failed allocation,
    or the faulthandler dump of the dying child). Such a death is the case's (its category
    :data:`CASE_MEMORY`, a test-strategy one: no ledger entry); one in an Aidge phase
    (:data:`AIDGE_PHASES`: the bridge's import, compile, forward, backward, step) stays Aidge's crash.
    The one place this is decided: :func:`categorize` (a text) and :func:`failure_facts` (a raised
    crash) both ask here."""
    if not (hit or MEMORY_BOUND_RE.search(text or "")):
        return False
    return (phase or _crash_phase(text)) not in AIDGE_PHASES


def attribution_rule(category: str, phase: str | None = None, text: str = "",
                     said: str | None = None, read_text: bool = True) -> tuple[str | None, bool]:
    """``(attribution, stated)`` of a failure of ``category`` in ``phase``: what the failure said
    (``said``, its typed attribute; else, when ``read_text``, an ``attribution: X`` in its
    ``text``), else the rule, by whose code was running when it failed:

    - a process killed from outside (``killed``): nobody's (None);
    - an export error: the export's;
    - a crash or a hang: by where it happened (its ``phase``, else the phase its text names,
      :func:`_crash_phase`): during the export the export's (torch's code was running); in one
      of :data:`AIDGE_PHASES` Aidge's; anywhere else ``unknown``: the dying process's stack named
      no bridge phase (the callable's own code, torch's, the test's), or there was no stack to
      read (a timeout, an exit without a signal, a worker that died): nothing says Aidge's code
      was running;
    - every other Aidge category: Aidge's; a test-strategy, performance or unknown category:
      nobody's (None).
    """
    if isinstance(said, str):
        return said, True
    if read_text:
        stated = _stated_attribution(text)
        if stated:
            return stated, True
    if category == "killed":
        return None, False
    if category.startswith("export_error"):
        return "export", False
    if category in ("crash", "hang"):
        where = phase or _crash_phase(text)
        if where == "export":
            return "export", False
        return ("aidge" if where in AIDGE_PHASES else "unknown"), False
    return ("aidge" if kind_of(category) == "aidge" else None), False


def row_attribution(attribution: str | None, category: str, phase: str | None = None) -> str | None:
    """A table row's attribution: its own, else :func:`attribution_rule` on the row's category and
    phase (the table's rows without one are all in Aidge categories: Aidge's)."""
    return attribution or attribution_rule(category, phase, read_text=False)[0]


def failure_facts(exc: BaseException) -> FailureFacts:
    """The one decider of what a failure is: its own typed ``category`` first (``decided ==
    "raise"``), the text of another library's exception only (:func:`categorize` of its message,
    an ``AssertionError``'s as the assertion side: ``"text"``); its ``phase`` (None where it has
    none, or ``unknown``); its attribution (:func:`attribution_rule`: the text is read for a
    text-decided failure only)."""
    text = str(exc)
    category = getattr(exc, "category", None)
    if isinstance(category, str) and category in CATEGORY_TABLE:
        decided = "raise"
    else:
        category = (categorize(None, text) if isinstance(exc, AssertionError) else categorize(text))[0]
        decided = "text"
    phase = getattr(exc, "phase", None)
    phase = phase if isinstance(phase, str) and phase and phase != "unknown" else None
    if decided == "raise" and category in ("crash", "killed") and \
            case_memory(phase, text, getattr(exc, "memory_bound_hit", False) is True):
        category = CASE_MEMORY  # the case's own memory, not Aidge's crash (the text path: categorize)
    attribution, stated = attribution_rule(category, phase, text, getattr(exc, "attribution", None),
                                           read_text=decided == "text")
    return FailureFacts(category, decided, phase, attribution, stated)
