"""Results analysis: categorise failures, parse pytest output and the benchmark JSONL, build
the report that ``analyze_results.py`` prints (as text or JSON).

Categories
==========
:func:`categorize` maps a failure to ``(category, emoji)``. The Aidge categories are exactly
the keys of :data:`interop.expected_failures.CATEGORIES` (the expected-failure table uses the
same names); the others say that the test, not Aidge, is at fault, or that no rule matched.

======================================  =====  ==========================================================
category                                emoji  recognised by (rules tried top to bottom; the first wins)
======================================  =====  ==========================================================
*(the tagged category)*                 *      an expected-failure tag ``[category] Operator phase: error``
                                               (strict xfail reasons, ExpectedAidgeFailure, XPASS(strict))
hang                                    ⏳     AidgeCrash of a process killed at its timeout: ``crash:
                                               process timed out after 120 s`` (a deadlock or endless loop)
crash                                   💥     AidgeCrash: ``crash: process killed by SIGABRT during compile``,
                                               ``Fatal Python error``, an xdist worker that crashed
cuda_kernel_image                       📦     ``no kernel image is available``, ``invalid device function``
                                               (AidgeCudaKernelImageError: a packaging defect)
performance_regression                  🐢     ``forward of model2 is 12.3x slower than model1`` (ModelTester
                                               with ``max_slowdown_ratio``); the benchmark JSONL too
config_error (test strategy)            🟡     ``ConfigError`` (``configs/X.json: case 'a.b': key 'k': ...``),
                                               ``JSONDecodeError``, ``malformed JSON``, ``unknown layout``,
                                               ``no expected Aidge node type declared``
export_error (test strategy)            🟡     ``ExportError`` (``torch.onnx.export failed``), ``TracingError``,
                                               ``ShapeSpecializedError`` (the static export), ``operator under
                                               test not in the imported Aidge graph`` (the export folded or
                                               decomposed it)
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
shape_mismatch (test strategy)          🟡     ``Shapes do not match at output: actual (2, 12) vs expected
                                               (24,)``, ``Structure mismatch``, ``output(s) but N label(s)``,
                                               torch shape errors (``size mismatch``, ``shape '[..]' is
                                               invalid``) outside Aidge
export_error (test strategy)            🟡     EquivalenceError before any step: ``initial weights: fc.weight``
                                               or ``parameter names`` (the export's parameter mapping)
training_diverges                       🔴     EquivalenceError on ``weights after the SGD step: fc.weight``
gradients_differ                        🔴     EquivalenceError on ``input grad [0]`` or ``grad of fc.weight``
outputs_differ                          🔴     EquivalenceError on ``output`` or ``loss`` (``Tensors are not
                                               close at output!``), non-finite values
unknown                                 ❓     nothing above: read the message (a bug in the test itself?)
======================================  =====  ==========================================================

Emojis: 🔴 Aidge computes a different number; 🟠 Aidge lacks the operator or kernel; 🟣 Aidge
rejects a valid graph; 💥 Aidge kills the process; ⏳ Aidge never finishes (killed at the timeout); 📦 packaging defect; 🟡 the test strategy
is at fault (fix the suite, not Aidge); 🐢 slower than the threshold; ❓ unclassified.
:data:`KINDS` groups them: ``aidge`` (🔴🟠🟣💥⏳📦), ``test_strategy`` (🟡), ``performance``
(🐢), ``unknown`` (❓).

Inputs
======
* pytest output of any verbosity: ``-v`` progress lines (``tests/x.py::test[id] PASSED [ 4%]``),
  xdist ones (``[gw0] [  4%] PASSED tests/x.py::test[id]``), the short test summary of
  ``-ra``/``-rA`` (``FAILED nodeid - message``, ``XFAIL nodeid - reason``, ``SKIPPED [1]
  path:line: reason``), the FAILURES / ERRORS sections (where the full, untruncated message is
  read from the ``E`` lines) and the final totals line (``11 failed, 10 passed in 14.85s``).
  ``-q`` without ``-rA`` lists no passes: their count comes from the totals line.
* the benchmark JSONL of :class:`~interop.tester.ModelTester` (one object per line: ``name``,
  ``forward``/``backward`` = ``{mean1, mean2, ratio, samples}`` or null, ``seed``, ``threads``,
  ``torch``, ``aidge``, ``test``, ``time``). A malformed line is reported as ``file:line:
  why`` and skipped; when a name appears several times (runs appended), the last line wins.

The operator of a case is the case id (the test's parameter id, e.g. ``Conv2D_stride_2``) up
to its first ``_``; Aidge bugs are grouped by the Aidge operator the error names when it names
one (``Aidge backward failed (operator MatMul)`` for ``FC_no_bias``).

Nothing here prints or writes files: :func:`build_report` returns a JSON-able dict and
:func:`format_report` its text.
"""
from __future__ import annotations

import dataclasses
import json
import math
import re
import statistics
from pathlib import Path
from typing import Any, Iterable

from ..expected_failures import CATEGORIES

__all__ = [
    "CATEGORY_TABLE",
    "KINDS",
    "UnreadableInput",
    "TestResult",
    "PytestRun",
    "BenchData",
    "categorize",
    "kind_of",
    "case_id",
    "operator_of",
    "parse_pytest_output",
    "parse_benchmarks",
    "read_text",
    "build_report",
    "format_report",
]

TEST_STRATEGY_CATEGORIES = {
    "shape_mismatch (test strategy)": "the two sides give different shapes: the case or its reference is wrong",
    "export_error (test strategy)": "torch.onnx.export (or the bridge's parameter mapping) fails on the test model",
    "config_error (test strategy)": "the operator configuration is malformed (JSON, layout, attribute)",
}

