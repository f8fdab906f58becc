"""The asv benchmark machinery (benchmarks/): case ids, the correctness precheck (a wrong
case fails, an unsupported one is skipped, a good one is timed), the offline publish step
and the Aidge-release matrix configuration."""
from __future__ import annotations

import base64
import hashlib
import io
import json
import sys
import tarfile
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import harness  # noqa: E402
from tools import publish_offline  # noqa: E402


# --- the cases: the pytest ids ---------------------------------------------------------------
def test_operator_ids_are_the_catalog_ids():
    from interop.cases import catalog

    cases = catalog.operator_cases()
    # every catalog case but those Aidge cannot run in the phase (issue 49: listed by benchmarks/not_timed.py)
    assert harness.case_ids("operator", "forward") == [c.id for c in cases if not harness.not_timed_entry(c, "forward")]
    assert harness.case_ids("operator", "backward") == [c.id for c in cases if c.test_backward
                                                        and not harness.not_timed_entry(c, "backward")]


def test_model_ids_are_the_model_suite_ids():
    """asv and tests/test_models.py iterate the same Case objects (the catalog's)."""
    from interop.cases import catalog

    cases = catalog.model_cases()
    assert harness.case_ids("model", "forward") == [c.id for c in cases if not harness.not_timed_entry(c, "forward")]
    assert harness.case_ids("model", "backward") == [c.id for c in cases if c.test_backward
                                                     and not harness.not_timed_entry(c, "backward")]
    assert all(isinstance(c, type(cases[0])) for c in harness.cases("model").values())


# --- the precheck ---------------------------------------------------------------------------------
class _ExportsSomethingElse(torch.nn.Module):
    """2x in torch, 3x in its ONNX export: Aidge computes 3x."""

    def forward(self, x):
        return x * (3.0 if torch.onnx.is_in_onnx_export() else 2.0)


def _case(case_id: str, module_factory, size=(2, 4), test_backward=True) -> harness.Case:
    return harness.Case(case_id, module_factory, input_size=size, test_backward=test_backward,
                        operator=case_id.split("_")[0])


def _pair(case: harness.Case, phase: str) -> harness.Pair:
    key = (case.kind, case.id, phase)
    harness._PAIRS.pop(key, None)
    harness.cases(case.kind)[case.id] = case
    try:
        return harness.pair(case.kind, case.id, phase)
    finally:
        harness.cases(case.kind).pop(case.id, None)
        harness._PAIRS.pop(key, None)


@pytest.mark.parametrize("phase", harness.PHASES)
def test_precheck_fails_a_case_whose_outputs_differ(phase):
    with pytest.raises(harness.PrecheckFailed, match=r"Wrong_case \(" + phase + r".*the output of Aidge differs"):
        _pair(_case("Wrong_case", _ExportsSomethingElse), phase)


def test_unsupported_operator_is_skipped_with_its_reason(capsys):
    with pytest.raises(harness.CaseSkipped, match="unsupported by Aidge.*GenericOperator") as info:
        _pair(_case("Unsupported_case", torch.nn.ELU), "forward")
    assert isinstance(info.value, NotImplementedError)  # what asv reports as skipped
    assert "skipped Unsupported_case (forward" in capsys.readouterr().err


def test_expected_failure_entry_skips_only_the_phases_it_stops():
    from interop.cases.expected_failures import expected_failure

    case = harness.cases("model")["Transformer_train"]
    entry = expected_failure(case)  # the catalog's cases carry no row (the pytest plugin attaches it)
    if entry is None or entry.phase != "backward":
        pytest.skip("no backward-phase expected failure for Transformer_train on this backend")
    assert harness.skip_reason(case, "forward") is None
    assert entry.error in harness.skip_reason(case, "backward")


@pytest.mark.parametrize("phase", harness.PHASES)
def test_a_correct_case_is_timed_on_both_sides(phase):
    pair = _pair(_case("Linear_case", lambda: torch.nn.Linear(4, 3)), phase)
    assert pair.threads == torch.get_num_threads() == harness.timing.thread_count()
    pair.torch_call()
    pair.aidge_call()
    ratio = pair.ratio(budget_s=0.01)
    assert 0 < ratio < float("inf")


