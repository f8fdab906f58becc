"""Make the site of ``asv publish`` render offline (a script, not an asv module).

    asv publish && python tools/publish_offline.py [--html-dir results/html]

asv's ``index.html`` loads jQuery, flot, bootstrap... from CDNs. This script finds every
``<script src>`` and stylesheet ``<link href>`` of the published pages that points to the
network, fetches the same library from the npm registry (``npm pack <package>@<version>``,
tarballs cached in ``.asv/npm-cache``), copies the referenced file (and, for a stylesheet,
the fonts and images it points to) under ``<html-dir>/vendor/<package>@<version>/`` and
rewrites the reference to that local copy. ``vendor/MANIFEST.json`` lists each file with
its sha256 and whether it is byte-identical to the CDN file (the page's ``integrity``
hash). The ``integrity``/``crossorigin`` attributes are dropped from rewritten tags: the
files are local. "Offline" means without the network, not from disk: the site is served over
HTTP (``python -m http.server -d results/html 8080``); opened as ``file://`` its graphs stay
blank (the browser blocks the page's requests for its JSON data).

A reference this script cannot map fails the run (exit 1) naming the URL, so a new asv
release with another CDN library is noticed, not silently published half-online.

``--branch-config`` (run by ``nox -s publish`` before ``asv publish``): asv graphs only the
commits of ``asv.conf.json``'s branches (``main``) and leaves any other benchmarked commit out
with "Couldn't find <hash> in branches (main)" (a commit benchmarked on a local branch, ``asv
continuous main HEAD`` from a branch). This writes ``asv-publish-<pid>.conf.json`` beside
``asv.conf.json`` with the local branches that hold such commits added (each its own line on
the graphs; the grid's summary spans them) and prints its path, or prints nothing when every
benchmarked commit is on a configured branch; a commit on no branch at all (amended, rebased
away) is named on stderr, it cannot be graphed.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import html.parser
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: cdnjs library name -> npm package name
CDNJS_TO_NPM = {"flot": "flot", "stupidtable": "stupid-table-plugin", "blueimp-md5": "blueimp-md5",
                "jquery": "jquery"}
#: package@version missing from npm -> the release used instead (same author, same API)
NPM_SUBSTITUTES = {"stupid-table-plugin@1.0.1": "stupid-table-plugin@1.1.3"}

_CDN_RULES = (
    # (pattern, (package, version, path in the package))
    (re.compile(r"https://code\.jquery\.com/jquery-(?P<v>[\d.]+)(?P<min>\.min)?\.js$"),
     lambda m: ("jquery", m["v"], f"dist/jquery{m['min'] or ''}.js")),
    (re.compile(r"https://cdn\.jsdelivr\.net/npm/(?P<pkg>(?:@[^/]+/)?[^@/]+)@(?P<v>[^/]+)/(?P<path>.+)$"),
     lambda m: (m["pkg"], m["v"], m["path"])),
    (re.compile(r"https://cdnjs\.cloudflare\.com/ajax/libs/(?P<lib>[^/]+)/(?P<v>[^/]+)/(?P<path>.+)$"),
     lambda m: (CDNJS_TO_NPM.get(m["lib"], m["lib"]), m["v"], m["path"])),
)


#: printed at the end: a page opened from disk (file://) stays blank, the browser blocks the
#: requests for the JSON files the graphs are drawn from
SERVE_HINT = ("open the site over HTTP, not from disk (a file:// page stays blank): "
              "python -m http.server -d {html_dir} 8080, then http://localhost:8080")


class PublishError(RuntimeError):
    pass


class _Refs(html.parser.HTMLParser):
    """Remote resources a page loads: <script src> and <link rel=stylesheet href>."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            url = a.get("src")
        elif tag == "link" and "stylesheet" in (a.get("rel") or ""):
            url = a.get("href")
        else:
            return
        if url and re.match(r"(https?:)?//", url):
            self.urls.append(url)


def remote_refs(page: str) -> list[str]:
    parser = _Refs()
    parser.feed(page)
    return parser.urls


def npm_source(url: str) -> tuple[str, str, str]:
    """(npm package, version, path in the package) of a CDN URL."""
    for pattern, to_source in _CDN_RULES:
        m = pattern.match(url)
        if m:
            return to_source(m)
    raise PublishError(f"no npm source known for {url} (add a rule to {Path(__file__).name})")


