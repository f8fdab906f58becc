"""The run folder's pages rendered from Jinja2 templates (interop/reporting/pages.py, templates/):
each template renders a tiny context; HTML templates autoescape what they quote (a ``<script>`` in
a title is text, quotes stay inside their attribute) as html.escape writes it, Markdown templates
escape through text_escape's filters; a key the context lacks is an error."""
from __future__ import annotations

import html

import pytest
from jinja2 import UndefinedError

from interop.reporting import ledger_pages, onnx_scoreboard, pages, porting, support

EVIL = "<script>alert('x')</script> | \"q\" & `t`"
ESCAPED = "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; | &quot;q&quot; &amp; `t`"


def _entry(**over):
    e = {"id": "D-1234abcd", "title": EVIL, "kind": "error", "component": "aidge_core", "phase": "forward",
         "backend": "cpu", "error": "boom", "cases": ["t.py::test[a]"], "known": 1, "new": 0,
         "sources": {"OpInfo": 1}, "blocks": {"architectures": [], "models": []}, "releases": ["0.10.1"],
         "reached_from_torch": True, "torch_cases": 1, "torch_rows": {}}
    e.update(over)
    return e


def _table(**cell_over):
    cell = {"exports": "12 nodes", "nodes": 12, "import": "no", "forward": {"eval": "unsupported_operator"},
            "backward": "-", "cases": ["t.py::x"], "defects": ["D-1234abcd"],
            "blocking": {"mode": "eval", "phase": "import", "operator": "IsNaN", "node": "n'1", "attribution": "aidge",
                         "unsupported": [], "category": "unsupported_operator", "error": EVIL, "full_error": EVIL}}
    cell.update(cell_over)
    return {"routes": ["torchscript"], "rows": [{"architecture": "monai_<b>", "library": "monai",
                                                  "routes": {"torchscript": cell}}],
            "summary": {"torchscript": {"architectures": 1, "exports": 1, "imports": 0, "forward_eval": 0,
                                        "forward_train": 0, "backward": 0}}}


def _matrix():
    cell = {"operator": "torch.<i>", "source": "OpInfo", "phase": "forward", "backend": "cpu", "dtype": "float32",
            "passed": 0, "total": 1, "skipped": 0, "lost": 0, "categories": {"aidge_error": 1}, "failing": [EVIL],
            "failing_nodeids": ["t.py::x"], "aidge_operators": [], "routes": {}}
    return {"cells": [cell], "columns": [{"phase": "forward", "backend": "cpu", "dtype": "float32"}],
            "operators": support.operator_status([cell])}


def _board():
    counts = {"run": 2, "passed": 1, "failed": {"aidge_error": 1}, "skipped": 0, "defects": ["D-1234abcd", EVIL]}
    return {"operators": {EVIL: counts}, "groups": {"node": counts}, "skipped": {EVIL: 1}, "totals": counts}


def test_defects_html_escapes_a_script_in_a_title():
    page = ledger_pages.format_ledger_html([_entry()], headline=EVIL)
    assert "<script>alert" not in page and ESCAPED in page
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</html>")  # no newline at its end, as before
    assert "<tr id='D-1234abcd' data-kind='error'>" in page


def test_defects_md_escapes_through_text_escape():
    md = ledger_pages.format_ledger_md([_entry()], headline=EVIL)
    assert "<script>" not in md and "## D-1234abcd: \\<script\\>alert" in md and md.startswith("# Aidge defects of this run\n")


def test_porting_pages_escape_what_they_quote():
    page = porting.format_html(_table(), lines=[EVIL])
    assert "<script>alert" not in page and f"<p>{ESCAPED}</p>" in page
    assert "<code>monai_&lt;b&gt;</code>" in page and 'href="defects.html#D-1234abcd"' in page
    md = porting.format_markdown(_table(), lines=[EVIL])
    assert "<script>" not in md and "monai\\_\\<b\\>" in md


def test_support_pages_escape_what_they_quote():
    page = support.format_html(_matrix(), lines=[EVIL], defects={"t.py::x": ["D-1234abcd"]})
    assert "<script>alert" not in page and f"<li>{ESCAPED}</li>" in page and "<code>torch.&lt;i&gt;</code>" in page
    md = support.format_markdown(_matrix(), lines=[EVIL])
    assert "<script>" not in md and "`torch.<i>`" in md  # the operator in a code span, where it is text


def test_conformance_pages_escape_what_they_quote():
    page = onnx_scoreboard.render_html(_board(), linked={"D-1234abcd"}, lines=[EVIL + "\x1b"])
    assert "<script>alert" not in page and f"<p>{ESCAPED}\\x1b</p>" in page
    assert '<a class="defect" href="defects.html#D-1234abcd">D-1234abcd</a>' in page
    md = onnx_scoreboard.render_markdown(_board(), linked={"D-1234abcd"})
    assert "<script>" not in md and "[D-1234abcd](defects.html#D-1234abcd)" in md


def test_html_autoescaping_writes_what_html_escape_writes():
    # a template from a string is autoescaped as an HTML one; quotes as html.escape writes them
    out = pages.environment().from_string("<a title='{{ v }}'>{{ v }}</a>").render(v=EVIL)
    assert out == f"<a title='{html.escape(EVIL)}'>{html.escape(EVIL)}</a>"


def test_markdown_templates_are_not_autoescaped():
    env = pages.environment()
    assert env.autoescape("defects.html.j2") is True and env.autoescape("defects.md.j2") is False


def test_a_key_the_context_lacks_fails_loudly():
    with pytest.raises(UndefinedError):
        pages.render("porting.md.j2", title="t", lines=[], headline=[])


def test_nav_names_a_missing_page_without_a_link():
    nav = pages.nav_html("support.html", {"defects.html"})
    assert nav.startswith("<nav><b>Support matrix</b>") and '<a href="defects.html">Defects</a>' in nav
    assert '<span title="not in this folder">Porting readiness</span>' in nav and nav == porting.nav_html(
        "support.html", {"defects.html"})
