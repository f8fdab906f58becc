"""Reading pytest's console output: :func:`parse_pytest_output` -> :class:`PytestRun` (one
:class:`TestResult` per test, pytest's totals, skip lines, what says the run is incomplete).

Any verbosity: ``-v`` progress lines (``tests/x.py::test[id] PASSED [ 4%]``), xdist ones
(``[gw0] [  4%] PASSED tests/x.py::test[id]``), the short test summary of ``-ra``/``-rA``
(``FAILED nodeid - message``, ``XFAIL nodeid - reason``, ``SKIPPED [1] path:line: reason``),
the FAILURES / ERRORS sections (where the full, untruncated message is read from the ``E``
lines) and the final totals line (``11 failed, 10 passed in 14.85s``). ``-q`` without
``-rA`` lists no passes: their count comes from the totals line.

The operator of a case is the case id (the test's parameter id, e.g. ``Conv2D_stride_2``) up
to its first ``_`` (:func:`case_id`, :func:`operator_of`).
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any

from ..categories import categorize
from ..reading import UnreadableInput
from ..records.sources import case_id, operator_of

__all__ = [
    "OUTCOMES",
    "TestResult",
    "PytestRun",
    "case_id",
    "operator_of",
    "parse_pytest_output",
]

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
WORKER_CRASH_RE = re.compile(r"worker '\w+' crashed while running '(?P<nodeid>[^']+)'")
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
    #: ``test session starts`` headers in the output (more than one: outputs concatenated; the
    #: last session is the one read)
    sessions: int = 1

    def incomplete(self) -> list[str]:
        """Why this run cannot be taken as complete (empty when it can): no totals line, a
        process that died, an interruption, collected items without a result, failures the
        output counts but does not itemise."""
        why = []
        if self.sessions > 1:
            why.append(f"the output holds {self.sessions} pytest sessions (outputs concatenated?): only the last "
                       "one is read; analyse each output on its own")
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


def _clean(line: str) -> str:
    return _ANSI.sub("", line).rstrip("\r\n").rstrip()


def parse_pytest_output(text: str, source: str = "<input>") -> PytestRun:
    """Read pytest's console output (any verbosity, with or without xdist). Raises
    :class:`UnreadableInput` when ``text`` holds nothing recognisable as pytest output."""
    lines = [_clean(line) for line in text.splitlines()]
    # two outputs run together (a complete run, then a killed one) are not one run: the last
    # session is read, and the run is incomplete
    headers = [i for i, line in enumerate(lines) if (b := _BANNER.match(line)) and b.group("title") == "test session starts"]
    sessions = len(headers)
    if sessions > 1:
        lines = lines[headers[-1]:]
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
                    fatal_lines, interrupted, sessions)
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
        crashed = WORKER_CRASH_RE.search(message)
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