# --- what each benchmark times -----------------------------------------------------------------
def _events_during(call) -> list[tuple[str, str]]:
    """(event, function name) of every Python-level event while ``call`` runs."""
    events = []

    def profile(frame, event, arg):
        name = getattr(arg, "__name__", None) if event.startswith("c_") else frame.f_code.co_name
        events.append((event, name))

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return [e for e in events if e[1] != "setprofile"]


@pytest.mark.parametrize("phase", harness.PHASES)
def test_the_aidge_call_is_the_scheduler_and_nothing_else(phase, monkeypatch):
    """time_aidge (and the ratio's numerator) runs one scheduler call: no Python frame, no
    tensor conversion, no copy, no allocation of a torch or Aidge tensor."""
    import functools

    import numpy as np

    import interop.bridge.runner as bridge
    import interop.bridge.tensors as converter

    pair = _pair(_case("Linear_case", lambda: torch.nn.Linear(4, 3)), phase)
    runner = pair.module._runner
    if phase == "forward":
        assert isinstance(pair.aidge_call, functools.partial) and not pair.aidge_call.keywords
        assert pair.aidge_call.func.__name__ == "forward" and pair.aidge_call.func.__self__ is runner.scheduler
        assert pair.aidge_call.args[0] is False  # dims already forwarded outside the timed call
    else:
        assert pair.aidge_call.__name__ == "backward" and pair.aidge_call.__self__ is runner.scheduler
    # the probe sees the bridge's work, so it would see any in the Aidge call
    assert any(event == "call" for event, _ in _events_during(pair.bridge_call))
    events = _events_during(pair.aidge_call)
    assert all(event in ("c_call", "c_return") and name == phase for event, name in events), events

    out = runner.output_tensors[0] if phase == "forward" else runner.graph_inputs()[0].grad
    np.asarray(out)[...] = 0

    def forbidden(*args, **kwargs):
        raise AssertionError("conversion or copy inside the timed Aidge call")

    for module, name in ((converter, "torch_tensor_to_aidge"), (converter, "aidge_tensor_to_torch"),
                         (bridge, "read_tensor"), (bridge, "write_tensor"), (torch, "from_numpy"),
                         (torch, "empty"), (np, "array"), (np, "asarray")):
        monkeypatch.setattr(module, name, forbidden)
    pair.aidge_call()  # runs with every conversion and copy routine disabled
    monkeypatch.undo()
    # and it computes: it wrote what the bridge's full call (which zeroes gradients first) writes
    computed = np.array(out, copy=True)
    pair.bridge_call()
    assert np.abs(computed).max() > 0
    np.testing.assert_allclose(computed, np.array(out), rtol=1e-6)


def test_the_ratio_numerator_is_the_aidge_call(monkeypatch):
    """track_aidge_torch_ratio = median over rounds of (per-call time of a block of
    pair.aidge_call) / (per-call time of a block of pair.torch_call), the two blocks of a round
    back to back: the bridge's call is never timed."""
    pair = _pair(_case("Linear_case", lambda: torch.nn.Linear(4, 3)), "forward")
    fake = {id(pair.torch_call): 2e-6, id(pair.aidge_call): 7e-6, id(pair.bridge_call): 1.0}
    order = []

    def measure(fn, *, warmup=2, repeat=10, min_time_s=0.0, cuda=False):
        return [fake[id(fn)]] * repeat

    def block_time(fn, n, *, cuda=False, clock=None):
        order.append((id(fn), n))
        return fake[id(fn)]

    monkeypatch.setattr(harness.timing, "measure", measure)
    monkeypatch.setattr(harness.timing, "block_time", block_time)
    assert pair.ratio() == pytest.approx(3.5)
    assert {f for f, _ in order} == {id(pair.torch_call), id(pair.aidge_call)}
    # rounds: a torch block, then an Aidge block, each about RATIO_BLOCK_S long
    assert [f for f, _ in order[:4]] == [id(pair.torch_call), id(pair.aidge_call)] * 2
    assert order[0][1] == int(harness.RATIO_BLOCK_S / 2e-6) and order[1][1] == int(harness.RATIO_BLOCK_S / 7e-6)
    assert harness.RATIO_MIN_ROUNDS <= len(order) // 2 <= harness.RATIO_MAX_ROUNDS
    # asv prints a track_ value as returned: 3 significant digits (before: 4.253227378618111)
    fake[id(pair.aidge_call)] = 2e-6 * 4.253227378618111
    assert pair.ratio() == 4.25


