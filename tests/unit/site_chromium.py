"""The Chromium the site tests drive (headless, network blocked, through
tools/check_site.offline_page): its path, or the test skips, saying what is missing.
Used by tests/unit/test_check_site_grid.py and test_support_page.py."""
from __future__ import annotations

import shutil

import pytest


def chromium_path() -> str:
    """The Chromium binary's path; skips the calling test without playwright
    (requirements/site-check.txt) or a Chromium on PATH."""
    pytest.importorskip("playwright.sync_api")
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("no Chromium (apt-get install chromium)")
    return path
