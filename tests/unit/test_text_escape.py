"""Record text in the reports' Markdown and on the console goes through one module
(interop/reporting/text_escape.py). Before: a message's raw ``<script>`` and ``<img onerror>`` sat
outside code spans in ISSUE.md and defects.md, and its ESC/BEL bytes changed the terminal's title
when ``cat`` showed the file."""
from __future__ import annotations

import html as html_lib
import re

import pytest
from markdown_it import MarkdownIt

from interop.reporting import defect_issue_text, ledger_pages, ledger_slow, porting, support, text_escape

HOSTILE = ("<script>alert(1)</script> <img src=x onerror=alert(2)> ``` `` ` | *b* _i_ [l](javascript:x) "
           "\x1b]0;pwned\x07\x1b[2J\x00\r\n# heading\n- item \u2028\u202e $x$ &#x3c;script&#x3e; \\")
RAW_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202e]")
_MD = MarkdownIt("commonmark", {"html": True}).enable("table")


def _html(markdown: str) -> str:
    return _MD.render(markdown)


def _no_active_html(markdown: str) -> None:
    """Rendered (raw HTML allowed, as GitHub allows some), the page has no script or img element and
    no control character: the hostile text is shown, never acted on."""
    html = _html(markdown)
    assert "<script" not in html and "<img" not in html, html
    assert not RAW_CONTROLS.search(markdown.replace("\n", "").replace("\t", "")), repr(RAW_CONTROLS.search(markdown))


def test_controls_are_escapes_and_printable_text_is_kept():
    assert text_escape.controls("a\x1b]0;t\x07b\x00\r\n\u2028\u202e\x9b") == \
        "a\\x1b]0;t\\x07b\\x00\\r\\n\\u2028\\u202e\\x9b"
    assert text_escape.controls("été 日本 ✅ ⚠️ C:\\Users") == "été 日本 ✅ ⚠️ C:\\Users"
    assert text_escape.controls("a\nb\tc", keep="\n\t") == "a\nb\tc"
    assert text_escape.terminal(HOSTILE).isprintable()
    big = "\x1b" * 100_000
    assert text_escape.controls(big) == "\\x1b" * 100_000


@pytest.mark.parametrize("value", ["plain", "`", "``", "a ``` b", "`start", "end`", " both ", "",
                                   "x" * 100_000 + "`" * 7, HOSTILE])
def test_a_code_span_holds_its_text_whatever_backticks_it_has(value):
    span = text_escape.code(value)
    html = _html(span)
    assert html.startswith("<p><code>") and html.rstrip().endswith("</code></p>") and html.count("<code>") == 1, html
    ticks = re.match(r"`+", span).group()
    assert len(ticks) > max((len(r) for r in re.findall(r"`+", value)), default=0)
    if value.strip() and value.isprintable():  # shown as it is (markdown-it escapes <, > and & in a code span)
        inner = html[len("<p><code>"):html.rindex("</code>")]
        assert html_lib.unescape(inner) == value


def test_a_code_span_in_a_table_cell_keeps_the_cell():
    md = "| a | b |\n|---|---|\n| " + text_escape.code("x | y", table=True) + " | z |\n"
    html = _html(md)
    assert html.count("<td>") == 2 and "<code>x | y</code>" in html, html


@pytest.mark.parametrize("value", ["```\nnot closed\n```", "~~~\n````` x", HOSTILE, "a\r\nb"])
def test_a_fence_is_longer_than_any_backtick_run_and_never_closes_early(value):
    lines = text_escape.fence(value, "python")
    html = _html("\n".join(lines) + "\n\nafter\n")
    assert html.count("<pre>") == 1 and html.rstrip().endswith("<p>after</p>"), html
    assert "<script" not in html and not RAW_CONTROLS.search("\n".join(lines).replace("\n", "").replace("\t", ""))
    assert text_escape.fence("x", "py`thon\n")[0] == "```python"  # the info string is fixed text