def test_block_time_is_the_time_per_call_of_the_block():
    calls = []
    per_call = harness.timing.block_time(lambda: calls.append(1), 50)
    assert len(calls) == 50 and 0 < per_call < 1e-3


@pytest.mark.parametrize("value, rounded", [(4.253227378618111, 4.25), (1865.37, 1870.0), (0.0123456, 0.0123),
                                            (0.0, 0.0), (-2.0004, -2.0)])
def test_ratios_are_rounded_to_three_significant_digits(value, rounded):
    from interop.equivalence.timing import round_sig

    assert round_sig(value) == rounded
    assert round_sig(float("nan")) != round_sig(float("nan")) and round_sig(float("inf")) == float("inf")


def test_each_time_benchmark_calls_its_own_side():
    calls = []
    pair = harness.Pair("X", "forward", "cpu", 1, lambda: calls.append("torch"), lambda: calls.append("aidge"),
                        lambda: calls.append("bridge"))
    bench = harness.benchmark_class("operator", "forward", "Forward")()
    bench.pair = pair
    bench.time_torch("X"), bench.time_aidge("X"), bench.time_bridge("X")
    assert calls == ["torch", "aidge", "bridge"]


def test_every_expected_failure_stops_its_own_phase_only():
    """A case with a backward entry only is timed forward; an entry on an earlier phase
    stops both (operators and models, through the operator declarations too)."""
    from interop.cases.expected_failures import EXPECTED_FAILURES

    checked = 0
    for kind in ("operator", "model"):
        for case in harness.cases(kind).values():
            entries = [e for e in EXPECTED_FAILURES if e.covers(case.kind, case.operator, case.label, harness.BACKEND)]
            if not entries or not all(e.phase in ("backward", "step") for e in entries):
                continue
            assert harness.skip_reason(case, "forward") is None, case.id
            if case.test_backward and any(e.phase == "backward" for e in entries):
                assert "expected failure" in harness.skip_reason(case, "backward"), case.id
                checked += 1
    assert checked, "no case with a backward-only expected failure: the test is void"


def test_setup_failures_are_memoised():
    calls = []

    def factory():
        calls.append(1)
        return _ExportsSomethingElse()

    case = _case("Memo_case", factory)
    harness.cases("operator")[case.id] = case
    try:
        for _ in range(3):
            with pytest.raises(harness.PrecheckFailed):
                harness.pair("operator", case.id, "forward")
    finally:
        harness.cases("operator").pop(case.id, None)
        harness._PAIRS.pop(("operator", case.id, "forward"), None)
    assert len(calls) == 1