#: category -> (emoji, kind, meaning). Report order.
CATEGORY_TABLE: dict[str, tuple[str, str, str]] = {
    "outputs_differ": ("🔴", "aidge", CATEGORIES["outputs_differ"]),
    "gradients_differ": ("🔴", "aidge", CATEGORIES["gradients_differ"]),
    "training_diverges": ("🔴", "aidge", CATEGORIES["training_diverges"]),
    "crash": ("💥", "aidge", CATEGORIES["crash"]),
    "hang": ("⏳", "aidge", CATEGORIES["hang"]),
    "backward_not_implemented": ("🟠", "aidge", CATEGORIES["backward_not_implemented"]),
    "forward_not_implemented": ("🟠", "aidge", CATEGORIES["forward_not_implemented"]),
    "unsupported_operator": ("🟠", "aidge", CATEGORIES["unsupported_operator"]),
    "import_error": ("🟣", "aidge", CATEGORIES["import_error"]),
    "compile_error": ("🟣", "aidge", CATEGORIES["compile_error"]),
    "aidge_error": ("🟣", "aidge", "Aidge raised an error that fits no category above"),
    "cuda_kernel_image": ("📦", "aidge", CATEGORIES["cuda_kernel_image"]),
    **{name: ("🟡", "test_strategy", meaning) for name, meaning in TEST_STRATEGY_CATEGORIES.items()},
    "performance_regression": ("🐢", "performance", "slower than torch by more than the threshold"),
    "unknown": ("❓", "unknown", "no rule matched: read the message"),
}

KINDS = {
    "aidge": "Aidge defects (report them upstream)",
    "test_strategy": "problems of the suite itself (fix the test)",
    "performance": "slowdowns over the threshold",
    "unknown": "unclassified failures",
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
_CRASH_MSG = re.compile(r"crash: process (?P<what>killed by (?P<sig>SIG\w+|signal \d+)|timed out after [\d.]+ ?s"
                        r"|exited with status -?\d+(?: without a result)?)(?: during (?P<phase>\w+)| (?P<outside>outside "
                        r"the bridge's phases))?"
                        r"(?: \(innermost Python frame (?P<frame>[^)]+)\))?")
_CRASH = re.compile(_CRASH_MSG.pattern + r"|Fatal Python error|worker '?gw\d+'? crashed"
                    r"|node down: Not properly terminated|[Ss]egmentation fault|core dumped")
#: a case killed for running past its timeout: told apart from a process that died by itself
_HANG = re.compile(r"crash: process timed out after [\d.]+ ?s")
_KERNEL_IMAGE = re.compile(r"no kernel image is available|invalid device function|CUDA_ERROR_NO_BINARY_FOR_GPU"
                           r"|no binary for GPU|AidgeCudaKernelImageError", re.I)
_SLOWER = re.compile(r"(?P<phase>forward|backward) of model2 is (?P<ratio>[\d.]+)x slower|"
                     r"\] (?:forward|backward) speed differs")
_CONFIG = re.compile(r"\bConfigError\b|JSONDecodeError|malformed JSON|unknown (?:JSON )?layout|"
                     r"neither supported .*?nor ignored|no expected Aidge node type declared|"
                     r"\.json: (?:case|key) '", re.I)
_EXPORT = re.compile(r"\bExportError\b|\bShapeSpecializedError\b|\bTracingError\b|torch\.onnx\.export failed"
                     r"|Exporting the operator .+ to ONNX"
                     r"|operator under test not in the imported Aidge graph")
_AIDGE = re.compile(r"Aidge (?P<phase>export|import|compile|forward|backward|step) failed"
                    r"(?: \((?P<where>[^)]*)\))?: (?P<msg>[^\n]*)")
_GENERIC = re.compile(r"imported as GenericOperator|GenericOperator node|no native (?:Aidge )?operator")
_BACKWARD_NI = re.compile(r"[Bb]ackward not yet implemented|backward\(\) not implemented yet")
_NOT_IMPLEMENTED = re.compile(r"not (?:yet )?implemented|[Nn]o (?:available |registered )?(?:implementation|kernel)"
                              r"|missing .*impl|missing or invalid registrar key|not yet supported", re.I)
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
    if _CRASH.search(text):
        return _result("crash")
    if _KERNEL_IMAGE.search(text):
        return _result("cuda_kernel_image")
    if _SLOWER.search(text):
        return _result("performance_regression")
    if _CONFIG.search(text):
        return _result("config_error (test strategy)")
    if _EXPORT.search(text):
        return _result("export_error (test strategy)")
    aidge = _AIDGE.search(text)
    if aidge or _GENERIC.search(text) or _BACKWARD_NI.search(text):
        phase = aidge.group("phase") if aidge else None
        if _GENERIC.search(text):
            return _result("unsupported_operator")
        if _BACKWARD_NI.search(text) or (phase == "backward" and _NOT_IMPLEMENTED.search(text)):
            return _result("backward_not_implemented")
        if phase in ("forward", "compile") and _NOT_IMPLEMENTED.search(text):
            return _result("forward_not_implemented")
        if phase == "import":
            return _result("import_error")
        if phase == "compile":
            return _result("compile_error")
        if phase == "export":
            return _result("export_error (test strategy)")
        return _result("aidge_error")
    if _SHAPE.search(text):
        return _result("shape_mismatch (test strategy)")
    what = _what_differs(text)
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


def _what_differs(text: str) -> str | None:
    m = _WHAT.search(text)
    if not m:
        return None
    return next(g for g in m.groups() if g is not None).strip()


# ---------------------------------------------------------------------------------------
# pytest output
# ---------------------------------------------------------------------------------------
class UnreadableInput(ValueError):
    """The input cannot be analysed (missing, undecodable, or not pytest output / JSONL)."""


OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
_STATUS = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped",
           "XFAIL": "xfailed", "XPASS": "xpassed"}
_STATUS_RE = "PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BANNER = re.compile(r"^={3,} ?(?P<title>.*?) ?={3,}$")
_PROGRESS = re.compile(rf"^(?P<nodeid>\S.*?::.*?) (?P<status>{_STATUS_RE})(?:\((?:strict)\))?"
                       r"(?: \((?P<reason>.*)\))?\s+\[\s*\d+%\]\s*$")
