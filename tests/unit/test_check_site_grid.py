"""Issue 49: site-check fails on a summary grid of empty boxes and on a panel that draws fewer
points than the commits its summary holds (tools/check_site.judge_grid); in headless
Chromium with the network blocked, on a tiny site built from asv's own pages (three panels, two
commits), check_grid passes the mended grid and fails asv's own one-commit grid and a grid that
drops a commit."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from site_chromium import chromium_path

from tools import case_index, check_site

ROOT = Path(__file__).resolve().parents[2]


def _drawn(ink=900, points=2, drawn=2, text=""):
    return {"ink": ink, "points": points, "drawn": drawn, "canvas": not text, "text": text}


NONE_SAID = _drawn(0, 0, 0, "no measurement: no case of it was timed")


def test_a_filled_grid_of_two_commits_passes_and_says_so():
    line = check_site.judge_grid({"a.time": 2, "a.track": 2, "b.none": 0},
                                 {"a.time": _drawn(), "a.track": _drawn(), "b.none": NONE_SAID}, 3)
    assert "2 of 3 panels draw their figures" in line
    assert "2 of them all 2 commit(s), 0 fewer" in line and "1 say 'no measurement'" in line


def test_empty_boxes_fail():
    """asv's own grid with one commit: a canvas per panel, nothing on it."""
    with pytest.raises(check_site.SiteError, match=r"2 grid panel\(s\) with figures draw nothing \(empty boxes\)"):
        check_site.judge_grid({"a.time": 1, "a.track": 1}, {"a.time": _drawn(0, 1, 0), "a.track": _drawn(0, 1, 0)}, 2)


def test_a_panel_that_shows_one_of_two_commits_fails():
    with pytest.raises(check_site.SiteError, match=r"fewer points than the commits.*a\.track \(1 of 2\)"):
        check_site.judge_grid({"a.time": 2, "a.track": 2}, {"a.time": _drawn(), "a.track": _drawn(40, 1, 1)}, 2)
    # flot holds both points but only one is on the canvas (the other off the plot area)
    with pytest.raises(check_site.SiteError, match=r"a\.time \(1 of 2\)"):
        check_site.judge_grid({"a.time": 2}, {"a.time": _drawn(40, 2, 1)}, 1)


def test_a_grid_without_any_figure_and_a_silent_panel_fail():
    with pytest.raises(check_site.SiteError, match="the summary grid is empty"):
        check_site.judge_grid({"a.time": 0}, {"a.time": NONE_SAID}, 1)
    with pytest.raises(check_site.SiteError, match=r"1 panel\(s\) without any figure are blank.*b\.none"):
        check_site.judge_grid({"a.time": 2, "b.none": 0}, {"a.time": _drawn(), "b.none": _drawn(0, 0, 0)}, 2)


# ---------------------------------------------------------------------------------------
# The same judgment on a real page: asv's own grid code in headless Chromium, network blocked
# ---------------------------------------------------------------------------------------
BENCHMARKS = ("ops.Forward.time_aidge", "ops.Forward.track_ratio", "ops.Backward.time_aidge")