# --- offline publish --------------------------------------------------------------------------------
def _tarball(cache: Path, name: str, version: str, files: dict[str, bytes]) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    with tarfile.open(cache / f"{name}-{version}.tgz", "w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(f"package/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_publish_offline_serves_cdn_libraries_locally(tmp_path):
    js, css, font = b"window.lib = 1;\n", b".x{background:url(../fonts/f.woff?#iefix)}", b"FONT"
    sri = "sha256-" + base64.b64encode(hashlib.sha256(js).digest()).decode()
    html = tmp_path / "html"
    html.mkdir()
    (html / "index.html").write_text(
        f'<script src="https://cdn.jsdelivr.net/npm/lib@1.0.0/dist/lib.min.js" integrity="{sri}" '
        'crossorigin="anonymous"></script>\n'
        '<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/sty@2.0.0/css/s.min.css" '
        'integrity="sha256-AAAA" crossorigin="anonymous">\n'
        '<a href="https://github.com/airspeed-velocity/asv/">a link, not a resource</a>\n')
    cache = tmp_path / "cache"
    _tarball(cache, "lib", "1.0.0", {"dist/lib.min.js": js})
    _tarball(cache, "sty", "2.0.0", {"css/s.css": css, "fonts/f.woff": font})

    rows = publish_offline.make_offline(html, cache)

    page = (html / "index.html").read_text()
    assert publish_offline.remote_refs(page) == []
    assert 'src="vendor/lib@1.0.0/dist/lib.min.js"' in page and "integrity" not in page
    assert (html / "vendor/lib@1.0.0/dist/lib.min.js").read_bytes() == js
    assert (html / "vendor/sty@2.0.0/css/s.css").read_bytes() == css  # unminified fallback
    assert (html / "vendor/sty@2.0.0/fonts/f.woff").read_bytes() == font
    same = {r["npm"]: r["identical_to_cdn"] for r in rows}
    assert same == {"lib@1.0.0": True, "sty@2.0.0": False}
    assert json.loads((html / "vendor/MANIFEST.json").read_text()) == rows


def test_publish_offline_refuses_an_unknown_cdn(tmp_path):
    (tmp_path / "index.html").write_text('<script src="https://example.org/x.js"></script>')
    with pytest.raises(publish_offline.PublishError, match="no npm source known for https://example.org/x.js"):
        publish_offline.make_offline(tmp_path, tmp_path / "cache")


def test_publish_offline_knows_every_library_of_asvs_page():
    www = pytest.importorskip("asv").__file__
    page = (Path(www).parent / "www" / "index.html").read_text()
    refs = publish_offline.remote_refs(page)
    assert refs, "asv's index.html loads nothing from a CDN any more: the offline step is moot"
    for url in refs:
        publish_offline.npm_source(url)  # raises for an unmapped CDN


# --- the Aidge-release matrix --------------------------------------------------------------------------
def test_release_matrix_has_one_environment_per_release():
    pytest.importorskip("asv")
    from asv import environment
    from asv.config import Config

    from tools import aidge_matrix

    releases = ("0.9.1.post2", "0.10.1")
    matrix = Config.from_json(aidge_matrix.release_config(releases))
    envs = list(environment.iter_matrix(matrix.environment_type, matrix.pythons, matrix))
    reqs = [{k[1]: v for k, v in env.items() if k[0] == "req"} for env in envs]
    assert [r["aidge-core"] for r in reqs] == ["==0.9.1post2", "==0.10.1"]
    assert all(r["torch"] == "==2.13.0" for r in reqs)
    assert all(len({r[p] for p in aidge_matrix.AIDGE_PACKAGES}) == 1 for r in reqs)
    default = Config.load(str(ROOT / "asv.conf.json"))
    (default_env,) = environment.iter_matrix(default.environment_type, default.pythons, default)
    assert default_env in envs  # the pinned release's history is shared with `asv run`


# --- another backend in an asv environment of its own (nox -s bench-export-cpp) ------------------------
def test_backend_environment_differs_from_the_default_only_by_backend_and_its_package():
    pytest.importorskip("asv")
    from asv import environment
    from asv.config import Config

    from tools import backend_env

    conf = Config.from_json(backend_env.backend_config("export_cpp"))
    (env,) = environment.iter_matrix(conf.environment_type, conf.pythons, conf)
    default = Config.load(str(ROOT / "asv.conf.json"))
    (default_env,) = environment.iter_matrix(default.environment_type, default.pythons, default)
    assert env[("env_nobuild", "INTEROP_BACKEND")] == "export_cpp"
    assert default_env[("env_nobuild", "INTEROP_BACKEND")] == "cpu"
    assert env[("req", "aidge-export-cpp")] == "==0.10.1"
    assert env[("req", "torch")] == "==2.13.0"
    changed = {k for k in set(env) | set(default_env) if env.get(k) != default_env.get(k)}
    assert changed == {("env_nobuild", "INTEROP_BACKEND"), ("req", "aidge-export-cpp")}
    with pytest.raises(SystemExit, match="no asv environment"):
        backend_env.backend_config("tpu")


def test_every_backend_declares_the_same_benchmarks(tmp_path):
    """asv keeps one benchmark list for every environment, rewritten by each discovery: the
    export_cpp discovery must list what the cpu one lists (backward and ExportBuild too)."""
    import subprocess

    code = ("import json, sys; sys.path.insert(0, sys.argv[1]);"
            "from benchmarks import operators, models;"
            "print(json.dumps({f'{m.__name__}.{c}': getattr(m, c).params for m in (operators, models)"
            " for c in ('Forward', 'Backward', 'ExportBuild') if hasattr(m, c)}"
            " | {'built': sorted(operators.harness._CASES)}))")
    seen = {}
    for backend in ("cpu", "export_cpp"):
        out = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True,
                             check=True, env={**__import__("os").environ, "INTEROP_BACKEND": backend})
        seen[backend] = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["cpu"] == seen["export_cpp"]
    assert seen["cpu"]["benchmarks.models.ExportBuild"][0]
    assert seen["export_cpp"]["built"] == ["model", "operator"]  # at import: asv's forks inherit them
    assert seen["cpu"]["benchmarks.operators.Backward"][0]  # not empty on export_cpp either


