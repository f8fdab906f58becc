"""Every link resolves (issue 61): each relative link of a run folder's pages (``support.html``,
``defects.html``, ``porting.html``, ``conformance.html``, their ``.md`` and each defect's ``ISSUE.md``) names a file of
the folder, and each section it points at (``#D-xxxxxxxx``) is there; each relative link of the
README and of ``docs/`` names a file of the repository. Before: a run without an architecture case
wrote no ``porting.html``, and its pages' "Porting readiness" link led nowhere."""
from __future__ import annotations

import html.parser
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from interop.reporting.ledger import write_ledger
from interop.reporting.porting import porting_table, write_porting
from interop.reporting.support import support_matrix, write_support

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
MD_LINK = re.compile(r"\]\(<?([^)\s>]+)>?\)")


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.links.append(value)
            elif name in ("id", "name") and value:
                self.ids.add(value)


def _relative(link: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", link, re.I) and not link.startswith("//")


def _ids(path: Path) -> set[str] | None:
    """The anchors of an HTML page (None for another file: its sections are not checked)."""
    if path.suffix != ".html":
        return None
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.ids


def broken_links(folder: Path) -> list[str]:
    """Every relative link of the HTML and Markdown pages under ``folder`` that names no file
    (``page -> link``), or a section the page it names does not hold."""
    broken = []
    for page in sorted(folder.rglob("*")):
        if page.suffix == ".html":
            parser = _Links()
            parser.feed(page.read_text(encoding="utf-8"))
            links = parser.links
        elif page.suffix == ".md":
            links = MD_LINK.findall(page.read_text(encoding="utf-8"))
        else:
            continue
        for link in filter(_relative, links):
            target, _, anchor = link.partition("#")
            path = (page.parent / target).resolve() if target else page
            if not path.exists():
                broken.append(f"{page.relative_to(folder)} -> {link}")
            elif anchor and (ids := _ids(path)) is not None and anchor not in ids:
                broken.append(f"{page.relative_to(folder)} -> {link} (no such section)")
    return broken


SUITE = ("import pytest\n\ndef test_pass():\n    pass\n\ndef test_fail():\n    assert 0\n\n"
         "@pytest.mark.skip(reason='no')\ndef test_skip():\n    pass\n")


def test_every_link_of_a_generated_run_folder_resolves(tmp_path):
    """A run folder as ``nox -s report`` writes it (no architecture case: no porting.html)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_sample.py").write_text(SUITE)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for name in ("INTEROP_RESULTS_DIR", "INTEROP_TIMING_PASS", "INTEROP_REPRODUCERS"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-m", "interop.reporting.run", "test_sample.py"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr[-3000:]  # a failure without a row of the table
    (run,) = (project / "results" / "runs").iterdir()
    assert (run / "support.html").is_file() and (run / "defects.html").is_file()
    assert not (run / "porting.html").exists()
    assert broken_links(run) == []
    nav = re.search(r"<nav>.*?</nav>", (run / "support.html").read_text(), re.DOTALL).group(0)
    assert 'href="defects.html"' in nav and "Porting readiness" in nav and "porting.html" not in nav
    assert "ONNX conformance" in nav and "conformance.html" not in nav and not (run / "conformance.html").exists()


def test_every_link_of_a_run_folder_with_architectures_resolves(tmp_path):
    """The ledger, the support matrix and the porting table of a real run's architecture records:
    each page links the others, each defect link its entry, each entry its ISSUE.md."""
    records = [r for r in map(json.loads, (DATA / "issue49_architecture_records.jsonl").read_text().splitlines())
               if r.get("kind") == "architecture" and r.get("event", "record") == "record"]
    ledger = write_ledger(tmp_path, records)
    write_support(tmp_path, support_matrix(records))
    write_porting(tmp_path, porting_table(records))
    assert ledger and {"support.html", "defects.html", "porting.html"} <= {p.name for p in tmp_path.iterdir()}
    assert 'href="porting.html"' in (tmp_path / "support.html").read_text()
    assert 'class="defect" href="defects.html#D-' in (tmp_path / "porting.html").read_text()
    assert broken_links(tmp_path) == []


def test_every_link_of_a_run_folder_with_onnx_backend_tests_resolves(tmp_path):
    """A run of onnx's backend tests (issue 60): the conformance scoreboard's page links the run's
    other pages and each defect id its row of defects.html; the other pages link it."""
    from interop.reporting.onnx_scoreboard import write_scoreboard
    from interop.reporting.porting import link_run_pages

    def rec(test, operator, outcome, category=None, error=""):
        return {"kind": "onnx_backend", "source": "ONNX backend tests", "case": f"onnx_node_{test}",
                "case_key": test, "label": test, "operator": operator, "aidge_operator": operator,
                "nodeid": f"tests/test_onnx_backend.py::test_onnx_backend[onnx_node_{test}]", "outcome": outcome,
                "category": category, "error": error, "attribution": "aidge", "phase": "forward", "backend": "cpu"}

    records = [rec("test_relu", "Relu", "passed"), rec("test_dropout_default", "Dropout", "xfailed", "outputs_differ",
                                                       "output differs"),
               rec("test_gridsample", "GridSample", "failed", "outputs_differ", "output differs"),
               rec("test_lstm", "LSTM", "xfailed", "unsupported_operator",
                   "Aidge has no native operator for 1 node(s): 'n' (ONNX op LSTM); they were imported as GenericOperator")]
    ledger = write_ledger(tmp_path, records, table_dir="/nonexistent")
    write_support(tmp_path, support_matrix(records))
    assert write_scoreboard(tmp_path, records)
    link_run_pages(tmp_path)
    page = (tmp_path / "conformance.html").read_text()
    assert len(ledger) == 3 and all(f'href="defects.html#{e["id"]}"' in page for e in ledger)
    for name in ("support.html", "defects.html"):
        assert 'href="conformance.html"' in (tmp_path / name).read_text(), name
    assert broken_links(tmp_path) == []


def test_the_check_finds_a_broken_link(tmp_path):
    (tmp_path / "a.html").write_text('<a href="b.html">b</a><a href="a.html#x">x</a><a id="y" href="#y">y</a>'
                                     '<a href="https://eclipse.dev/aidge/">web</a>')
    (tmp_path / "c.md").write_text("[a](a.html) [gone](gone.md)")
    assert broken_links(tmp_path) == ["a.html -> b.html", "a.html -> a.html#x (no such section)", "c.md -> gone.md"]


def _sections(page: Path) -> set[str]:
    """The anchors GitHub gives a Markdown page's headings (``## The API in a page`` ->
    ``the-api-in-a-page``; a repeated heading gets ``-1``, ``-2``...), code blocks left out."""
    out, seen, fenced = set(), {}, False
    for line in page.read_text(encoding="utf-8").splitlines():
        fenced ^= line.lstrip().startswith("```")
        heading = re.match(r"^#{1,6}\s+(.*)", line)
        if heading and not fenced:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            out.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
    return out


def test_every_link_of_the_readme_and_the_docs_names_a_file_and_section_of_the_repository():
    """The README's figures and the reference pages' dated logs moved (docs/costs.md,
    docs/journal.md): each link to them, and to a section of them, still lands."""
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for link in filter(_relative, MD_LINK.findall(page.read_text(encoding="utf-8"))):
            target, _, anchor = link.partition("#")
            path = page.parent / target if target else page
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)} -> {link}")
            elif anchor and path.suffix == ".md" and anchor not in _sections(path):
                broken.append(f"{page.relative_to(ROOT)} -> {link} (no such section)")
    assert broken == []


def test_the_readme_is_a_front_door():
    """At most 150 lines (issue 61: it had grown to 271, most of them dated figures): the figures
    are in docs/costs.md, the dated logs in docs/journal.md, and the README links both."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    assert "(docs/costs.md)" in readme and "(docs/journal.md)" in readme
    for section in ("## Set up", "## The main job", "## Run the tests", "## The API in a page", "## Where things are"):
        assert section in readme, section