def fetch_tarball(spec: str, cache: Path) -> tuple[Path, str]:
    """``npm pack spec`` into ``cache`` (reused when present); returns (tarball, spec used)."""
    cache.mkdir(parents=True, exist_ok=True)
    for candidate in (spec, NPM_SUBSTITUTES.get(spec)):
        if candidate is None:
            continue
        name, _, version = candidate.rpartition("@")
        tarball = cache / f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"
        if tarball.exists():
            return tarball, candidate
        proc = subprocess.run(["npm", "pack", candidate, "--pack-destination", str(cache), "--silent"],
                              capture_output=True, text=True)
        if proc.returncode == 0 and tarball.exists():
            return tarball, candidate
    raise PublishError(f"npm pack {spec} failed: {proc.stderr.strip().splitlines()[-1:] or proc.returncode}")


def _member(tar: tarfile.TarFile, path: str) -> bytes | None:
    try:
        f = tar.extractfile(f"package/{path}")
    except KeyError:
        return None
    return f.read() if f else None


def _read(tar: tarfile.TarFile, path: str) -> tuple[str, bytes]:
    """The file at ``path``; for ``x.min.js`` a package without minified files gives ``x.js``."""
    for candidate in (path, re.sub(r"\.min\.(js|css)$", r".\1", path)):
        data = _member(tar, candidate)
        if data is not None:
            return candidate, data
    raise PublishError(f"{tar.name}: no file {path}")


def _css_assets(css: bytes) -> list[str]:
    refs = re.findall(rb"url\(\s*['\"]?([^'\")]+)['\"]?\s*\)", css)
    out = []
    for ref in refs:
        ref = ref.decode().split("?")[0].split("#")[0]
        if ref and not re.match(r"(data:|https?:|//)", ref):
            out.append(ref)
    return out


def _sri_matches(data: bytes, integrity: str | None) -> bool | None:
    if not integrity:
        return None
    for token in integrity.split():
        algo, _, digest = token.partition("-")
        if algo in ("sha256", "sha384", "sha512"):
            if base64.b64encode(hashlib.new(algo, data).digest()).decode() == digest:
                return True
    return False


def _inside(vendor_dir: Path, *parts: str) -> Path:
    """``vendor_dir/<parts[:-1]>``, refused when it would land outside ``vendor_dir`` (a ``..``
    in a CDN path, a stylesheet's ``url(../../../../X)``); the last part names the source."""
    *parts, source = parts
    root = vendor_dir.resolve()
    target = vendor_dir.joinpath(*parts)
    resolved = target.resolve()
    if any(p.startswith("/") for p in parts) or (resolved != root and root not in resolved.parents):
        raise PublishError(f"{source}: refusing to write {'/'.join(parts)}: outside {vendor_dir}")
    return target


def vendor(url: str, integrity: str | None, vendor_dir: Path, cache: Path) -> tuple[str, dict]:
    """Copy the npm file behind ``url`` into ``vendor_dir``; (path relative to the site, manifest row)."""
    package, version, path = npm_source(url)
    tarball, used = fetch_tarball(f"{package}@{version}", cache)
    with tarfile.open(tarball) as tar:
        path_used, data = _read(tar, path)
        target = _inside(vendor_dir, used, path_used, url)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        assets = []
        if path_used.endswith(".css"):
            for ref in _css_assets(data):
                asset = posixpath.normpath(posixpath.join(posixpath.dirname(path_used), ref))
                blob = _member(tar, asset)
                if blob is None:
                    raise PublishError(f"{used}: {path_used} refers to {ref}, missing from the package")
                target_asset = _inside(vendor_dir, used, asset, f"{url} -> {ref}")
                target_asset.parent.mkdir(parents=True, exist_ok=True)
                target_asset.write_bytes(blob)
                assets.append(asset)
    local = f"{vendor_dir.name}/{used}/{path_used}"
    row = {"url": url, "npm": used, "file": path_used, "local": local, "assets": assets,
           "sha256": hashlib.sha256(data).hexdigest(), "identical_to_cdn": _sri_matches(data, integrity)}
    if used != f"{package}@{version}":
        row["note"] = f"{package}@{version} is not on npm; {used} used instead"
    return local, row


def _tag_pattern(url: str) -> re.Pattern:
    return re.compile(r"<(script|link)\b[^>]*?(?:src|href)=\"" + re.escape(url) + r"\"[^>]*>")


def _rewrite_tag(tag: str, url: str, local: str) -> str:
    tag = tag.replace(f'"{url}"', f'"{local}"')
    tag = re.sub(r'\s+integrity="[^"]*"', "", tag)
    tag = re.sub(r'\s+crossorigin="[^"]*"', "", tag)
    return re.sub(r'\s+referrerpolicy="[^"]*"', "", tag)