def test_backward_of_a_forward_only_case_is_skipped_as_not_applicable():
    case = _case("Fwd_only_case", lambda: torch.nn.ReLU(), test_backward=False)
    with pytest.raises(harness.CaseSkipped, match="not applicable"):
        _pair(case, "backward")


def test_export_build_benchmarks_skip_at_once_on_other_backends(monkeypatch):
    from benchmarks import models

    monkeypatch.setattr(harness, "BACKEND", "cpu")
    monkeypatch.setattr(harness, "pair", lambda *a: pytest.fail("built a pair"))
    with pytest.raises(harness.CaseSkipped, match="no C\\+\\+ export"):
        models.ExportBuild().setup(models.ExportBuild.params[0][0])


# --- the CI smoke subset (nox -s bench-quick) ----------------------------------------------------------
def test_smoke_subset_selects_both_phases_of_its_cases():
    import ast
    import re

    tree = ast.parse((ROOT / "noxfile.py").read_text())
    (regex,) = [ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                and any(getattr(t, "id", None) == "BENCH_QUICK" for t in node.targets)]
    names = [f"{module}.{phase.capitalize()}.{method}('{case}')"
             for module, kind in (("operators", "operator"), ("models", "model"))
             for phase in harness.PHASES for case in harness.case_ids(kind, phase)
             for method in ("time_torch", "time_aidge", "time_bridge", "track_aidge_torch_ratio")]
    selected = {n for n in names if re.search(regex, n)}
    for case, phases in {"ReLU_rank_2": harness.PHASES, "Conv2D_attributes_kernel_square": harness.PHASES,
                         "LeNet_eval": ("forward",), "LeNet_train": harness.PHASES}.items():
        for phase in phases:
            assert any(f".{phase.capitalize()}." in n and f"('{case}')" in n for n in selected), (
                f"noxfile.py BENCH_QUICK no longer selects {case} ({phase}): was the case renamed?")
    assert re.search(regex, "threads.track_threads")


def test_publish_offline_never_writes_outside_the_vendor_folder(tmp_path):
    # before: a stylesheet's url(../../../../X) inside a fetched package escaped html/vendor
    css = b".x{background:url(../../../../evil.txt)}"
    html = tmp_path / "html"
    html.mkdir()
    (html / "index.html").write_text('<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/sty@2.0.0/css/s.css">\n')
    cache = tmp_path / "cache"
    _tarball(cache, "sty", "2.0.0", {"css/s.css": css, "../../../evil.txt": b"EVIL"})
    with pytest.raises(publish_offline.PublishError, match="outside"):
        publish_offline.make_offline(html, cache)
    assert not list(tmp_path.rglob("evil.txt"))
    with pytest.raises(publish_offline.PublishError, match="outside"):
        publish_offline._inside(html / "vendor", "x@1", "../../up.js", "https://cdn/x")