_XDIST = re.compile(rf"^\[gw\d+\] \[\s*\d+%\] (?P<status>{_STATUS_RE})(?:\((?:strict)\))? (?P<nodeid>\S.*?)\s*$")
_SUMMARY = re.compile(rf"^(?P<status>{_STATUS_RE})(?:\((?:strict)\))? (?P<nodeid>\S+?(?:::\S.*?)?)(?: - (?P<msg>.*))?\s*$")
_SUMMARY_SKIP = re.compile(r"^SKIPPED \[(?P<n>\d+)\] (?P<loc>.+?:\d+): (?P<reason>.*)$")
# a long title leaves room for a single "_" on each side; "_ _ _ _" lines separate traceback entries
_SECTION = re.compile(r"^_+ (?P<title>(?![_ ]+$).+?) _+$")
_ERROR_TITLE = re.compile(r"^ERROR (?:at (?P<when>setup|teardown) of|collecting) (?P<name>.+)$")
_COLLECTED = re.compile(r"^collected (?P<n>\d+) items?(?: / (?P<des>\d+) deselected)?|^\d+ workers \[(?P<xn>\d+) items?\]")
#: a process of the run itself died (outside any test's failure section: a child process that
#: crashes inside a test is that test's failure; xdist replacing a crashed worker reports the
#: test as failed and goes on, which the collected/reported check covers)
_FATAL = re.compile(r"^(?:Fatal Python error|Segmentation fault|Bus error|Aborted|Killed)\b|core dumped")
_INTERRUPTED = re.compile(r"^!{3,} (?:KeyboardInterrupt|Interrupted)|^KeyboardInterrupt$")
_TOTALS = re.compile(r"^(?P<body>(?:\d+ [a-z]+(?:, )?)+|no tests ran) in (?P<secs>[\d.]+)s\b")
_SECTIONS = ("FAILURES", "ERRORS", "PASSES")
_LOCATION = re.compile(r"^(?P<path>\S+?):(?P<line>\d+): (?P<type>[A-Za-z_][\w.]*)\s*$")
_EXC_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Failure|Crash|Exit|Interrupt|Warning)|"
                       r"[A-Za-z_][\w.]*\.[A-Z]\w*): ?(?P<msg>.*)$")
_XDIST_PLATFORM = re.compile(r"^\[gw\d+\] \S+ -- Python ")
_WORKER_CRASH = re.compile(r"worker '\w+' crashed while running '(?P<nodeid>[^']+)'")
_ASSERTION_TYPES = re.compile(r"(?:^|\.)(?:\w*AssertionError|EquivalenceError|Failed)$")
_TOTAL_WORDS = {"passed": "passed", "failed": "failed", "error": "error", "errors": "error",
                "skipped": "skipped", "xfailed": "xfailed", "xpassed": "xpassed",
                "deselected": "deselected", "warning": "warnings", "warnings": "warnings", "rerun": "rerun"}


@dataclasses.dataclass
class TestResult:
    """One test's outcome as read from pytest's output.

    ``outcome``: passed / failed / error / skipped / xfailed / xpassed. A strict XPASS
    (reported by pytest as FAILED) has ``outcome == "xpassed"`` and ``strict=True``.
    ``message``: the full failure message (exception line(s) of the FAILURES/ERRORS section,
    else the short-summary text), the xfail reason or the skip reason.
    """

    nodeid: str
    outcome: str
    message: str = ""
    exc_type: str | None = None
    when: str | None = None
    strict: bool = False
    truncated: bool = False

    __test__ = False  # not a pytest test class

    @property
    def case(self) -> str:
        return case_id(self.nodeid)

    @property
    def operator(self) -> str:
        return operator_of(self.case)

    @property
    def is_assertion(self) -> bool:
        return bool(self.exc_type and _ASSERTION_TYPES.search(self.exc_type))

    @property
    def rt_msg(self) -> str | None:
        """The message as :func:`categorize` takes it (runtime error side)."""
        return None if self.is_assertion else self.full_message

    @property
    def ae_msg(self) -> str | None:
        return self.full_message if self.is_assertion else None

    @property
    def full_message(self) -> str:
        if self.exc_type and self.message and not self.message.startswith("["):
            return f"{self.exc_type}: {self.message}"
        return self.message or (self.exc_type or "")

    def category(self) -> tuple[str, str] | None:
        """``(category, emoji)`` of a failure, error, xfail or xpass; None for pass/skip."""
        if self.outcome in ("passed", "skipped"):
            return None
        return categorize(self.rt_msg, self.ae_msg)


@dataclasses.dataclass
class PytestRun:
    """Everything read from one pytest output."""

    results: list[TestResult]
    #: counts from pytest's final line (``11 failed, 10 passed, ...``), or None when absent
    totals: dict[str, int] | None = None
    duration_s: float | None = None
    #: ``SKIPPED [n] location: reason`` lines (skips are reported by location, not nodeid)
    skip_lines: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    source: str = "<input>"
    #: items pytest collected (``collected 48 items``, xdist's ``2 workers [48 items]``) and
    #: deselected, when printed
    collected: int | None = None
    deselected: int = 0
    #: lines saying a process died (``Fatal Python error``, a crashed xdist worker, ...)
    fatal_lines: list[str] = dataclasses.field(default_factory=list)
    interrupted: bool = False

    def incomplete(self) -> list[str]:
        """Why this run cannot be taken as complete (empty when it can): no totals line, a
        process that died, an interruption, collected items without a result, failures the
        output counts but does not itemise."""
        why = []
        if self.interrupted:
            why.append("the run was interrupted (KeyboardInterrupt / '!!! Interrupted')")
        if self.totals is None:
            # a fatal line matters when pytest itself died (no totals); with totals, it came
            # from an xdist worker that was replaced, its test reported as failed
            for line in self.fatal_lines[:3]:
                why.append(f"a process died: {line.strip()[:160]}")
            why.append("no totals line: pytest did not finish (interrupted, killed, or the output is cut)")
            return why
        reported = sum(self.totals.get(o, 0) for o in OUTCOMES)
        if self.collected is not None and reported < self.collected - self.deselected:
            why.append(f"{self.collected - self.deselected} item(s) selected, {reported} reported: "
                       f"{self.collected - self.deselected - reported} without a result")
        counted_failures = self.totals.get("failed", 0) + self.totals.get("error", 0)
        listed = sum(1 for r in self.results if r.outcome in ("failed", "error")
                     or (r.outcome == "xpassed" and r.strict))
        if counted_failures > listed:
            why.append(f"the totals count {counted_failures} failure(s)/error(s) but {listed} are itemised: "
                       "rerun pytest with -ra (or -v) so that each one is listed")
        return why

    def counts(self) -> dict[str, int]:
        """Counts by outcome: pytest's own totals when printed, else counted from the results.
        A strict XPASS counts as ``failed`` in pytest's totals and as ``xpassed`` here."""
        counted = {o: 0 for o in OUTCOMES}
        for r in self.results:
            counted[r.outcome] += 1
        if sum(line["count"] for line in self.skip_lines) > counted["skipped"]:
            counted["skipped"] = sum(line["count"] for line in self.skip_lines)
        if self.totals is None:
            return counted
        out = {o: self.totals.get(o, 0) for o in OUTCOMES}
        strict = sum(1 for r in self.results if r.outcome == "xpassed" and r.strict)
        out["failed"] -= strict
        out["xpassed"] += strict
        return out


