"""Check the published benchmark site in a real headless browser, with the network blocked.

    python tools/check_site.py [--html-dir results/html] [--chromium /usr/bin/chromium]

Needs playwright (``pip install -r requirements/site-check.txt``) and a Chromium binary
(Debian: ``apt-get install chromium``; playwright's own browser download is not used).
``nox -s site-check`` does both installs' Python half and runs it; it skips, with the
reason, where no Chromium is installed.

What it does: serves ``--html-dir`` over HTTP on 127.0.0.1 (a page opened from disk stays
blank), opens it in headless Chromium with every request to another host aborted, and
checks that

1. nothing outside the local server was requested (the site renders offline: ``nox -s
   publish`` copies jQuery, flot... next to it) and no page raised a JavaScript error;
2. the grid (``index.html``) has one panel per benchmark, links "All cases" and "Support
   matrix", and *draws*: every panel whose benchmark has a figure (``graphs/summary/<name>.json``
   holds a value) shows pixels of the series colour on its canvas (counted in the page) and at
   the place of each commit's point (flot's own coordinates of the panel's data: two commits
   benchmarked, two points drawn), a panel without any figure says "no measurement", and a grid
   that draws nothing fails (asv's own grid draws lines only: with one commit benchmarked every
   panel is an empty box; ``case_index.py`` adds a dot per commit); it links "Defects" too;
3. ``support.html`` draws the matrix (a row per operator, cells with a verdict): torch rows
   before ``aidge.*``, marks as text (no emoji), failing cases closed behind a disclosure, the
   header and operator column in view when the table scrolls both ways; its search (an
   operator, a failing case id), its source filter and "only rows with a failure" are typed and
   clicked and the rows shown checked; ``porting.html``'s search and route filter likewise;
   ``defects.html`` has a row for every defect id the two pages link to, its search and kind
   filter work, the reports it links are on the site; ``conformance.html`` (the ONNX conformance
   scoreboard of the same run) has its operator rows, its defect ids linked to ``defects.html``;
   each of these pages links the others;
4. ``cases.html`` links every case of every operator and model of ``index.json``, each
   phase, and every operator and model has its section;
5. for one case per operator and model (the first), asv's graph page with that case
   selected draws a plot, and ``pair.html`` draws torch's and Aidge's times side by side
   with a table holding both figures and their ratio; where several backends were
   benchmarked (``env-INTEROP_BACKEND`` in ``index.json``: ``nox -s bench-export-cpp``),
   every backend has rows of its own in those tables.

``--run-dir results/runs/<run>`` checks a findings run's own pages the same way (the support
matrix, the porting table, the defect ledger, their links to each other), no asv site needed.

It prints what it checked and exits 1 on the first failed check (0 when all pass).
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import re
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools import case_index  # noqa: E402
from interop.reporting.report_text import sig3  # noqa: E402  (the standard library only: no torch needed)


class SiteError(AssertionError):
    pass


@contextlib.contextmanager
def serve(directory: Path):
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


@contextlib.contextmanager
def offline_page(directory: Path, chromium: str, viewport: tuple[int, int] = (1400, 900)):
    """``(page, base URL)``: headless Chromium on ``directory`` served at 127.0.0.1, every request
    to another host aborted. On leaving the block, a request that had to be blocked or a JavaScript
    error of a page is a :class:`SiteError` (after the block's own checks)."""
    from playwright.sync_api import sync_playwright

    blocked: list[str] = []
    js_errors: list[str] = []
    with serve(directory) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
        host = urlparse(base).netloc

        def route(r):
            if urlparse(r.request.url).netloc == host:
                r.continue_()
            else:
                blocked.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        page.on("pageerror", lambda e: js_errors.append(str(e)))
        yield page, base
        browser.close()
    if blocked:
        raise SiteError(f"requests outside the local server (blocked): {sorted(set(blocked))[:5]}")
    if js_errors:
        raise SiteError(f"JavaScript errors: {js_errors[:3]}")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the check prints its own summary
        pass


class _NoData(str):
    pass


def _ratio_values(html_dir: Path, index: dict, module: str, phase: str, value,
                  kind: str = "track_aidge_torch_ratio") -> set[str]:
    """Every value asv's site holds for the case's ``kind`` ratio (``track_aidge_torch_ratio``, or
    ``track_aidge_ort_ratio``; any environment, any commit), as the page writes them (3 significant
    digits, no exponent: pair.html's sig3 is the report's)."""
    name = f"{module}.{phase}.{kind}"
    params = (index.get("benchmarks", {}).get(name) or {}).get("params") or [[]]
    if value not in params[0]:
        return set()
    i = params[0].index(value)
    out = set()
    for path in (html_dir / "graphs").rglob(f"{name}.json"):
        for row in json.loads(path.read_text()):
            v = row[1][i] if isinstance(row[1], list) else row[1]
            if isinstance(v, (int, float)):
                out.add(sig3(v))
    return out


def _measured_case(html_dir: Path, index: dict, module: str, phases: dict[str, list[str]]) -> tuple[str, str]:
    """(phase, case) of the first case asv has a figure of (time_torch and time_aidge, any
    environment); the first case as a ``_NoData`` when it has none."""
    for phase, values in sorted(phases.items()):
        series = {}
        for side in ("torch", "aidge"):
            name = f"{module}.{phase}.time_{side}"
            params = index["benchmarks"].get(name, {}).get("params", [[]])[0]
            rows = []
            for path in html_dir.glob(f"graphs/**/{name}.json"):
                if "summary" in path.parts:
                    continue
                rows += json.loads(path.read_text(encoding="utf-8"))
            series[side] = (params, rows)
        for value in values:
            if all(value in params and any(isinstance(r[1], list) and r[1][params.index(value)] is not None
                                           for r in rows) for params, rows in series.values()):
                return phase, value
    phase, values = next(iter(sorted(phases.items())))
    return phase, _NoData(values[0])


#: in the page: per summary-grid panel, the pixels of the series colour on its flot canvas, and
#: per point of its data (a commit's figure) whether that colour is on the canvas where flot puts
#: the point (a 9x9 box around it: the dot the mended grid draws, or the line through it)
_GRID_INK = """() => {
  const probe = document.createElement('canvas').getContext('2d');
  probe.fillStyle = $.asv.colors[0];
  const hex = probe.fillStyle;  // normalised to #rrggbb
  const want = [1, 3, 5].map(i => parseInt(hex.slice(i, i + 2), 16));
  const inked = (px, i) => px[i + 3] > 0 && Math.abs(px[i] - want[0]) + Math.abs(px[i + 1] - want[1])
                           + Math.abs(px[i + 2] - want[2]) < 60;
  const out = {};
  document.querySelectorAll('.benchmark-plot').forEach(div => {
    const name = div.id.replace(/^summarygrid-/, '');
    const canvas = div.querySelector('canvas.flot-base');
    let ink = 0, points = 0, drawn = 0;
    if (canvas && canvas.width && canvas.height) {
      const ctx = canvas.getContext('2d');
      const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 0; i < px.length; i += 4) if (inked(px, i)) ink++;
      const plot = $(div).data('plot');
      if (plot) {
        const off = plot.getPlotOffset(), scale = canvas.width / (canvas.clientWidth || canvas.width);
        plot.getData().forEach(series => series.data.forEach(p => {
          if (!p || p[1] === null || p[1] === undefined) return;
          points++;
          const x = Math.round((off.left + series.xaxis.p2c(p[0])) * scale);
          const y = Math.round((off.top + series.yaxis.p2c(p[1])) * scale);
          const r = Math.ceil(4 * scale);
          let hit = false;
          for (let yy = Math.max(0, y - r); !hit && yy <= Math.min(canvas.height - 1, y + r); yy++)
            for (let xx = Math.max(0, x - r); !hit && xx <= Math.min(canvas.width - 1, x + r); xx++)
              hit = inked(px, (yy * canvas.width + xx) * 4);
          if (hit) drawn++;
        }));
      }
    }
    out[name] = {ink: ink, points: points, drawn: drawn, canvas: !!canvas,
                 text: div.classList.contains('no-measurement') ? div.textContent : ''};
  });
  return out;
}"""


def _summary_has_figure(html_dir: Path, name: str) -> int:
    """How many commits the grid's summary of ``name`` has a value for (0: no figure)."""
    path = html_dir / "graphs" / "summary" / f"{name}.json"
    if not path.is_file():
        return 0
    return sum(1 for row in json.loads(path.read_text(encoding="utf-8")) if row[1] is not None)


def judge_grid(figures: dict[str, int], drawn: dict[str, dict], panels: int) -> str:
    """The verdict on the summary grid from what the page measured (``_GRID_INK``): ``figures`` is
    each benchmark's count of commits with a value in ``graphs/summary``. Every panel with figures
    has ink and a drawn point for each of those commits (an empty box, or a panel that shows one of
    two benchmarked commits, fails); a grid that draws nothing fails; a panel without any figure
    says so. Raises :class:`SiteError`, else returns the line site-check prints."""
    blank = sorted(n for n, c in figures.items() if c and not drawn.get(n, {}).get("ink"))
    if blank:
        raise SiteError(f"index.html: {len(blank)} grid panel(s) with figures draw nothing (empty boxes), "
                        f"e.g. {blank[:4]}")
    short = sorted(f"{n} ({drawn.get(n, {}).get('drawn', 0)} of {c})" for n, c in figures.items()
                   if c and drawn.get(n, {}).get("drawn", 0) < c)
    if short:
        raise SiteError(f"index.html: {len(short)} grid panel(s) draw fewer points than the commits their summary "
                        f"holds, e.g. {short[:4]}")
    with_ink = [n for n in figures if drawn.get(n, {}).get("ink")]
    if not with_ink:
        raise SiteError(f"index.html: the summary grid is empty: none of its {panels} panels draws a figure "
                        "(benchmark a commit: asv run; then nox -s publish)")
    silent = sorted(n for n, c in figures.items() if not c and not drawn.get(n, {}).get("text"))
    if silent:
        raise SiteError(f"index.html: {len(silent)} panel(s) without any figure are blank instead of saying so, "
                        f"e.g. {silent[:4]}")
    commits = max(figures.values())
    full = sum(1 for c in figures.values() if c == commits)
    return (f"grid: {len(with_ink)} of {panels} panels draw their figures, a point per commit "
            f"({full} of them all {commits} commit(s), {sum(1 for n in with_ink if figures[n] < commits)} fewer), "
            f"{panels - len(with_ink)} say 'no measurement'; 'All cases', 'Support matrix' and 'Defects' linked")


def check_grid(page, base: str, html_dir: Path, index: dict) -> str:
    """``index.html``'s summary grid draws: each panel with figures has ink and a drawn point for
    each commit its summary holds, the others say so (:func:`judge_grid`)."""
    page.goto(base + "index.html")
    page.wait_for_selector(".benchmark-container", timeout=60_000)
    panels = page.locator(".benchmark-container").count()
    expected = len(index["benchmarks"])
    if panels < expected:
        raise SiteError(f"index.html: {panels} grid panels for {expected} benchmarks")
    if page.locator('a[href="cases.html"]').count() != 1:
        raise SiteError("index.html: no 'All cases' entry in the navigation bar")
    if page.locator('a[href="support.html"]').count() != 1:
        raise SiteError("index.html: no 'Support matrix' entry in the navigation bar")
    if page.locator('a[href="defects.html"]').count() != 1:
        raise SiteError("index.html: no 'Defects' entry in the navigation bar")
    # asv draws a panel when it scrolls into view: bring each one in and wait for its canvas or note
    figures = {name: _summary_has_figure(html_dir, name) for name in index["benchmarks"]}
    for name in index["benchmarks"]:
        plot = page.locator(f'[id="summarygrid-{name}"]')
        plot.scroll_into_view_if_needed()
        page.evaluate("() => window.dispatchEvent(new Event('scroll'))")
        try:
            page.wait_for_function(
                "id => { const d = document.getElementById(id); return d && (d.querySelector('canvas.flot-base') "
                "|| d.classList.contains('no-measurement')); }", arg=f"summarygrid-{name}", timeout=10_000)
        except Exception:  # playwright's TimeoutError: judged below with the rest
            pass
    return judge_grid(figures, page.evaluate(_GRID_INK), panels)


#: characters that need an emoji font (empty boxes in a Chromium without one)
_EMOJI = ("\u2705", "\u274c", "\u26a0", "\U0001f7e0", "\U0001f534", "\U0001f4a5")


def _visible_rows(page) -> list[dict]:
    return page.evaluate("""() => Array.from(document.querySelectorAll('#support tbody tr.row'))
        .filter(r => !r.hidden && r.offsetParent !== null)
        .map(r => ({op: r.querySelector('td.op').textContent, source: r.getAttribute('data-source'),
                    failing: r.getAttribute('data-failing'), text: r.textContent.toLowerCase()}))""")


def check_support_page(page, base: str) -> str:
    """``support.html`` draws the matrix (a row per operator, a cell per column) or says that no
    findings run exists yet; when it does: torch rows before Aidge's own (``aidge.*``), marks as
    text (no emoji), failing cases closed behind a disclosure, the header and first column stay
    in view when the table scrolls, and the search box and the source filter work (typed and
    clicked as a person does; the shown rows checked)."""
    page.goto(base + "support.html")
    if page.locator("#no-run").count():
        return "support.html: no findings run published yet (the page says so)"
    page.wait_for_selector("#support tbody tr", timeout=30_000)
    rows = page.locator("#support tbody tr.row").count()
    columns = page.locator("#support thead th").count() - 2
    marked = page.locator("#support td.ok, #support td.bad, #support td.some").count()
    if rows == 0 or columns <= 0 or marked == 0:
        raise SiteError(f"support.html: {rows} rows, {columns} columns, {marked} cells with a verdict")
    body = page.inner_text("body")
    emoji = sorted({c for c in _EMOJI if c in body})
    if emoji:
        raise SiteError(f"support.html: marks need an emoji font: {[hex(ord(c[0])) for c in emoji]}")
    ops = page.eval_on_selector_all("#support tbody tr.row td.op", "els => els.map(e => e.textContent)")
    aidge = [i for i, op in enumerate(ops) if op.startswith("aidge.")]
    if aidge and (aidge[0] == 0 or aidge != list(range(aidge[0], aidge[0] + len(aidge)))
                  or any(not op.startswith("aidge.") for op in ops[aidge[-1] + 1:] if "no torch" not in op)):
        raise SiteError(f"support.html: Aidge configuration rows are not after the torch rows (first row {ops[0]!r})")
    if page.locator("#support details[open]").count():
        raise SiteError("support.html: failing cases shown open (they belong behind a disclosure)")
    if not page.locator("#controls").is_visible():
        raise SiteError("support.html: the search and filter controls are hidden (its script did not run)")
    done = [f"{rows} rows x {columns} columns, {marked} cells with a verdict, text marks, torch rows first"
            + (f" (first aidge.* row: {aidge[0] + 1})" if aidge else "")]

    # sticky header and first column: scroll the table's box and see they stay at its edges
    box = page.evaluate("""() => { const w = document.querySelector('.wrap');
        const before = [document.querySelector('#support thead th').getBoundingClientRect().top,
                        document.querySelector('#support tbody tr.row td.op').getBoundingClientRect().left];
        w.scrollTop = 400; w.scrollLeft = 600;
        const th = document.querySelector('#support thead th').getBoundingClientRect().top;
        const op = document.querySelector('#support tbody tr.row td.op').getBoundingClientRect().left;
        const r = w.getBoundingClientRect();
        const out = {scrolled: [w.scrollTop, w.scrollLeft], th: th - r.top, op: op - r.left, before: before,
                     wide: w.scrollWidth > w.clientWidth};
        w.scrollTop = 0; w.scrollLeft = 0; return out; }""")
    if box["scrolled"][0] > 0 and abs(box["th"]) > 2:
        raise SiteError(f"support.html: the header scrolls away with the rows ({box})")
    if box["wide"] and box["scrolled"][1] > 0 and abs(box["op"]) > 2:
        raise SiteError(f"support.html: the operator column scrolls away sideways ({box})")
    done.append("header and operator column stay in view when the table scrolls"
                + (" (both ways)" if box["wide"] else " (the table fits: no sideways scroll)"))

    # search: an operator's name, then a failing case id (behind its disclosure)
    total = len(_visible_rows(page))
    target = next((op for op in ops if op.startswith("torch.")), ops[0])
    page.fill("#q", target)
    shown = _visible_rows(page)
    if not shown or any(target.lower() not in r["text"] for r in shown) or target not in [r["op"] for r in shown]:
        raise SiteError(f"support.html: searching {target!r} shows {[r['op'] for r in shown][:5]}")
    said = page.inner_text("#shown")
    if not said.startswith(f"{len(shown)} of {rows}"):
        raise SiteError(f"support.html: {len(shown)} rows shown, the page says {said!r}")
    case = page.evaluate("() => { const li = document.querySelector('#support details li'); "
                         "return li ? li.textContent : null; }")
    if case:
        page.fill("#q", case)
        shown = _visible_rows(page)
        if not shown or any(case.lower() not in r["text"] for r in shown):
            raise SiteError(f"support.html: searching the failing case {case!r} shows {[r['op'] for r in shown][:5]}")
    page.fill("#q", "")
    if len(_visible_rows(page)) != total:
        raise SiteError("support.html: clearing the search does not bring every row back")
    done.append(f"search: {target!r} -> {said.split(' rows')[0]} rows"
                + (f", failing case {case!r} -> its row" if case else ""))

    # filter: one source alone, then every source back; then only rows with a failure
    sources = page.eval_on_selector_all("#sources input", "els => els.map(e => e.value)")
    keep = next((src for src in sources if src.lower().startswith("opinfo")), sources[0])
    for src in sources:
        if src != keep:
            page.locator(f'#sources input[value="{src}"]').uncheck()
    shown = _visible_rows(page)
    if not shown or {r["source"] for r in shown} != {keep}:
        raise SiteError(f"support.html: source filter {keep!r} shows sources {sorted({r['source'] for r in shown})}")
    only = len(shown)
    for src in sources:
        page.locator(f'#sources input[value="{src}"]').check()
    page.locator("#failing-only").check()
    failing = _visible_rows(page)
    if not failing or any(r["failing"] != "1" for r in failing):
        raise SiteError("support.html: 'only rows with a failure' shows rows without one")
    page.locator("#failing-only").uncheck()
    if len(_visible_rows(page)) != total:
        raise SiteError("support.html: the filters do not bring every row back")
    done.append(f"source filter: {keep} alone -> {only} rows, all {len(sources)} sources -> {total}; "
                f"only failing -> {len(failing)}")

    links = page.eval_on_selector_all("#support .defects a", "els => els.map(e => e.getAttribute('href'))")
    if links and not all(h.startswith("defects.html#D-") for h in links):
        raise SiteError(f"support.html: defect links not to the Defects page: {links[:3]}")
    done.append(f"{len(links)} defect links to defects.html#<id>")
    return "support.html: " + "; ".join(done)


def check_porting_page(page, base: str) -> str:
    """``porting.html`` draws the porting-readiness table (a row per architecture and route) or
    says that no architecture run exists yet; its defect links go to the Defects page."""
    page.goto(base + "porting.html")
    if page.locator("#no-run").count():
        return "porting.html: no architecture run published yet (the page says so)"
    page.wait_for_selector("#porting tbody tr", timeout=30_000)
    rows = page.locator("#porting tbody tr").count()
    marked = page.locator("#porting td.ok, #porting td.bad").count()
    if rows == 0 or marked == 0:
        raise SiteError(f"porting.html: {rows} rows, {marked} cells with a verdict")
    links = page.eval_on_selector_all("#porting a.defect", "els => els.map(e => e.getAttribute('href'))")
    if links and not all(h.startswith("defects.html#D-") for h in links):
        raise SiteError(f"porting.html: defect links not to the Defects page: {links[:3]}")
    said = f"porting.html: {rows} architecture x route rows, {marked} cells with a verdict, {len(links)} defect links"
    if not page.locator("#controls").count():  # a table written before the page had controls
        return said + " (no search on this page)"
    if not page.locator("#controls").is_visible():
        raise SiteError("porting.html: the search and route filter are hidden (its script did not run)")
    visible = ("() => Array.from(document.querySelectorAll('#porting tbody tr')).filter(r => r.offsetParent !== null)"
               ".map(r => ({route: r.getAttribute('data-route'), text: r.textContent.toLowerCase()}))")
    # search what a porter types: an operator that blocks (the first blocked row's), then nothing
    blocked = page.evaluate("() => { const c = document.querySelector('#porting td.blocked'); "
                            "return c ? c.textContent : ''; }")
    named = re.search(r"(\w+) `", blocked)  # the operator named beside its node
    word = named.group(1) if named else page.inner_text("#porting tbody tr td")
    page.fill("#q", word)
    shown = page.evaluate(visible)
    if not shown or any(word.lower() not in r["text"] for r in shown):
        raise SiteError(f"porting.html: searching {word!r} shows rows without it")
    found = len(shown)
    page.fill("#q", "")
    routes = [r for r in page.eval_on_selector_all("#route option", "els => els.map(e => e.value)") if r]
    page.select_option("#route", routes[-1])
    shown = page.evaluate(visible)
    if not shown or {r["route"] for r in shown} != {routes[-1]}:
        raise SiteError(f"porting.html: route filter {routes[-1]!r} shows routes {sorted({r['route'] for r in shown})}")
    page.select_option("#route", "")
    if len(page.evaluate(visible)) != rows:
        raise SiteError("porting.html: clearing the search and the filter does not bring every row back")
    return said + f"; search {word!r} -> {found} rows, route {routes[-1]} -> {len(shown)} rows"


SITE_PAGES = ("index.html", "support.html", "porting.html", "defects.html", "conformance.html")
#: a run directory's pages link each other (no benchmark grid there); the lead's ledger page is
#: written without links (the site adds its navigation)
RUN_PAGES = ("support.html", "porting.html", "defects.html")


def _site_links(page, name: str, pages: tuple[str, ...] = SITE_PAGES) -> None:
    """The page links the site's other pages (the benchmark grid, the matrix, the table, the ledger)."""
    hrefs = set(page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href'))"))
    missing = [h for h in pages if h != name and h not in hrefs]
    if page.locator("nav").count() > 1:
        raise SiteError(f"{name}: {page.locator('nav').count()} navigation bars (the run's and the site's)")
    if missing:
        raise SiteError(f"{name}: no link to {missing}")


def check_conformance_page(page, base: str, *, links: bool = True) -> str:
    """``conformance.html`` (the ONNX conformance scoreboard of the same run) has a row per ONNX
    operator and every defect link leads to the Defects page (``defects.html#D-...``; the defects
    page check then finds a row for each)."""
    page.goto(base + "conformance.html")
    if links:
        _site_links(page, "conformance.html")
    if page.locator("#no-run").count():
        return "conformance.html: no ONNX backend tests in the published run (the page says so)"
    rows = page.locator("#operators tbody tr").count()
    if not rows:
        raise SiteError("conformance.html: no operator row (table#operators)")
    hrefs = page.eval_on_selector_all("a.defect", "els => els.map(e => e.getAttribute('href'))")
    if any(not h.startswith("defects.html#D-") for h in hrefs):
        raise SiteError(f"conformance.html: defect links not to the Defects page: {[h for h in hrefs][:3]}")
    return f"conformance.html: {rows} ONNX operators, {len(hrefs)} defect links to defects.html#<id>"


def check_defects_page(page, base: str, html_dir: Path, linked: set[str], *, links: bool = True) -> str:
    """``defects.html`` (the ledger of the run the support matrix comes from) lists a row per
    defect with its id as anchor; every defect id the matrix and the porting table link to has
    its row; the search box and the kind filter work; the reports it links are on the site."""
    page.goto(base + "defects.html")
    if links:
        _site_links(page, "defects.html")
    if page.locator("#no-run").count():
        if linked:
            raise SiteError(f"defects.html: no ledger published, but {len(linked)} defect ids are linked to it")
        return "defects.html: no ledger published yet (the page says so)"
    ids = page.eval_on_selector_all('tr[id^="D-"]', "els => els.map(e => e.id)")
    if not ids:
        raise SiteError("defects.html: no defect row (tr id=D-...)")
    dangling = sorted(linked - set(ids))
    if dangling:
        raise SiteError(f"defects.html: {len(dangling)} linked defect id(s) have no row, e.g. {dangling[:3]}")
    visible = "() => Array.from(document.querySelectorAll('tr[id^=\"D-\"]')).filter(r => r.offsetParent !== null)" \
              ".map(r => ({id: r.id, kind: r.getAttribute('data-kind'), text: r.textContent}))"
    target = ids[len(ids) // 2]
    page.fill("#q", target)
    shown = page.evaluate(visible)
    if target not in [r["id"] for r in shown] or any(target not in r["text"] for r in shown):
        raise SiteError(f"defects.html: searching {target} shows {[r['id'] for r in shown][:5]}")
    page.fill("#q", "")
    kinds = [k for k in page.eval_on_selector_all("#k option", "els => els.map(e => e.value)") if k]
    kind_note = ""
    if kinds:
        page.select_option("#k", kinds[0])
        shown = page.evaluate(visible)
        if not shown or any(r["kind"] != kinds[0] for r in shown):
            raise SiteError(f"defects.html: kind filter {kinds[0]!r} shows kinds {sorted({r['kind'] for r in shown})}")
        kind_note = f", kind {kinds[0]!r} -> {len(shown)} rows"
        page.select_option("#k", "")
    if len(page.evaluate(visible)) != len(ids):
        raise SiteError("defects.html: clearing the search and the filter does not bring every row back")
    reports = page.eval_on_selector_all('a[href^="defects/"]', "els => els.map(e => e.getAttribute('href'))")
    absent = [h for h in reports if not (html_dir / h).is_file()]
    if absent:
        raise SiteError(f"defects.html: {len(absent)} linked report(s) not on the site, e.g. {absent[:3]}")
    return (f"defects.html: {len(ids)} defects, every one of the {len(linked)} ids linked from the matrix and the "
            f"porting table has its row; search {target} -> its row{kind_note}; {len(reports)} reports linked, all present")


def check(html_dir: Path, chromium: str, sample: int) -> list[str]:
    index = json.loads((html_dir / "index.json").read_text(encoding="utf-8"))
    groups = case_index.collect(index)
    done: list[str] = []
    with offline_page(html_dir, chromium) as (page, base):
        done.append(check_grid(page, base, html_dir, index))
        linked: set[str] = set()
        done.append(check_support_page(page, base))
        if not page.locator("#no-run").count():
            _site_links(page, "support.html")
        linked |= _defect_hrefs(page)
        done.append(check_porting_page(page, base))
        _site_links(page, "porting.html")
        linked |= _defect_hrefs(page)
        done.append(check_conformance_page(page, base))
        linked |= _defect_hrefs(page)
        done.append(check_defects_page(page, base, html_dir, linked))

        page.goto(base + "cases.html")
        hrefs = set(page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href'))"))
        missing = []
        n = 0
        for module, by_group in groups.items():
            for group, phases in by_group.items():
                if page.locator(f'[id="{module}-{group}"]').count() != 1:
                    missing.append(f"section {module}-{group}")
                for phase, values in phases.items():
                    for value in values:
                        n += 1
                        for kind, _ in case_index.KINDS:
                            name = f"{module}.{phase}.{kind}"
                            if name in index["benchmarks"] and case_index.graph_url(name, [value]) not in hrefs:
                                missing.append(f"{name} {value}")
                        if case_index.pair_url(module, phase, value) not in hrefs:
                            missing.append(f"side by side {module}.{phase} {value}")
        if missing:
            raise SiteError(f"cases.html: {len(missing)} links missing, e.g. {missing[:5]}")
        ngroups = sum(len(g) for g in groups.values())
        done.append(f"cases.html: all {n} case-phases of {ngroups} operators/models linked "
                    f"(graph per kind + side by side)")

        checked, empty, with_ort = 0, 0, 0
        env_cells: set[str] = set()  # the environment column of every side-by-side row seen
        for module, by_group in groups.items():
            for group, phases in sorted(by_group.items())[: sample or None]:
                phase, value = _measured_case(html_dir, index, module, phases)
                url = base + case_index.graph_url(f"{module}.{phase}.time_aidge", [value])
                page.goto("about:blank")
                page.goto(url)
                page.wait_for_selector("#main-graph canvas", timeout=60_000)
                page.goto(base + case_index.pair_url(module, phase, value))
                page.wait_for_function("document.querySelectorAll('#table tr').length > 1 || "
                                       "document.getElementById('chart').textContent.includes('no measurement')",
                                       timeout=60_000)
                rows = page.locator("#table tr").all_inner_texts()
                if isinstance(value, _NoData) or len(rows) < 2:
                    if not (isinstance(value, _NoData) and len(rows) < 2):
                        raise SiteError(f"pair.html {module}.{phase} {value}: asv has figures, the page none")
                    empty += 1
                    continue
                # a row per commit and environment: both sides measured, and their ratio
                if not all(cell.strip() not in ("", "-") for cell in rows[1].split("\t")[2:5]):
                    raise SiteError(f"pair.html {module}.{phase} {value}: no torch/Aidge figures: {rows[:2]}")
                env_cells.update(r.split("\t")[1].strip() for r in rows[1:] if "\t" in r)
                # the Aidge / torch column is asv's ratio benchmark, not the quotient of two separately
                # timed benchmarks (LeNet_eval: 4.51 shown beside a ratio benchmark of 1.96)
                ratio = rows[1].split("\t")[4].strip()
                if ratio not in _ratio_values(html_dir, index, module, phase, value):
                    raise SiteError(f"pair.html {module}.{phase} {value}: Aidge / torch {ratio} is not asv's "
                                    f"track_aidge_torch_ratio of the case")
                # the third column (forward): onnxruntime's time and asv's Aidge / onnxruntime ratio benchmark
                header = rows[0].split("\t")
                if "onnxruntime" not in [c.strip() for c in header]:
                    raise SiteError(f"pair.html {module}.{phase} {value}: no onnxruntime column: {rows[0]!r}")
                ort_values = _ratio_values(html_dir, index, module, phase, value, "track_aidge_ort_ratio")
                if ort_values:
                    cells = rows[1].split("\t")
                    if cells[6].strip() in ("", "-") or cells[7].strip() not in ort_values:
                        raise SiteError(f"pair.html {module}.{phase} {value}: onnxruntime {cells[6:8]} is not asv's "
                                        f"time_ort / track_aidge_ort_ratio of the case")
                    with_ort += 1
                checked += 1
        backends = [b for b in index.get("params", {}).get("env-INTEROP_BACKEND", []) if b]
        if len(backends) > 1:  # several backends benchmarked: each its own rows (docs/backend-export-cpp.md)
            absent = [b for b in backends if not any(b in cell.split(", ") for cell in env_cells)]
            if absent:
                raise SiteError(f"pair.html: no row of backend(s) {absent} in any case checked")
            done.append(f"backends: {', '.join(backends)} each with rows of their own side by side")
        done.append(f"graph pages: {checked} cases (one per operator/model) plotted alone and side by side, "
                    f"{with_ort} of them with onnxruntime's time and Aidge/onnxruntime ratio"
                    + (f"; {empty} operators/models without any asv figure show 'no measurement'" if empty else ""))
    return done + ["network: no request left 127.0.0.1", "no JavaScript error"]


def _defect_hrefs(page) -> set[str]:
    return {h.split("#", 1)[1] for h in page.eval_on_selector_all(
        "a", "els => els.map(e => e.getAttribute('href') || '')") if h.startswith("defects.html#")}


def check_run(run_dir: Path, chromium: str) -> list[str]:
    """A findings run's own pages (``support.html``, ``porting.html``, ``defects.html`` in its
    directory, no asv site needed), the same checks as on the site, network blocked."""
    done: list[str] = []
    # the pages this run holds (a run without architecture cases writes no porting.html, and its
    # pages then show that entry as plain text, not a link: interop.reporting.porting.link_run_pages)
    present = tuple(p for p in RUN_PAGES if (run_dir / p).is_file())
    with offline_page(run_dir, chromium) as (page, base):
        done.append(check_support_page(page, base))
        _site_links(page, "support.html", present)
        linked = _defect_hrefs(page)
        if (run_dir / "porting.html").is_file():
            done.append(check_porting_page(page, base))
            _site_links(page, "porting.html", present)
            linked |= _defect_hrefs(page)
        if (run_dir / "conformance.html").is_file():
            done.append(check_conformance_page(page, base, links=False))
            linked |= _defect_hrefs(page)
        if (run_dir / "defects.html").is_file():
            done.append(check_defects_page(page, base, run_dir, linked, links=False))
        elif linked:
            raise SiteError(f"{run_dir}: {len(linked)} defect ids linked, no defects.html")
    return done + ["network: no request left 127.0.0.1", "no JavaScript error"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--html-dir", type=Path, default=ROOT / "results" / "html")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--sample", type=int, default=0,
                        help="graph pages opened per section (0: one per operator and model)")
    parser.add_argument("--run-dir", type=Path, default=None,
                        help="check a findings run's own pages instead (support, porting, defects; no asv site)")
    args = parser.parse_args(argv)
    if args.run_dir is not None:
        try:
            lines = check_run(args.run_dir, args.chromium)
        except SiteError as exc:
            print(f"check_site: FAILED: {exc}", file=sys.stderr)
            return 1
        for line in lines:
            print(f"ok  {line}")
        return 0
    if not (args.html_dir / "index.json").exists():
        print(f"check_site: {args.html_dir / 'index.json'} not found: run `nox -s publish` first", file=sys.stderr)
        return 1
    try:
        lines = check(args.html_dir, args.chromium, args.sample)
    except SiteError as exc:
        print(f"check_site: FAILED: {exc}", file=sys.stderr)
        return 1
    for line in lines:
        print(f"ok  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