def test_the_harness_imports_without_pytest():
    """asv's environments install the CPU stack and this package, not pytest: the harness
    and the case modules it uses must import without it."""
    import subprocess

    code = ("import sys; sys.modules['pytest'] = None\n"
            "import benchmarks.harness, interop.cases.suite, interop.cases.catalog\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


# --- the front door: nox -l, asv's threshold, serving the site ----------------------------------------
def _nox_sessions() -> dict[str, str | None]:
    """session name -> its docstring, read from noxfile.py without importing nox."""
    import ast

    tree = ast.parse((ROOT / "noxfile.py").read_text())
    out = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and getattr(deco.func, "attr", None) == "session":
                names = [k.value.value for k in deco.keywords if k.arg == "name"]
                out[names[0] if names else node.name] = ast.get_docstring(node)
    return out


def test_nox_list_describes_every_session():
    import ast

    header = ast.get_docstring(ast.parse((ROOT / "noxfile.py").read_text()))
    listed = [line.split()[0] for line in header.splitlines()[2:] if line and not line.startswith(" ")]
    sessions = _nox_sessions()
    assert len(sessions) >= 10 and sorted(listed) == sorted(sessions)  # before: 4 of 9 listed
    assert all(doc for doc in sessions.values()), [name for name, doc in sessions.items() if not doc]


def test_compare_factor_is_asvs_regression_threshold():
    import ast
    import re

    lines = (ROOT / "asv.conf.json").read_text().splitlines()
    conf = json.loads("\n".join(line for line in lines if not line.lstrip().startswith("//")))
    thresholds = conf["regressions_thresholds"]
    # every timed benchmark kind has its threshold, the ratio a tighter one (it is steadier)
    for name in ("operators.Forward.time_aidge('X')", "models.Backward.time_bridge('X')",
                 "operators.Forward.time_torch('X')"):
        assert [t for regex, t in thresholds.items() if re.match(regex, name)] == [thresholds[".*\\.time_"]]
    assert [t for regex, t in thresholds.items() if re.match(regex, "models.Forward.track_aidge_torch_ratio('X')")] \
        == [thresholds[".*\\.track_aidge_torch_ratio"]] and thresholds[".*\\.track_aidge_torch_ratio"] < \
        thresholds[".*\\.time_"]
    threshold = max(thresholds.values())
    assert 0 < threshold < 2
    readme = (ROOT / "README.md").read_text()
    factor = f"{1 + threshold:g}"
    # the README's compare and continuous commands use the site's largest threshold; nox -s compare
    # sets each kind's own factor (COMPARE_FACTORS, never under the site's: tests/unit/test_asv_compare.py)
    assert re.search(rf"asv compare --factor {re.escape(factor)} ", readme), factor
    assert re.search(rf"asv continuous --factor {re.escape(factor)} ", readme), factor
    assert "_regression_factor(kind)" in (ROOT / "noxfile.py").read_text()
    ast.parse((ROOT / "noxfile.py").read_text())


def test_the_readme_registers_the_machine_before_asv_runs():
    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index("## Benchmarks"):readme.index("## The API in a page")]
    assert block.index("asv machine --yes") < block.index("\nasv run")
    assert "python -m http.server -d results/html" in block and "npm" in readme[:readme.index("## The main job")]