def case_id(nodeid: str) -> str:
    """``tests/test_operators.py::test_Conv2D_interop[Conv2D_stride_2]`` -> ``Conv2D_stride_2``;
    a test without parameters -> its function name without ``test_``."""
    name = nodeid.rsplit("::", 1)[-1]
    if name.endswith("]") and "[" in name:
        return name[name.index("[") + 1:-1]
    return name[5:] if name.startswith("test_") else name


def operator_of(case: str) -> str:
    """The operator of a case id: its prefix up to the first ``_`` (``Conv2D_stride_2`` -> ``Conv2D``)."""
    return case.split("_", 1)[0] or case


def _clean(line: str) -> str:
    return _ANSI.sub("", line).rstrip("\r\n").rstrip()


def parse_pytest_output(text: str, source: str = "<input>") -> PytestRun:
    """Read pytest's console output (any verbosity, with or without xdist). Raises
    :class:`UnreadableInput` when ``text`` holds nothing recognisable as pytest output."""
    lines = [_clean(line) for line in text.splitlines()]
    results: dict[tuple[str, str], TestResult] = {}
    sections: dict[tuple[str, str], tuple[str | None, str, str | None]] = {}
    skip_lines: list[dict[str, Any]] = []
    totals: dict[str, int] | None = None
    duration: float | None = None
    seen_header = False
    collected: int | None = None
    deselected = 0
    fatal_lines: list[str] = []
    interrupted = False

    def record(nodeid: str, status: str, msg: str | None = None, reason: str | None = None) -> None:
        outcome = _STATUS[status]
        strict = False
        message = (msg or reason or "").strip()
        if outcome == "failed" and message.startswith("[XPASS(strict)]"):
            outcome, strict = "xpassed", True
        slot = "error" if outcome == "error" else "call"
        key = (nodeid, slot)
        current = results.get(key)
        if current is None:
            current = results[key] = TestResult(nodeid, outcome, strict=strict)
        elif outcome != current.outcome and not (current.outcome == "xpassed" and outcome == "failed"):
            current.outcome = outcome
        current.strict = current.strict or strict
        truncated = message.endswith("...")
        if message and (not current.message or (current.truncated and not truncated)
                        or (truncated == current.truncated and len(message) > len(current.message))):
            current.message, current.truncated = message, truncated

    region = "header"
    section_title: str | None = None
    section_body: list[str] = []

    def flush_section() -> None:
        if section_title is not None and region in ("FAILURES", "ERRORS"):
            key, when = _section_key(section_title, region)
            sections[key] = (when, *_section_message(section_body))

    for line in lines:
        m = _COLLECTED.search(line)
        if m and collected is None:
            collected = int(m.group("n") or m.group("xn"))
            deselected = int(m.group("des") or 0)
        if _FATAL.search(line) and region not in _SECTIONS and region != "short test summary info":
            fatal_lines.append(line)
        if _INTERRUPTED.search(line):
            interrupted = True
        banner = _BANNER.match(line)
        # the final totals line: "==== 2 failed, 3 passed in 1.2s ====" (or bare, with -q);
        # a bare one inside a section would be some captured output, not ours
        candidate = banner.group("title") if banner else (None if region in _SECTIONS else line)
        tot = _TOTALS.match(candidate) if candidate else None
        if tot:
            totals, duration = _parse_totals(tot.group("body")), float(tot.group("secs"))
        if banner:
            flush_section()
            section_title, section_body = None, []
            title = banner.group("title")
            if title == "test session starts":
                seen_header = True
                region = "header"
            elif title in _SECTIONS or title == "short test summary info":
                region = title
            else:
                region = "other"
            continue
        if tot:
            region = "other"
            continue
        if region == "header":
            m = _XDIST.match(line) or _PROGRESS.match(line)
            if m:
                record(m.group("nodeid"), m.group("status"), reason=m.groupdict().get("reason"))
            continue
        if region in ("FAILURES", "ERRORS"):
            sec = _SECTION.match(line)
            if sec:
                flush_section()
                section_title, section_body = sec.group("title"), []
            elif section_title is not None:
                section_body.append(line)
            continue
        if region == "short test summary info":
            m = _SUMMARY_SKIP.match(line)
            if m:
                skip_lines.append({"count": int(m.group("n")), "location": m.group("loc"),
                                   "reason": m.group("reason").strip()})
                continue
            m = _SUMMARY.match(line)
            if m:
                record(m.group("nodeid"), m.group("status"), msg=m.group("msg"))
            continue
        # progress lines printed before the header (piped output cut at the top)
        m = _XDIST.match(line) or (_PROGRESS.match(line) if region == "other" else None)
        if m:
            record(m.group("nodeid"), m.group("status"), reason=m.groupdict().get("reason"))
    flush_section()

    _attach_sections(results, sections)
    if not (results or totals is not None or seen_header):
        raise UnreadableInput(f"{source}: no pytest output found (no test results, no totals line)")
    run = PytestRun(list(results.values()), totals, duration, skip_lines, source, collected, deselected,
                    fatal_lines, interrupted)
    if totals is not None and totals.get("deselected"):
        run.deselected = totals["deselected"]
    return run


