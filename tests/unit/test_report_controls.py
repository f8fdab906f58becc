"""Issue 44: control characters of the data (a terminal escape sequence in a configuration
file's name or a record's field) reach neither ``report.txt`` nor the console raw; the
report's text escapes them, through one helper, whatever section writes them."""
from __future__ import annotations

import re

import pytest

from interop.records.store import RunRecords
from interop.reporting import build_report
from interop.reporting.report_text import format_report, format_summary

ESC = "\x1b]0;owned\x07\x1b[2J"  # set the window title, clear the screen
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # any control but the line breaks


def _records() -> list[dict]:
    return [
        # an Aidge benchmark configuration whose file name and case carry escape sequences
        {"nodeid": f"tests/test_aidge_configs.py::test_aidge_config[aidge.relu_{ESC}]", "case": f"aidge.relu_{ESC}",
         "outcome": "failed", "source": "Aidge benchmark configs", "category": "aidge_error", "decided": "raise",
         "phase": "forward", "aidge_operator": f"ReLU{ESC}", "torch_op": "torch.relu", "attribution": "aidge",
         "config_file": f"/cfg/relu{ESC}.json", "error": f"boom{ESC}\u202eevil",
         "reports": [{"when": "call", "status": "failed", "duration": 0.1}]},
        {"nodeid": "tests/test_operators.py::test_K_interop[K_1]", "case": f"K_1\x1b[31m", "outcome": "skipped",
         "source": "catalog JSON", "skip_reason": f"no\x1b[5m reason\x00",
         "reports": [{"when": "setup", "status": "skipped", "duration": 0.1}]},
    ]


@pytest.fixture(scope="module")
def report() -> dict:
    run = RunRecords(_records(), {"complete": True, "pytest_counts": {"failed": 1, "skipped": 1}}, [], "records.jsonl")
    return build_report(run)


@pytest.mark.parametrize("write", [format_report, format_summary], ids=["report.txt", "console summary"])
def test_no_control_character_of_the_data_is_written_raw(report, write):
    text = write(report)
    assert not RAW.search(text), [line for line in text.splitlines() if RAW.search(line)]
    assert "\\x1b]0;owned\\x07\\x1b[2J" in text  # shown, escaped: the reader sees what the data holds
    assert "boom\\x1b" in text and "\\u202eevil" in text


def test_the_configuration_files_name_is_escaped_in_its_section(report):
    text = format_report(report)
    assert "  relu\\x1b]0;owned\\x07\\x1b[2J.json " in text  # the per-file section (aidge_files)


def test_a_skip_reason_is_escaped(report):
    text = format_report(dict(report, skipped=[{"reason": "no\x1b[5m reason\x00", "count": 1}]))
    assert "     1  no\\x1b[5m reason\\x00\n" in text


@pytest.mark.parametrize("raw, shown", [
    ("plain ✅ ⚠️ é", "plain ✅ ⚠️ é"),  # emoji, variation selectors, accents are no controls
    ("a\nb\tc\rd", "a\\nb\\tc\\rd"),  # a line break of the data cannot forge a report line
    ("\x00\x7f\x85\x9b", "\\x00\\x7f\\x85\\x9b"),  # C1 controls too (0x9b is a one-byte CSI)
    ("\u202e\u2066\u200f", "\\u202e\\u2066\\u200f"),  # bidirectional overrides, isolates, marks
])
def test_escape_controls(raw, shown):
    from interop.reporting.report_text import escape_controls

    assert escape_controls(raw) == shown