def make_offline(html_dir: Path, cache: Path) -> list[dict]:
    pages = sorted(html_dir.glob("*.html"))
    if not (html_dir / "index.html").exists():
        raise PublishError(f"{html_dir}/index.html not found: run `asv publish` first")
    vendor_dir = html_dir / "vendor"
    rows: dict[str, dict] = {}
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for url in remote_refs(text):
            absolute = "https:" + url if url.startswith("//") else url
            tag_re = _tag_pattern(url)
            tag = tag_re.search(text)
            integrity = re.search(r'integrity="([^"]*)"', tag.group(0)) if tag else None
            if absolute not in rows:
                rows[absolute] = vendor(absolute, integrity and integrity.group(1), vendor_dir, cache)[1]
            text = tag_re.sub(lambda m: _rewrite_tag(m.group(0), url, rows[absolute]["local"]), text)
        left = remote_refs(text)
        if left:
            raise PublishError(f"{page}: still loads {left} from the network")
        page.write_text(text, encoding="utf-8")
    (vendor_dir).mkdir(exist_ok=True)
    (vendor_dir / "MANIFEST.json").write_text(json.dumps(list(rows.values()), indent=2) + "\n")
    return list(rows.values())


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)


def read_asv_config(path: Path) -> dict:
    """asv.conf.json (its whole-line ``//`` comments dropped, as asv reads it)."""
    text = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                     if not line.lstrip().startswith("//"))
    return json.loads(text)


def benchmarked_commits(results_dir: Path) -> set[str]:
    """The commit hashes asv holds results of (``<results_dir>/<machine>/<hash>-<env>.json``)."""
    out = set()
    for path in results_dir.glob("*/*.json"):
        if path.name in ("machine.json", "benchmarks.json"):
            continue
        try:
            commit = json.loads(path.read_text(encoding="utf-8")).get("commit_hash")
        except (OSError, ValueError):
            continue
        if isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{7,40}", commit):
            out.add(commit)
    return out


def branches_to_graph(repo: Path, commits: set[str], configured: list[str]) -> tuple[list[str], list[str]]:
    """(local branches to add so that every benchmarked commit is graphed, commits on no branch)."""
    extra: list[str] = []
    orphans: list[str] = []
    for commit in sorted(commits):
        if any(_git(repo, "merge-base", "--is-ancestor", commit, b).returncode == 0 for b in configured + extra):
            continue
        holders = _git(repo, "for-each-ref", "--contains", commit, "--format=%(refname:short)", "refs/heads").stdout.split()
        if holders:
            extra.append(sorted(holders)[0])
        else:
            orphans.append(commit)
    return extra, orphans


def write_branch_config(root: Path = ROOT) -> Path | None:
    """``asv-publish-<pid>.conf.json`` beside asv.conf.json with the branches that hold benchmarked
    commits outside the configured ones (None: nothing to add)."""
    config = read_asv_config(root / "asv.conf.json")
    configured = list(config.get("branches") or ["main"])
    results = root / config.get("results_dir", ".asv/results")
    extra, orphans = branches_to_graph(Path(config.get("repo") and (root / config["repo"]) or root),
                                       benchmarked_commits(results), configured)
    for commit in orphans:
        print(f"publish_offline: benchmarked commit {commit[:8]} is on no branch (amended or rebased away?): "
              "asv cannot graph it", file=sys.stderr)
    if not extra:
        return None
    config["branches"] = configured + extra
    path = root / f"asv-publish-{os.getpid()}.conf.json"
    path.write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    print(f"publish_offline: graphing branch(es) {', '.join(extra)} beside {', '.join(configured)} "
          "(benchmarked commits not on them)", file=sys.stderr)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--html-dir", type=Path, default=ROOT / "results" / "html")
    parser.add_argument("--cache", type=Path, default=ROOT / ".asv" / "npm-cache")
    parser.add_argument("--branch-config", action="store_true",
                        help="write an asv config graphing the branches of benchmarked commits outside main; print its path")
    args = parser.parse_args(argv)
    if args.branch_config:
        path = write_branch_config()
        if path is not None:
            print(path)
        return 0
    if shutil.which("npm") is None:
        print("publish_offline: npm not found (it fetches the page's libraries from the npm registry)",
              file=sys.stderr)
        return 1
    try:
        rows = make_offline(args.html_dir, args.cache)
    except PublishError as exc:
        print(f"publish_offline: {exc}", file=sys.stderr)
        return 1
    for row in rows:
        same = {True: "identical to the CDN file", False: "differs from the CDN build",
                None: "no CDN hash"}[row["identical_to_cdn"]]
        print(f"{row['local']}  ({same}){'; ' + row['note'] if 'note' in row else ''}")
    print(f"{args.html_dir}: {len(rows)} libraries served locally; pages load nothing from the network")
    print(SERVE_HINT.format(html_dir=args.html_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