def _parse_totals(body: str) -> dict[str, int]:
    out: dict[str, int] = {}
    if body == "no tests ran":
        return out
    for count, word in re.findall(r"(\d+) ([a-z]+)", body):
        key = _TOTAL_WORDS.get(word, word)
        out[key] = out.get(key, 0) + int(count)
    return out


def _section_key(title: str, region: str) -> tuple[tuple[str, str], str | None]:
    m = _ERROR_TITLE.match(title)
    if m:
        return (m.group("name"), "error"), m.group("when") or "collect"
    return (title, "error" if region == "ERRORS" else "call"), None


def _section_message(body: list[str]) -> tuple[str, str | None]:
    """(message, exception type) from one FAILURES/ERRORS section body."""
    cut = next((i for i, line in enumerate(body) if re.match(r"^-{3,} Captured .* -{3,}$", line)), len(body))
    body = [line for line in body[:cut] if not _XDIST_PLATFORM.match(line)]
    # the last block of "E   " lines: the final exception of a chain
    blocks: list[list[tuple[int, str]]] = []
    previous = -2
    for i, line in enumerate(body):
        if line == "E" or line.startswith("E "):
            if i != previous + 1:
                blocks.append([])
            blocks[-1].append((i, line[1:]))
            previous = i
    if blocks:
        block = blocks[-1]
        texts = [t for _, t in block]
        indent = min((len(t) - len(t.lstrip()) for t in texts if t.strip()), default=0)
        texts = [t[indent:] for t in texts]
        exc_type = None
        after = block[-1][0] + 1
        for line in body[after:after + 3]:
            loc = _LOCATION.match(line)
            if loc:
                exc_type = loc.group("type")
                break
        first = _EXC_LINE.match(texts[0])
        if first:
            exc_type = first.group("type")
            texts[0] = first.group("msg")
        return "\n".join(texts).strip(), exc_type
    # --tb=native / long-form Python tracebacks: the last "Type: message" line group
    for i in range(len(body) - 1, -1, -1):
        m = _EXC_LINE.match(body[i])
        if m and not body[i].startswith(" "):
            rest = [line for line in body[i + 1:] if line.strip()]
            return "\n".join([m.group("msg"), *rest]).strip(), m.group("type")
    return "\n".join(line for line in body if line.strip()).strip(), None


def _attach_sections(results: dict[tuple[str, str], TestResult],
                     sections: dict[tuple[str, str], tuple[str | None, str, str | None]]) -> None:
    by_head: dict[tuple[str, str], tuple[str, str]] = {}
    for nodeid, slot in results:
        head = nodeid.split("::", 1)[1].replace("::", ".") if "::" in nodeid else nodeid
        by_head[(head, slot)] = (nodeid, slot)
        by_head[(nodeid, slot)] = (nodeid, slot)
    for (title, slot), (when, message, exc_type) in sections.items():
        key = by_head.get((title, slot))
        crashed = _WORKER_CRASH.search(message)
        if key is None and crashed:  # xdist titles a crashed worker's section with the file name
            key = by_head.get((crashed.group("nodeid"), slot))
        if key is None:
            outcome = "error" if slot == "error" else "failed"
            if message.startswith("[XPASS(strict)]"):
                outcome = "xpassed"
            results[(title, slot)] = TestResult(title, outcome, strict=outcome == "xpassed")
            key = (title, slot)
        result = results[key]
        if message:
            result.message, result.truncated = message, False
        if exc_type:
            result.exc_type = exc_type
        if when:
            result.when = when
        if message.startswith("[XPASS(strict)]"):
            result.outcome, result.strict = "xpassed", True


# ---------------------------------------------------------------------------------------
# benchmark JSONL
# ---------------------------------------------------------------------------------------
@dataclasses.dataclass
class BenchData:
    """Valid records (the last one per name), and one ``file:line: why`` per bad line."""

    records: list[dict[str, Any]]
    problems: list[str]
    superseded: int = 0
    source: str = "<bench>"


def _number_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _check_phase(record: dict[str, Any], phase: str) -> str | None:
    stats = record.get(phase)
    if stats is None:
        return None if phase == "backward" else f"'{phase}' is null"
    if not isinstance(stats, dict):
        return f"'{phase}' is not an object"
    for key in ("mean1", "mean2", "ratio", "samples"):
        if key not in stats:
            return f"missing key '{phase}.{key}'"
        if not _number_or_none(stats[key]):
            return f"'{phase}.{key}' is not a number: {stats[key]!r}"
    return None


def parse_benchmarks(text: str, source: str = "<bench>") -> BenchData:
    """Parse the benchmark JSONL. Malformed lines become problems naming ``source:line``;
    raises :class:`UnreadableInput` only when there are lines but none is a valid record."""
    by_name: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    superseded = 0
    nonblank = 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        nonblank += 1
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"{source}:{number}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(record, dict):
            problems.append(f"{source}:{number}: not a JSON object")
            continue
        if not isinstance(record.get("name"), str) or not record.get("name"):
            problems.append(f"{source}:{number}: missing key 'name'")
            continue
        if "forward" not in record:
            problems.append(f"{source}:{number}: {record['name']}: missing key 'forward'")
            continue
        why = _check_phase(record, "forward") or _check_phase(record, "backward")
        if why:
            problems.append(f"{source}:{number}: {record['name']}: {why}")
            continue
        if record["name"] in by_name:
            superseded += 1
            del by_name[record["name"]]  # keep file order of the latest records
        by_name[record["name"]] = dict(record, line=number)
    if nonblank and not by_name:
        shown = "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else "")
        raise UnreadableInput(f"{source}: no valid benchmark record in {nonblank} line(s): {shown}")
    return BenchData(list(by_name.values()), problems, superseded, source)