def _tiny_site(tmp_path: Path, name: str, commits: int, mend: bool = True, measured: int = 2) -> Path:
    """asv 0.6's own pages with an index of three benchmarks and a summary of ``commits`` commits
    for the first ``measured`` (the others have no figure), the libraries asv loads from CDNs taken from the
    npm tarballs ``nox -s publish`` cached (skipped without them: a test does not use the network)."""
    asv = pytest.importorskip("asv")
    from tools import publish_offline

    site = tmp_path / name
    shutil.copytree(Path(asv.__file__).parent / "www", site)
    cache = ROOT / ".asv" / "npm-cache"
    for url in publish_offline.remote_refs((site / "index.html").read_text(encoding="utf-8")):
        package, version, _ = publish_offline.npm_source("https:" + url if url.startswith("//") else url)
        names = [f"{package}@{version}", publish_offline.NPM_SUBSTITUTES.get(f"{package}@{version}")]
        if not any(n and (cache / f"{n.rpartition('@')[0]}-{n.rpartition('@')[2]}.tgz").is_file() for n in names):
            pytest.skip(f"{package}@{version} not in {cache} (nox -s publish caches the libraries from npm)")
    publish_offline.make_offline(site, cache)
    (site / "index.html").write_text(case_index.add_nav_entry((site / "index.html").read_text(encoding="utf-8")))
    if mend:
        assert case_index.patch_summary_grid(site)
    revisions = list(range(10, 10 + commits))
    machine = {"arch": "x86_64", "cpu": "c", "machine": "m", "num_cpu": "2", "os": "Linux", "ram": "1"}
    index = {
        "project": "tiny", "project_url": "#", "show_commit_url": "#", "hash_length": 8,
        "revision_to_hash": {str(r): f"{r:040x}" for r in revisions},
        "revision_to_date": {str(r): 1_796_000_000_000 + r * 60_000 for r in revisions},
        "params": {**{k: [v] for k, v in machine.items()}, "python": ["3.11"], "branch": ["main"]},
        "graph_param_list": [{**machine, "python": "3.11", "branch": "main"}],
        "benchmarks": {name: {"code": "", "name": name, "param_names": [], "params": [], "version": "1",
                              "type": "track" if "track" in name else "time", "unit": "seconds"}
                       for name in BENCHMARKS},
        "machines": {"m": {**machine, "version": 1}}, "tags": {},
        "pages": [["", "Grid view", "Display as a agrid"], ["summarylist", "List view", "Display as a list"],
                  ["regressions", "Show regressions", "Display information about recent regressions"]],
    }
    (site / "index.json").write_text(json.dumps(index))
    (site / "info.json").write_text(json.dumps({"asv-version": asv.__version__, "timestamp": 1_796_000_000_000}))
    summary = site / "graphs" / "summary"
    summary.mkdir(parents=True)
    for k, name in enumerate(BENCHMARKS[:measured]):  # the others: no summary at all (nothing timed)
        (summary / f"{name}.json").write_text(json.dumps([[r, 0.5 + 0.25 * k + 0.1 * i]
                                                          for i, r in enumerate(revisions)]))
    return site


def _check(page, base: str, site: Path) -> str:
    index = json.loads((site / "index.json").read_text())
    return check_site.check_grid(page, f"{base}{site.name}/", site, index)


def test_grid_in_chromium_two_commits_filled_one_commit_of_asv_empty_a_dropped_commit_short(tmp_path):
    chromium = chromium_path()  # skips without playwright or a Chromium binary
    two = _tiny_site(tmp_path, "two", 2)
    # asv's own grid, one commit benchmarked (every panel measured: asv's grid leaves a panel without
    # figures blank, which check_grid waits 10 s for)
    one = _tiny_site(tmp_path, "one", 1, mend=False, measured=3)
    short = _tiny_site(tmp_path, "short", 2)
    # a grid that leaves one of the two commits out of its panels (the page plots the first point only)
    grid = short / "summarygrid.js"
    text = grid.read_text(encoding="utf-8")
    assert "[{data: data}]" in text
    grid.write_text(text.replace("[{data: data}]", "[{data: data.slice(0, 1)}]"), encoding="utf-8")
    with check_site.offline_page(tmp_path, chromium) as (page, base):
        assert _check(page, base, two).startswith(
            "grid: 2 of 3 panels draw their figures, a point per commit (2 of them all 2 commit(s), 0 fewer), "
            "1 say 'no measurement'")
        # the 27 empty boxes: a box per panel, nothing in it
        with pytest.raises(check_site.SiteError, match=r"3 grid panel\(s\) with figures draw nothing \(empty boxes\)"):
            _check(page, base, one)
        with pytest.raises(check_site.SiteError,
                           match=r"2 grid panel\(s\) draw fewer points than the commits.*\(1 of 2\)"):
            _check(page, base, short)