def test_prose_is_shown_not_acted_on():
    md = text_escape.text(HOSTILE)
    html = _html(md)
    assert "<script" not in html and "<img" not in html and "<a " not in html and "<em>" not in html, html
    assert "\n" not in md and "<h1>" not in html
    cell = _html("| a |\n|---|\n| " + text_escape.text("x | y") + " |\n")
    assert cell.count("<td>") == 1, cell
    assert text_escape.text("fn_upcat_2_Slice") == "fn_upcat_2_Slice"  # no noise where nothing is active
    assert text_escape.anchor("D-12AB<x>") == "d-12abx"


def _defect(**over):
    e = {"id": "D-1234abcd", "title": HOSTILE, "kind": "error", "component": "aidge_core", "phase": "forward",
         "backend": "cpu", "dtype": "float32", "error": HOSTILE, "aidge_said": HOSTILE, "repro_line": HOSTILE,
         "cases": [HOSTILE, "t.py::test[`x`]"], "known": 0, "new": 2, "sources": {HOSTILE: 2},
         "blocks": {"architectures": [HOSTILE], "models": []}, "releases": [HOSTILE], "since": HOSTILE,
         "rows": [HOSTILE], "reproducer": HOSTILE, "reproducer_nodes": 1, "issue": HOSTILE, "standalone": HOSTILE}
    e.update(over)
    return e


def test_defects_md_quotes_every_record_field(tmp_path):
    md = ledger_pages.format_ledger_md([_defect()], headline=HOSTILE)
    _no_active_html(md)
    html = _html(md)
    assert html.count("<h2>") == 1 and "<h1>" in html and html.count("<h1>") == 1  # no heading smuggled in
    assert md.count("\n|") == 3  # the table: header, rule, one row (no row broken by a newline)
    assert "\\x1b]0;pwned\\x07" in md  # the escape is shown


def test_issue_md_quotes_every_record_field(tmp_path):
    md = defect_issue_text.issue_text(_defect(reproducer=None), tmp_path, versions={"aidge_core": HOSTILE},
                                 problem=HOSTILE)
    _no_active_html(md)
    assert _html(md).count("<h1>") == 1


def test_slow_issue_md_quotes_every_record_field():
    e = {"id": "S-1", "component": HOSTILE, "title": HOSTILE, "op_type": HOSTILE, "operator": HOSTILE,
         "input_shapes": [HOSTILE], "attributes": {HOSTILE: HOSTILE}, "ratio_ort": 4.0, "threshold": 3,
         "alone_error": HOSTILE, "models": {HOSTILE: {"nodes": 1, "share": 0.5, "cost_s": 0.001}},
         "reproducer": HOSTILE, "profiled": {"started": HOSTILE, "command": HOSTILE, "rounds": 3,
                                             "uptime_at_end": HOSTILE}}
    _no_active_html(ledger_slow.slow_issue_text(e, versions={"aidge_core": HOSTILE}))


def test_support_and_porting_markdown_quote_record_fields():
    records = [{"kind": "operator", "operator": HOSTILE, "source": HOSTILE, "outcome": "failed", "phase": "forward",
                "category": HOSTILE, "case": HOSTILE, "nodeid": "t::x", "aidge_operator": HOSTILE}]
    md = support.format_markdown(support.support_matrix(records), lines=[HOSTILE])
    _no_active_html(md)
    assert _html(md).count("<tr>") == 2  # header and one row: no cell split
    arch = [{"kind": "architecture", "case": "arch_x_eval", "operator": HOSTILE, "outcome": "failed",
             "exporter": "torchscript", "export_route": "torchscript", "onnx_nodes": 3, "phase": "import",
             "category": "unsupported_operator", "aidge_operator": HOSTILE, "aidge_node": HOSTILE, "error": HOSTILE}]
    md = porting.format_markdown(porting.porting_table(arch), lines=[HOSTILE])
    _no_active_html(md)


def test_the_porting_command_line_prints_no_raw_control(tmp_path, capsys):
    (tmp_path / "records.jsonl").write_text("{not json\x1b]0;t\x07\n")
    code = porting.main([str(tmp_path)])
    out = capsys.readouterr()
    assert not RAW_CONTROLS.search(out.out + out.err.replace("\n", "")), out
    assert code in (1, 2)