# ---------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------
def read_text(path: str | Path) -> str:
    """A text file's content; :class:`UnreadableInput` naming the file when it cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UnreadableInput(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if b"\x00" in data[:4096]:
        raise UnreadableInput(f"{path}: binary file, not text")
    return data.decode("utf-8", errors="replace")


# ---------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------
_AIDGE_WHERE = re.compile(r"operator (?P<op>[\w<>]+)")
_TAG_PARTS = re.compile(r"^(?:\[XPASS\(strict\)\]\s*)?\[(?P<cat>[^\]]+)\] (?P<op>\S+) (?P<phase>\w+): (?P<error>[^\n]*)")
_EQUIV_HEAD = re.compile(r"^\[(?P<case>[^,\]]+)(?:, epoch (?P<epoch>\d+))?\] (?P<head>.*?)(?: \[seed \d+\])?$")
_WHAT_PHASE = (("weights after", "step"), ("input grad", "backward"), ("grad of", "backward"),
               ("initial weights", "export"), ("parameter", "export"), ("loss", "forward"),
               ("output", "forward"))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _signature(error: str) -> str:
    """An error without what differs from case to case (``[case, epoch N]``, the model
    classes, the seed), so that cases failing the same way group together."""
    error = re.sub(r"^\[[^\]]*\] ", "", error)
    error = re.sub(r" between model1 \([^)]*\) and model2 \([^)]*\)", "", error)
    return re.sub(r" \[seed \d+\]$", "", error).strip()


def _describe(result: TestResult, category: str) -> dict[str, Any]:
    """operator / phase / error (a signature shared by cases with the same defect) / detail."""
    message = result.message or ""
    operator, phase, error, detail = result.operator, None, _first_line(message), None
    tag = _TAG_PARTS.match(message)
    aidge = _AIDGE.search(result.full_message)
    crash = _CRASH_MSG.search(message)
    if tag:
        operator, phase, error = tag.group("op"), tag.group("phase"), _signature(tag.group("error"))
    elif _WORKER_CRASH.search(message):
        error = "the pytest-xdist worker running the case died (xdist does not report the signal)"
    elif crash:
        phase = crash.group("phase")
        error = f"process {crash.group('what')}" + (f" during {phase}" if phase else
                                                      f" {crash.group('outside')}" if crash.group("outside") else "")
        detail = f"innermost Python frame {crash.group('frame')}" if crash.group("frame") else None
    elif aidge:
        phase, error = aidge.group("phase"), aidge.group("msg").strip()
        where = _AIDGE_WHERE.search(aidge.group("where") or "")
        if where:
            operator = where.group("op")
    else:
        head = _EQUIV_HEAD.match(_first_line(message))
        if head:
            error = _signature(head.group("head"))
            what = _what_differs(message) or ""
            phase = next((p for prefix, p in _WHAT_PHASE if what.startswith(prefix)), None)
            bits = []
            if head.group("epoch") is not None:
                bits.append(f"epoch {head.group('epoch')}")
            mism = re.search(r"Mismatched elements: (\d+ / \d+)", message)
            if mism:
                bits.append(f"{mism.group(1)} elements")
            diff = re.search(r"Greatest absolute difference: (\S+)", message)
            if diff:
                bits.append(f"max abs diff {diff.group(1)}")
            shapes = re.search(r"Shapes do not match[^\n]*", message)
            if shapes:
                bits.append(shapes.group(0))
            detail = ", ".join(bits) or None
        elif result.exc_type and not error.startswith(result.exc_type):
            error = f"{result.exc_type.rsplit('.', 1)[-1]}: {error}"
    slower = _SLOWER.search(message)
    if category == "performance_regression" and phase is None and slower:
        phase = slower.group("phase")
    return {"operator": operator, "phase": phase, "error": error, "detail": detail}


def _finding(result: TestResult) -> dict[str, Any]:
    category, emoji = result.category() or ("unknown", "❓")
    return {
        "case": result.case,
        "nodeid": result.nodeid,
        "outcome": result.outcome,
        "when": result.when,
        "category": category,
        "emoji": emoji,
        "kind": kind_of(category),
        **_describe(result, category),
        "message": result.full_message,
    }


def _ratio_ok(stats: Any) -> bool:
    return (isinstance(stats, dict) and isinstance(stats.get("ratio"), (int, float))
            and math.isfinite(stats["ratio"]) and (stats.get("samples") or 0) > 0)


def _bench_entry(record: dict[str, Any], phase: str) -> dict[str, Any]:
    stats = record[phase]
    bridge = stats.get("bridge2")
    return {"name": record["name"], "operator": operator_of(record["name"]), "phase": phase,
            "ratio": stats["ratio"], "torch_ms": _ms(stats.get("mean1")), "aidge_ms": _ms(stats.get("mean2")),
            "bridge_ms": _ms(bridge) if _number_or_none(bridge) else None,
            "aidge_timed": stats.get("timed2") if isinstance(stats.get("timed2"), str) else None,
            "samples": stats.get("samples")}


def _ms(seconds: Any) -> float | None:
    return None if seconds is None else seconds * 1e3


def _ratio_stats(values: list[float]) -> dict[str, Any] | None:
    if not values:
        return None
    return {"median": statistics.median(values), "max": max(values), "min": min(values),
            "geomean": math.exp(statistics.fmean(math.log(v) for v in values)) if all(v > 0 for v in values) else None}


def build_report(run: PytestRun | None = None, bench: BenchData | None = None, *,
                 threshold: float = 10.0, worst: int = 10) -> dict[str, Any]:
    """The whole report as a JSON-able dict (what ``--json`` prints)."""
    report: dict[str, Any] = {"threshold": threshold, "sources": {}, "problems": []}
    findings: list[dict[str, Any]] = []
    if run is not None:
        report["sources"]["pytest"] = run.source
        report["counts"] = run.counts()
        report["pytest_totals"] = run.totals
        report["duration_s"] = run.duration_s
        report["incomplete"] = run.incomplete()
        for result in run.results:
            if result.outcome not in ("passed", "skipped"):
                findings.append(_finding(result))
    failing = [f for f in findings if f["outcome"] in ("failed", "error")]
    xfailed = [f for f in findings if f["outcome"] == "xfailed"]
    report["aidge_bugs"] = _group_bugs([f for f in failing + xfailed if f["kind"] == "aidge"])
    report["expected_failures"] = _by_category(xfailed)
    report["unexpected_passes"] = [
        {k: f[k] for k in ("case", "nodeid", "category", "emoji", "operator", "phase", "error")} | {"strict": True}
        for f in findings if f["outcome"] == "xpassed"]
    order = list(CATEGORY_TABLE)
    failing.sort(key=lambda f: (order.index(f["category"]), f["case"]))
    report["test_strategy"] = [_short(f) for f in failing if f["kind"] == "test_strategy"]
    report["unclassified"] = [_short(f) for f in failing if f["kind"] == "unknown"]
    report["failures_by_category"] = {c: len(v["cases"]) for c, v in _by_category(failing).items()}
    if run is not None:
        report["skipped"] = _skips(run)
    regressions = [dict(_short(f), source="pytest") for f in failing if f["kind"] == "performance"]
    if bench is not None:
        report["sources"]["benchmarks"] = bench.source
        report["problems"].extend(bench.problems)
        report["benchmarks"] = _bench_summary(bench, worst)
        for phase in ("forward", "backward"):
            for record in bench.records:
                if _ratio_ok(record.get(phase)) and record[phase]["ratio"] > threshold:
                    regressions.append(dict(_bench_entry(record, phase), source="benchmarks", category="performance_regression",
                                            emoji=CATEGORY_TABLE["performance_regression"][0]))
        regressions.sort(key=lambda r: -(r.get("ratio") or 0))
    report["performance_regressions"] = regressions
    return report


def _short(f: dict[str, Any]) -> dict[str, Any]:
    keys = ("case", "nodeid", "outcome", "when", "category", "emoji", "operator", "phase", "error", "detail")
    return {k: f[k] for k in keys}


def _group_bugs(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (operator, category, phase, error), grouped by operator."""
    order = list(CATEGORY_TABLE)
    groups: dict[tuple, dict[str, Any]] = {}
    for f in findings:
        key = (f["operator"], f["category"], f["phase"], f["error"], f["outcome"] == "xfailed")
        group = groups.setdefault(key, {
            "operator": f["operator"], "category": f["category"], "emoji": f["emoji"], "phase": f["phase"],
            "error": f["error"], "known": f["outcome"] == "xfailed", "cases": []})
        group["cases"].append({"case": f["case"], "nodeid": f["nodeid"], "detail": f["detail"]})
    by_operator: dict[str, list[dict[str, Any]]] = {}
    for group in groups.values():
        by_operator.setdefault(group["operator"], []).append(group)
    out = []
    for operator in sorted(by_operator, key=str.lower):
        entries = sorted(by_operator[operator], key=lambda g: (g["known"], order.index(g["category"])
                                                               if g["category"] in order else len(order)))
        out.append({"operator": operator, "new": sum(len(g["cases"]) for g in entries if not g["known"]),
                    "known": sum(len(g["cases"]) for g in entries if g["known"]), "bugs": entries})
    return out