def test_publish_offline_says_to_serve_the_site_over_http(tmp_path, capsys, monkeypatch):
    html = tmp_path / "html"
    html.mkdir()
    (html / "index.html").write_text("<p>no remote resource</p>")
    monkeypatch.setattr(publish_offline.shutil, "which", lambda name: "/usr/bin/npm")
    assert publish_offline.main(["--html-dir", str(html), "--cache", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert f"python -m http.server -d {html} 8080" in out and "file://" in out


# --- every case reachable (tools/case_index.py) ----------------------------------------------------
def test_case_index_links_every_case_of_every_operator(tmp_path):
    from tools import case_index

    ops = ["'ReLU_rank_1'", "'ReLU_rank_2'"] + [f"'Conv2D_c{i}'" for i in range(12)]
    index = {"project": "p", "benchmarks": {
        **{f"operators.{phase}.{kind}": {"params": [ops if phase == "Forward" else ops[1:]], "param_names": ["case"]}
           for phase in ("Forward", "Backward") for kind, _ in case_index.KINDS},
        **{f"models.Forward.{kind}": {"params": [["'LeNet_eval'"]], "param_names": ["case"]}
           for kind, _ in case_index.KINDS},
        # a module outside the named sections still gets its own (the architectures' had none)
        **{f"architectures.Forward.{kind}": {"params": [["'arch_monai_DenseNet121_eval'"]], "param_names": ["case"]}
           for kind, _ in case_index.KINDS},
        "threads.track_threads": {"params": [], "param_names": []}}}
    html_dir = tmp_path / "html"
    html_dir.mkdir()
    (html_dir / "index.json").write_text(json.dumps(index))
    (html_dir / "index.html").write_text('<ul>\n\t<li id="nav-li-regressions"><a href="#/regressions">R</a></li>')
    assert case_index.main(["--html-dir", str(html_dir)]) == 0
    page = (html_dir / "cases.html").read_text()
    # every case of every phase has its link (asv's grid draws 8 of 14 Conv2D cases at most)
    for value in ops:
        url = case_index.graph_url("operators.Forward.time_aidge", [value])
        assert url == "index.html#operators.Forward.time_aidge?p-case=%27" + value.strip("'") + "%27"
        assert url.replace("&", "&amp;") in page
    assert case_index.graph_url("operators.Backward.track_aidge_torch_ratio", ["'ReLU_rank_2'"]) in page
    assert "index.html#operators.Backward.time_torch?p-case=%27ReLU_rank_1%27" not in page  # forward-only case
    every_conv = case_index.graph_url("operators.Forward.time_aidge", [v for v in ops if "Conv2D" in v])
    assert every_conv.replace("&", "&amp;") in page and "all 12" in page
    assert 'id="operators-Conv2D"' in page and 'id="models-LeNet"' in page and "threads" not in page
    assert "<h2>Architectures</h2>" in page and "arch_monai_DenseNet121_eval" in page
    # torch and Aidge side by side: one link per case and phase, to the page that frames both graphs
    assert case_index.pair_url("operators", "Forward", "'ReLU_rank_1'") == "pair.html#operators.Forward|%27ReLU_rank_1%27"
    assert 'href="pair.html#operators.Backward|%27ReLU_rank_2%27"' in page
    assert 'href="pair.html#operators.Backward|%27ReLU_rank_1%27"' not in page  # forward-only case
    pair = (html_dir / "pair.html").read_text()
    assert 'fetchJson("index.json")' in pair and '".time_" + side' in pair  # both sides, from asv's data
    nav = (html_dir / "index.html").read_text()
    assert nav.count('href="cases.html"') == 1
    assert case_index.main(["--html-dir", str(html_dir)]) == 0  # idempotent
    assert (html_dir / "index.html").read_text().count('href="cases.html"') == 1


# --- the noise floor (tools/noise_floor.py) --------------------------------------------------------
def test_noise_floor_selects_both_phases_of_its_cases_and_nothing_else():
    import re

    from tools import noise_floor

    regex = noise_floor.bench_regex(["ReLU_rank_2", "LeNet_train"])
    assert re.search(regex, "operators.Forward.time_aidge('ReLU_rank_2')")
    assert re.search(regex, "models.Backward.track_aidge_torch_ratio('LeNet_train')")
    assert not re.search(regex, "operators.Forward.time_aidge('ReLU_rank_2_odd')")
    assert not re.search(regex, "threads.track_threads")
    every = {c for kind in ("operator", "model") for phase in harness.PHASES for c in harness.case_ids(kind, phase)}
    assert set(noise_floor.DEFAULT_CASES) <= every  # a renamed case would silently drop out


def test_noise_floor_ratios_per_kind():
    from tools import noise_floor

    def run(scale):
        return {f"operators.Forward.{kind}('C{i}')": (v * scale if i == 0 else v, None, None)
                for kind, v in (("time_aidge", 1e-5), ("time_torch", 2e-5), ("track_aidge_torch_ratio", 0.5))
                for i in range(4)} | {"operators.Forward.time_bridge('C9')": (None, None, None)}
    by_kind = noise_floor.compare_runs([[run(1.0), run(1.5)], [run(1.0), run(1.0)]], [1.1, 2.0])
    s = by_kind["time_aidge"]["summary"]
    assert s["n"] == 8 and s["max"] == pytest.approx(1.5) and s["median"] == pytest.approx(1.0)
    assert s["within_1.1"] == 7 / 8 and s["flagged_at_1.1"] == 1 / 8 and s["flagged_at_2"] == 0
    assert by_kind["time_bridge"]["summary"] == {"n": 0}  # a failed benchmark is left out
    assert "time_bridge                  0" in noise_floor.format_table(by_kind, [1.1, 2.0])


# --- the report's timing pass (tools/timing_pass.py) ------------------------------------------------
def test_the_timing_pass_times_each_case_the_run_timed_with_asvs_method(tmp_path):
    from tools import timing_pass

    stats = {"mean1": 1e-4, "mean2": 1e-3, "ratio": 10.0, "samples": 30}
    lines = [{"name": "Perceptron_eval", "forward": stats, "backward": None, "test_workers": 2,
              "test": "tests/test_models.py::test_model_forward[Perceptron_eval]"},
             {"name": "Linear_vs_AidgeModule", "forward": stats, "backward": stats,  # not a benchmark case
              "test": "tests/test_documented_api.py::test_performance_stats_keys"},
             {"name": "No_such_model", "forward": stats, "backward": None, "test": "tests/test_models.py::x"}]
    bench = tmp_path / "benchmarks.jsonl"
    bench.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert timing_pass.wanted(bench.read_text(), str(bench)) == [("model", "Perceptron_eval", "forward"),
                                                                  ("model", "No_such_model", "forward")]
    out = tmp_path / "timings.jsonl"
    assert timing_pass.main(["--bench", str(bench), "--out", str(out)]) == 0
    got = {line["name"]: line for line in map(json.loads, out.read_text().splitlines())}
    timed = got["Perceptron_eval"]
    assert timed["error"] is None and timed["rounds"] >= harness.RATIO_MIN_ROUNDS and timed["threads"] >= 1
    assert timed["ratio"] > 0 and timed["torch_s"] > 0 and timed["aidge_s"] > 0 and "asv" in timed["method"]
    assert timed["clock"] == "thread CPU time"  # one thread, CPU: a wait for a core is not counted
    assert got["No_such_model"]["ratio"] is None and "KeyError" in got["No_such_model"]["error"]
    assert not list(tmp_path.glob(".*partial"))  # written whole, renamed into place
    # a pass out of time says so for each case it left
    assert timing_pass.main(["--bench", str(bench), "--out", str(out), "--max-s", "-1"]) == 0
    assert all("the pass's -1 s were spent" in json.loads(line)["error"] for line in out.read_text().splitlines())


def test_the_timing_pass_times_models_first_then_operators_from_the_slowest_in_the_run():
    from tools import timing_pass

    def line(name, suite, ratio):
        stats = {"mean1": 1.0, "mean2": ratio, "ratio": ratio, "samples": 30}
        return json.dumps({"name": name, "forward": stats, "backward": None, "test": f"tests/{suite}.py::t"})

    text = "\n".join([line("ReLU_rank_2", "test_operators", 1.5), line("Resize_x", "test_operators", 300.0),
                      line("LeNet_eval", "test_models", 3.0), line("GELU_x", "test_operators", 17.0)])
    assert timing_pass.wanted(text, "b.jsonl") == [("model", "LeNet_eval", "forward"),
                                                   ("operator", "Resize_x", "forward"),
                                                   ("operator", "GELU_x", "forward"),
                                                   ("operator", "ReLU_rank_2", "forward")]
    assert timing_pass.BUDGET_S["model"] >= harness.RATIO_BUDGET_S  # a model gets at least asv's calls
