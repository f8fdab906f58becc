"""Issue 44: the benchmark site inserts every value of the data as text, never as markup.

``pair.html``'s script runs here in Node against a small recording DOM: a machine name that is
markup must come out as the text of the table and legend, and no ``innerHTML`` (nor any other
HTML parsing) may be given data. ``cases.html`` (written in Python) escapes what it writes."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from tools import case_index

CRAFTED = '<img src=x onerror="alert(1)">'

#: a recording DOM: elements keep their children and attributes; innerHTML, outerHTML,
#: insertAdjacentHTML and document.write record what they were given (the test wants none)
_HARNESS = r"""
const markup = [];
function El(tag, ns) { this.tag = tag; this.ns = ns || null; this.attrs = {}; this.children = []; this._text = ""; }
El.prototype.setAttribute = function (k, v) { this.attrs[k] = String(v); };
El.prototype.appendChild = function (c) { this.children.push(c); return c; };
El.prototype.insertAdjacentHTML = function (where, html) { markup.push(html); };
Object.defineProperty(El.prototype, "textContent", {
  get() { return this._text + this.children.map(function (c) { return c.textContent; }).join(""); },
  set(v) { this._text = String(v); this.children = []; } });
Object.defineProperty(El.prototype, "innerHTML", { get() { return ""; }, set(v) { markup.push(String(v)); } });
Object.defineProperty(El.prototype, "outerHTML", { get() { return ""; }, set(v) { markup.push(String(v)); } });
const byId = {};
global.document = {
  getElementById(id) { return byId[id] || (byId[id] = new El("div")); },
  createElement(tag) { return new El(tag); },
  createElementNS(ns, tag) { return new El(tag, ns); },
  createTextNode(text) { return {text: String(text), textContent: String(text)}; },
  write(html) { markup.push(String(html)); } };
const DATA = JSON.parse(process.argv[1]);
global.location = {hash: DATA.hash};
global.window = {addEventListener() {}};
global.fetch = function (url) {
  const key = url === "index.json" ? "index" : ["time_torch", "time_aidge", "track_aidge_torch_ratio"]
    .find(function (k) { return url.includes(k); });
  const body = key ? DATA[key] : null;
  return Promise.resolve({ok: body !== null && body !== undefined, json() { return Promise.resolve(body); }});
};
function tree(n) {
  if (n.text !== undefined) { return {text: n.text}; }
  return {tag: n.tag, attrs: n.attrs, own: n._text, children: n.children.map(tree)};
}
// __SCRIPT__
setTimeout(function () {
  process.stdout.write(JSON.stringify({markup: markup, chart: tree(byId.chart), table: tree(byId.table)}));
}, 200);
"""


def _pair_script() -> str:
    m = re.search(r"<script>(.*)</script>", case_index.PAIR_PAGE, re.DOTALL)
    assert m, "pair.html has no inline script"
    return m.group(1)


def _run_pair_page(machines: list[str]) -> dict:
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("no Node.js on this machine (apt-get install nodejs) to run pair.html's script")
    case = "'ReLU_rank_2'"
    data = {
        "hash": "#operators.Forward|" + case_index.quote(case, safe=""),
        "index": {"benchmarks": {"operators.Forward.time_aidge": {"params": [[case]]}},
                  "params": {"machine": machines, "python": ["3.11"]},
                  "graph_param_list": [{"machine": m, "python": "3.11"} for m in machines],
                  "revision_to_hash": {"7": "0123456789abcdef"}},
        "time_torch": [[7, [0.002]]], "time_aidge": [[7, [0.004]]], "track_aidge_torch_ratio": [[7, [2.0]]],
    }
    source = _HARNESS.replace("// __SCRIPT__", _pair_script())
    done = subprocess.run([node, "-e", source, json.dumps(data)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _texts(n: dict) -> list[str]:
    if "text" in n:
        return [n["text"]]
    return ([n["own"]] if n["own"] else []) + [t for c in n["children"] for t in _texts(c)]


def _tags(n: dict) -> set[str]:
    return set() if "text" in n else {n["tag"]}.union(*(_tags(c) for c in n["children"]))


def test_pair_page_writes_a_crafted_machine_name_as_text():
    out = _run_pair_page([CRAFTED, "plain"])
    assert out["markup"] == []  # no HTML parsed from anything
    table_texts = _texts(out["table"])
    assert CRAFTED + ", 3.11" not in table_texts  # only varying parameters are shown
    assert CRAFTED in table_texts and "plain" in table_texts
    assert "2.00" in table_texts and "4.00 ms" in table_texts  # the figures are still there
    legend = "".join(_texts(out["chart"]))
    assert f"machine {CRAFTED}: torch" in legend
    assert "img" not in _tags(out["chart"]) | _tags(out["table"])


def test_pair_page_script_assigns_no_html():
    # the static half: no API of the page turns a string into markup
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write", _pair_script())


def test_cases_page_escapes_every_name_of_the_index():
    value = repr(f"X{CRAFTED}_rank_2")
    index = {"benchmarks": {f"{m}.{phase}.time_aidge": {"param_names": ["case"], "params": [[value]]}
                            for m in ("operators", f"zoo{CRAFTED}") for phase in ("Forward", "Backward")}}
    page = case_index.render(index)
    assert "<img" not in page and "&lt;img" in page