def _by_category(findings: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for f in findings:
        entry = out.setdefault(f["category"], {"emoji": f["emoji"], "count": 0, "cases": []})
        entry["count"] += 1
        entry["cases"].append(f["case"])
    order = list(CATEGORY_TABLE)
    return dict(sorted(out.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


def _skips(run: PytestRun) -> list[dict[str, Any]]:
    reasons: dict[str, int] = {}
    for line in run.skip_lines:
        reasons[line["reason"]] = reasons.get(line["reason"], 0) + line["count"]
    if not reasons:
        for r in run.results:
            if r.outcome == "skipped":
                reasons[r.message or "(no reason shown)"] = reasons.get(r.message or "(no reason shown)", 0) + 1
    return [{"reason": k, "count": v} for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])]


def _bench_summary(bench: BenchData, worst: int) -> dict[str, Any]:
    operators: dict[str, dict[str, Any]] = {}
    for record in bench.records:
        op = operators.setdefault(operator_of(record["name"]), {"cases": 0, "forward": [], "backward": []})
        op["cases"] += 1
        for phase in ("forward", "backward"):
            if _ratio_ok(record.get(phase)):
                op[phase].append(record[phase]["ratio"])
    per_operator = {name: {"cases": v["cases"], "forward": _ratio_stats(v["forward"]),
                           "backward": _ratio_stats(v["backward"])}
                    for name, v in sorted(operators.items(), key=lambda kv: kv[0].lower())}
    ranked = {}
    for phase in ("forward", "backward"):
        entries = [_bench_entry(r, phase) for r in bench.records if _ratio_ok(r.get(phase))]
        ranked[phase] = sorted(entries, key=lambda e: -e["ratio"])[:worst]
    untimed = [r["name"] for r in bench.records if not _ratio_ok(r.get("forward"))]
    return {"records": len(bench.records), "superseded": bench.superseded, "untimed": untimed,
            "per_operator": per_operator, "worst_forward": ranked["forward"], "worst_backward": ranked["backward"]}


# ---------------------------------------------------------------------------------------
# text
# ---------------------------------------------------------------------------------------
def _fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"x{x:.2f}"


def _fmt_ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f} ms"


def _fmt_times(e: dict[str, Any]) -> str:
    """``(torch 0.135 ms, Aidge 0.012 ms, bridge +0.030 ms, 8 samples)``: Aidge's own time
    (its scheduler, when the record says so), the bridge's overhead apart."""
    aidge = "Aidge" if e.get("aidge_timed") in (None, "aidge scheduler") else "model2 call"
    bridge = f", bridge +{_fmt_ms(e['bridge_ms'])}" if e.get("bridge_ms") is not None else ""
    samples = f", {e['samples']} sample(s)" if e.get("samples") else ""
    return f"(torch {_fmt_ms(e['torch_ms'])}, {aidge} {_fmt_ms(e['aidge_ms'])}{bridge}{samples})"


def _clip(text: str | None, width: int = 160) -> str:
    text = (text or "").replace("\n", " ")
    return text if len(text) <= width else text[:width - 3] + "..."


def format_report(report: dict[str, Any]) -> str:
    """The report as text, one section per question."""
    out: list[str] = []
    add = out.append
    sources = ", ".join(f"{k}: {v}" for k, v in report["sources"].items()) or "no input"
    add(f"Aidge <-> PyTorch interop results ({sources})")
    if report.get("incomplete"):
        add("")
        add("== RUN INCOMPLETE: the counts below are partial, do not read them as a clean run ==")
        for why in report["incomplete"]:
            add(f"  ⚠️ {why}")
        add("")
    if "counts" in report:
        counts = report["counts"]
        line = ", ".join(f"{counts[o]} {o}" for o in OUTCOMES if counts.get(o))
        strict = sum(1 for p in report["unexpected_passes"] if p.get("strict"))
        note = f" (strict XPASS counted by pytest as failed: {strict})" if strict else ""
        took = f" in {report['duration_s']:.1f}s" if report.get("duration_s") is not None else ""
        add(f"pytest: {line or 'no tests'}{took}{note}")

    bugs = report["aidge_bugs"]
    new = sum(g["new"] for g in bugs)
    known = sum(g["known"] for g in bugs)
    add("")
    add(f"== Aidge bugs to report: {len(bugs)} operator(s), {new} new failure(s), {known} known (xfail) ==")
    if not bugs:
        add("  none")
    for group in bugs:
        add(f"{group['operator']}")
        for bug in group["bugs"]:
            state = "known" if bug["known"] else "NEW"
            phase = f" [{bug['phase']}]" if bug["phase"] else ""
            add(f"  {bug['emoji']} {bug['category']} ({state}){phase}: {_clip(bug['error'])}")
            for case in bug["cases"]:
                detail = f" ({_clip(case['detail'], 120)})" if case["detail"] else ""
                add(f"      - {case['case']}{detail}")

    add("")
    expected = report["expected_failures"]
    add(f"== Expected failures by category: {sum(v['count'] for v in expected.values())} ==")
    if not expected:
        add("  none")
    for category, entry in expected.items():
        add(f"  {entry['emoji']} {category:<32} {entry['count']:>4}")

    passes = report["unexpected_passes"]
    if passes:
        add("")
        add(f"== Unexpected passes (strict XPASS: Aidge fixed? update interop/expected_failures.py): {len(passes)} ==")
        for p in passes:
            add(f"  ✅ {p['case']}: was expected {p['category']} ({p['operator']} {p['phase']}): {_clip(p['error'], 120)}")

    add("")
    regressions = report["performance_regressions"]
    add(f"== Performance regressions (slowdown over x{report['threshold']:g}): {len(regressions)} ==")
    if "benchmarks" not in report and not regressions:
        add("  no benchmark JSONL given (--bench results/benchmarks.jsonl)")
    elif not regressions:
        add("  none")
    for r in regressions:
        if r["source"] == "benchmarks":
            add(f"  🐢 {r['name']:<36} {r['phase']:<8} {_fmt_ratio(r['ratio']):>9}  {_fmt_times(r)}")
        else:
            add(f"  🐢 {r['case']} (pytest): {_clip(r['error'], 120)}")

    add("")
    strategy = report["test_strategy"]
    add(f"== Test-strategy issues (fix the suite, not Aidge): {len(strategy)} ==")
    if not strategy:
        add("  none")
    for f in strategy:
        when = f" ({f['outcome']} at {f['when']})" if f["outcome"] == "error" and f["when"] else ""
        detail = f" [{_clip(f['detail'], 80)}]" if f["detail"] else ""
        add(f"  {f['emoji']} {f['category']}: {f['case']}{when}: {_clip(f['error'], 140)}{detail}")

    if report["unclassified"]:
        add("")
        add(f"== Unclassified failures (no rule matched): {len(report['unclassified'])} ==")
        for f in report["unclassified"]:
            add(f"  ❓ {f['case']} ({f['outcome']}): {_clip(f['error'], 140)}")

    if report.get("skipped"):
        add("")
        add(f"== Skipped: {sum(s['count'] for s in report['skipped'])} ==")
        for s in report["skipped"]:
            add(f"  {s['count']:>4}  {_clip(s['reason'], 140)}")

    bench = report.get("benchmarks")
    if bench is not None:
        add("")
        extra = f", {bench['superseded']} older duplicate(s) ignored" if bench["superseded"] else ""
        add(f"== Benchmarks per operator (Aidge time / torch time; {bench['records']} case(s){extra}) ==")
        add("  Aidge time = its scheduler's forward/backward inside the AidgeModule call; the bridge's "
            "overhead is shown apart (bridge +...)")
        add(f"  {'operator':<20} {'cases':>5}  {'fwd median':>10} {'fwd max':>9}  {'bwd median':>10} {'bwd max':>9}")
        for name, op in bench["per_operator"].items():
            fwd, bwd = op["forward"] or {}, op["backward"] or {}
            add(f"  {name:<20} {op['cases']:>5}  {_fmt_ratio(fwd.get('median')):>10} {_fmt_ratio(fwd.get('max')):>9}"
                f"  {_fmt_ratio(bwd.get('median')):>10} {_fmt_ratio(bwd.get('max')):>9}")
        for phase in ("forward", "backward"):
            entries = bench[f"worst_{phase}"]
            add("")
            add(f"== Ten worst {phase} slowdowns ==")
            if not entries:
                add("  none timed")
            for i, e in enumerate(entries, 1):
                add(f"  {i:>2}. {e['name']:<36} {_fmt_ratio(e['ratio']):>9}  {_fmt_times(e)}")
        if bench["untimed"]:
            add(f"  no forward timing for: {', '.join(bench['untimed'])}")

    if report["problems"]:
        add("")
        add(f"== Input problems (lines skipped): {len(report['problems'])} ==")
        for p in report["problems"]:
            add(f"  {p}")
    return "\n".join(out) + "\n"
