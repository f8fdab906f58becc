"""The documented API works exactly as documented (issue 27): a conformance suite that walks
the two pages of ``../shared/spec/`` section by section (``interop-api.md``, read
``aidge_interop_torch`` as ``interop``; ``inference-toolkit.md``, read ``pytest_torch`` as
``interop``). Each test quotes the line of the page it holds (``@promise(page, line)``): when it
fails, the failure names the promise that broke. Where the project deliberately differs from
a page, the test holds the difference and the list in docs/differences.md "Where the project differs from
the documentation" says why. :data:`COVERED` counts the documented items held here.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import interop

ROOT = Path(__file__).resolve().parents[1]
API, TOOLKIT = "interop-api.md", "inference-toolkit.md"
#: (page, quoted line) of every promise a test below holds
COVERED: list[tuple[str, str]] = []


def promise(page: str, line: str):
    """Mark a test as holding ``line`` of ``page``; a failure carries the quote."""
    COVERED.append((page, line))

    def decorate(fn):
        @functools.wraps(fn)
        def test(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except BaseException as exc:
                if isinstance(exc, (AssertionError, Exception)):
                    exc.add_note(f"documented promise broken ({page}): {line!r}")
                raise
        return test
    return decorate


def _run(*args, stdin: str | None = "", timeout=300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, input=stdin, capture_output=True, text=True,
                          timeout=timeout)


# ==============================================================================================
# interop-api.md: Introduction
# ==============================================================================================
@promise(API, "aidge_model = aidge_interop_torch.wrap(torch_model, [(1, 16)])")
def test_the_basic_example_runs_as_written():
    from interop import ModelTester

    torch_model = torch.nn.Linear(16, 4)
    aidge_model = interop.wrap(torch_model, [(1, 16)])
    tester = ModelTester(model1=torch_model, model2=aidge_model, name="Linear_example", test_backward=True,
                         epochs=10, benchmark=False)
    tester.test_multiple_step(input_sizes=(1, 16), label_sizes=(1, 4))


@promise(API, "The aidge_interop_torch.wrap() function exports the PyTorch model to ONNX, imports it into Aidge, "
              "and copies the model parameters.")
def test_wrap_copies_the_parameters():
    model = torch.nn.Linear(3, 2)
    aidge = interop.wrap(model, (1, 3))
    for (name, p), (name2, q) in zip(model.named_parameters(), aidge.named_parameters()):
        assert name == name2 and torch.equal(p, q)


# ==============================================================================================
# ModelTester
# ==============================================================================================
#: the documented signature; the two tolerance defaults are the project's deliberate difference
_DOCUMENTED_TESTER = dict(name="", test_backward=True, epochs=10, relative_precision=0.001,
                          absolute_precision=0.0001, learning_rate=0.01, cuda=False, benchmark=True,
                          max_slowdown_ratio=10.0, bench_warmup=2, bench_print=True, bench_min_time_ms=0.1)
_DIFFERENT_DEFAULTS = {"relative_precision": None, "absolute_precision": None}  # docs/differences.md: the tolerance table


@promise(API, "class aidge_interop_torch.ModelTester(model1, model2, name='', test_backward=True, epochs=10, "
              "relative_precision=0.001, absolute_precision=0.0001, learning_rate=0.01, cuda=False, "
              "benchmark=True, max_slowdown_ratio=10.0, bench_warmup=2, bench_print=True, bench_min_time_ms=0.1)")
def test_model_tester_takes_the_documented_parameters_in_order():
    params = list(inspect.signature(interop.ModelTester.__init__).parameters.values())[1:]
    names = [p.name for p in params]
    assert names[:14] == ["model1", "model2", *_DOCUMENTED_TESTER]
    for name, default in _DOCUMENTED_TESTER.items():
        got = inspect.signature(interop.ModelTester.__init__).parameters[name].default
        assert got == _DIFFERENT_DEFAULTS.get(name, default), name


@promise(API, "relative_precision (float) – relative tolerance used when comparing tensors. / absolute_precision "
              "(float) – absolute tolerance used when comparing tensors.")
def test_explicit_precisions_are_used():
    tester = interop.ModelTester(torch.nn.Identity(), torch.nn.Identity(), relative_precision=0.001,
                                 absolute_precision=0.0001)
    assert (tester.rtol, tester.atol) == (0.001, 0.0001)


class _OffLinear(torch.nn.Linear):
    def forward(self, x):
        return super().forward(x) + 0.5


def _pair(cls=None):
    """A Linear(4, 2) and a ``cls`` (a Linear subclass) with the same names and weights."""
    model = torch.nn.Linear(4, 2)
    other = (cls or _OffLinear)(4, 2)
    other.load_state_dict(model.state_dict())
    return model, other


def _off_pair():
    """The second's output off by 0.5."""
    return _pair(_OffLinear)


@promise(API, "unit_test(input_tensors, label, record_timing=False)#: Run a single forward pass ... then assert "
              "that outputs, loss and gradients match. Raises AssertionError on mismatch.")
def test_unit_test_raises_assertion_error_on_a_mismatch():
    tester = interop.ModelTester(*_off_pair(), name="off", test_backward=False, benchmark=False)
    with pytest.raises(AssertionError, match="off"):
        tester.unit_test([torch.randn(1, 4)], None)


@promise(API, "test_multiple_step(input_sizes, label_sizes=None)#: Run unit_test() for epochs iterations ... "
              "Wraps any AssertionError with the failing epoch number.")
def test_test_multiple_step_names_the_failing_epoch():
    tester = interop.ModelTester(*_off_pair(), name="off", test_backward=False, epochs=3, benchmark=False)
    with pytest.raises(AssertionError, match="epoch 0"):
        tester.test_multiple_step((1, 4))


class _Counting(torch.nn.Linear):
    """A Linear that counts its calls (``calls``)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.calls = []

    def forward(self, x):
        self.calls.append(1)
        return super().forward(x)


@promise(API, "epochs (int) – number of forward/backward iterations performed by test_multiple_step().")
def test_epochs_is_the_number_of_steps():
    model = _Counting(3, 2)
    calls = model.calls
    interop.ModelTester(model, model, test_backward=False, epochs=4, benchmark=False).test_multiple_step((1, 3))
    assert len(calls) == 2 * 4  # model1 and model2 are the same module here: two calls per epoch


@promise(API, "performance_stats()#: Return a dict with \"forward\" and \"backward\" entries, each containing "
              "mean1 (PyTorch), mean2 (Aidge), ratio and samples. Times are in seconds.")
def test_performance_stats_keys():
    model = torch.nn.Linear(8, 4)
    tester = interop.ModelTester(model, interop.wrap(model, (2, 8)), epochs=3, bench_warmup=1)
    tester.test_multiple_step((2, 8), (2, 4))
    stats = tester.performance_stats()
    assert set(stats) >= {"forward", "backward"}
    for phase in ("forward", "backward"):
        assert {"mean1", "mean2", "ratio", "samples"} <= set(stats[phase])
        assert 0 < stats[phase]["mean1"] < 10 and 0 < stats[phase]["mean2"] < 10  # seconds, not ms


@promise(API, "BENCH_LOG_FILE: str | None = \"benchmarks.jsonl\"#: ... Set to None to disable file logging.")
def test_bench_log_file_default_and_none(tmp_path, monkeypatch):
    assert interop.ModelTester.BENCH_LOG_FILE == "benchmarks.jsonl"
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INTEROP_RESULTS_DIR", raising=False)
    monkeypatch.setattr(interop.ModelTester, "BENCH_LOG_FILE", None)
    model = torch.nn.Linear(3, 2)
    interop.ModelTester(model, model, test_backward=False, epochs=3, bench_warmup=1).test_multiple_step((1, 3))
    assert not list(tmp_path.iterdir())


# ==============================================================================================
# Operator test framework
# ==============================================================================================
_CASE_FIELDS = ["id", "op_class", "torch_kwargs", "input_size", "output_size", "test_backward", "expected_failure"]


@promise(API, "class aidge_interop_torch.OperatorCase# ... id, op_class, torch_kwargs, input_size, output_size, "
              "test_backward, expected_failure")
def test_operator_case_has_the_documented_fields_first():
    names = [f.name for f in dataclasses.fields(interop.OperatorCase)]
    assert names[:7] == _CASE_FIELDS
    case = interop.OperatorCase(id="x", op_class=torch.nn.ReLU, torch_kwargs={}, input_size=(2, 3))
    assert case.output_size is None and case.test_backward is True and case.expected_failure is None


_CONFIG_FIELDS = ["name", "op_class", "json_path", "manual_cases", "supported_attrs", "ignored_attrs", "skip_reasons",
                  "default_input_size", "specs_to_kwargs", "xfail_all", "skip_all", "xfail_backward",
                  "forward_only_cases", "backend"]
#: fields the project does not offer (docs/differences.md)
_NOT_OFFERED: set[str] = set()


@promise(API, "class aidge_interop_torch.OperatorConfig# ... name, op_class, json_path, manual_cases, supported_attrs, "
              "ignored_attrs, skip_reasons, default_input_size, specs_to_kwargs, xfail_all, skip_all, xfail_backward, "
              "forward_only_cases, backend")
def test_operator_config_has_the_documented_fields():
    names = {f.name for f in dataclasses.fields(interop.OperatorConfig)}
    assert set(_CONFIG_FIELDS) - names == _NOT_OFFERED


class _MyPool(torch.nn.Module):
    def __init__(self, kernel_size=2, stride=2, ceil_mode=False):
        super().__init__()
        self.pool = torch.nn.MaxPool2d(kernel_size, stride, ceil_mode=ceil_mode)

    def forward(self, x):
        return self.pool(x)


def _benchmark_file(tmp_path: Path, with_format: bool = True) -> Path:
    doc = {"operation": "MaxPooling2DOp",
           "format": {"name": "Aidge", "metadata": {"initializer_rank": 1}},
           "base_configuration": {"attributes": {"kernel_dims": [2, 2], "stride_dims": [2, 2], "ceil_mode": False,
                                                 "dilations": [1, 1]},
                                  "input_specs": [{"name": "X", "shape": [1, 4, 16, 16]}]},
           "test_configurations": {
               "ok": {"attr": {"ceil_mode": {"ceil": {"attributes": {"ceil_mode": True}}}},
                      "shape": {"N": {"2": {"input_specs": [{"name": "X", "shape": [2, 4, 16, 16]}]}}}},
               "error": {"bad_kernel": {"attributes": {"kernel_dims": [-1, 2]}}}}}
    if not with_format:
        del doc["format"]
    path = tmp_path / ("pool.json" if with_format else "pool_noformat.json")
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("with_format", [True, False], ids=["operation+format", "operation only"])
@promise(API, "name (str) – operator name, used as a prefix for generated test ids. / supported_attrs (dict) – "
              "mapping of JSON attribute name to (torch_kwarg_name, type) / forward_only_cases (bool)")
def test_a_benchmark_file_is_read_through_the_users_config(tmp_path, with_format):
    # issue 27: ids were aidge.pool_..., torch_kwargs {}, forward_only_cases ignored, the error
    # section a case; without "format": "unknown top-level key(s) ['operation']"
    cfg = interop.OperatorConfig(name="HPool", op_class=_MyPool, json_path=_benchmark_file(tmp_path, with_format),
                                 ignored_attrs=frozenset({"dilations"}), forward_only_cases=False)
    cases = interop.build_cases(cfg)
    assert [c.id for c in cases] == ["HPool_attr_ceil_mode_ceil"]
    assert cases[0].torch_kwargs == {"kernel_size": (2, 2), "stride": (2, 2), "ceil_mode": True}
    assert cases[0].input_size == (1, 4, 16, 16)  # the shape of the input tensor, not a list of shapes
    assert cases[0].op_class is _MyPool


@promise(API, "forward_only_cases (bool) – whether to keep forward-only JSON cases (shape sections)")
def test_forward_only_cases_true_keeps_the_shape_section(tmp_path):
    cfg = interop.OperatorConfig(name="HPool", op_class=_MyPool, json_path=_benchmark_file(tmp_path),
                                 ignored_attrs=frozenset({"dilations"}), forward_only_cases=True)
    ids = [c.id for c in interop.build_cases(cfg)]
    assert ids == ["HPool_attr_ceil_mode_ceil", "HPool_shape_N_2"]  # never the error section


@promise(API, "supported_attrs (dict) – mapping of JSON attribute name to (torch_kwarg_name, type), defaults to the "
              "module-level SUPPORTED_ATTRS table")
def test_supported_attrs_maps_onto_the_users_keywords(tmp_path):
    from interop.cases.attributes import SUPPORTED_ATTRS

    table = dict(SUPPORTED_ATTRS, kernel_dims=("kernel_size", lambda v: v[0]))
    cfg = interop.OperatorConfig(name="HPool", op_class=_MyPool, json_path=_benchmark_file(tmp_path),
                                 ignored_attrs=frozenset({"dilations"}), supported_attrs=table)
    assert interop.build_cases(cfg)[0].torch_kwargs["kernel_size"] == 2


@promise(API, "ignored_attrs (frozenset) – JSON attribute names to drop for this operator")
def test_an_attribute_not_ignored_reaches_the_module(tmp_path):
    cfg = interop.OperatorConfig(name="HPool", op_class=_MyPool, json_path=_benchmark_file(tmp_path))
    with pytest.raises(interop.cases.ConfigError, match=r"pool\.json: case 'attr\.ceil_mode\.ceil'.*'dilation'"):
        interop.build_cases(cfg)  # dilations -> dilation, which _MyPool does not take: named, file and case


#: the spec pages, beside this checkout (``../shared/spec``)
SPEC_DIR = ROOT.parent / "shared" / "spec"


def _page_block(page: str, first: str, last: str) -> str:
    """The code block of ``page`` from the line starting with ``first`` to the next line equal
    to ``last``, as the page writes it (a test runs the page's own code, not a paraphrase)."""
    path = SPEC_DIR / page
    if not path.is_file():
        pytest.skip(f"the spec page {path} is not beside this checkout")
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(first)), None)
    assert start is not None, f"{path}: no line starts with {first!r} (the page changed: update this test)"
    end = next((i for i in range(start, len(lines)) if lines[i] == last), None)
    assert end is not None, f"{path}: no line {last!r} after line {start + 1}"
    return "\n".join(lines[start:end + 1]) + "\n"


class _MyOpModel(torch.nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(in_channels, 1, 1))

    def forward(self, x):
        return x * self.w


def _my_op_file(root: Path) -> None:
    """A benchmark file whose cases override the base's input specs (or inherit them)."""
    (root / "my_op.json").write_text(json.dumps({
        "base_configuration": {"attributes": {}, "input_specs": [{"name": "X", "shape": [1, 3, 4, 4]}]},
        "test_configurations": {"sizes": {"inherit": {"attributes": {}},
                                          "wide": {"input_specs": [{"name": "X", "shape": [1, 5, 4, 4]}]}}}}))


@promise(API, "def my_extractor(merged_specs: list[dict]) -> dict:")
def test_the_pages_specs_to_kwargs_example_runs_as_written(tmp_path):
    # issue 45: the page's extractor failed with "string indices must be integers" (it was given
    # a dict of specs by name, not the list of merged specs the page shows)
    block = _page_block(API, "def my_extractor(", ")")
    assert "merged_specs[0][\"shape\"][1]" in block  # the page's own code, not a paraphrase
    namespace = {"OperatorConfig": interop.OperatorConfig, "CONFIG_ROOT": tmp_path, "MyOpModel": _MyOpModel}
    _my_op_file(tmp_path)
    exec(compile(block, f"{SPEC_DIR / API}:my_extractor", "exec"), namespace)
    cases = interop.build_cases(namespace["MY_OP_CONFIG"])
    assert [c.torch_kwargs for c in cases] == [{"in_channels": 3}, {"in_channels": 5}]


@promise(API, "specs_to_kwargs (callable) – (merged_input_specs) -> dict, used to derive constructor kwargs that "
              "depend on tensor shapes")
def test_specs_to_kwargs_derives_keywords_from_shapes(tmp_path):
    # the merged input specs, a list in the cases' order (base first), as the page shows
    seen = []
    path = tmp_path / "scale.json"
    path.write_text(json.dumps({"one": {"input_specs": [{"name": "X", "shape": [1, 3, 4, 4]},
                                                        {"name": "weight", "shape": [3, 1, 1]}]}}))

    def extractor(specs):
        seen.append(specs)
        return {"in_channels": specs[0]["shape"][1]}

    cfg = interop.OperatorConfig(name="Scale", op_class=_MyOpModel, json_path=path, specs_to_kwargs=extractor)
    assert interop.build_cases(cfg)[0].torch_kwargs == {"in_channels": 3}
    assert seen == [[{"name": "X", "shape": [1, 3, 4, 4]}, {"name": "weight", "shape": [3, 1, 1]}]]


@promise(API, "default_input_size (tuple) – fallback input shape used when a JSON case does not specify one.")
def test_default_input_size_sizes_a_case_that_gives_none(tmp_path):
    path = tmp_path / "relu.json"
    path.write_text(json.dumps({"plain": {"attributes": {}}, "given": {"input_specs": [{"name": "X", "shape": [2, 5]}]}}))
    cfg = interop.OperatorConfig(name="Relu", op_class=torch.nn.ReLU, json_path=path, default_input_size=(3, 4))
    assert [c.input_size for c in interop.build_cases(cfg)] == [(3, 4), (2, 5)]


@promise(API, "skip_all (str) – if set, every case is skipped outright")
def test_skip_all_skips_every_case(tmp_path):
    cfg = interop.OperatorConfig(name="HPool", op_class=_MyPool, json_path=_benchmark_file(tmp_path),
                                 ignored_attrs=frozenset({"dilations"}), skip_all="crashes the interpreter")
    assert {c.skip_reason for c in interop.build_cases(cfg)} == {"crashes the interpreter"}


@pytest.mark.parametrize("field", ["xfail_all", "xfail_backward", "skip_reasons"])
@promise(API, "xfail_all (str) / xfail_backward (str) / skip_reasons (dict): deliberately refused (docs/differences.md)")
def test_the_refused_xfail_fields_say_why(tmp_path, field):
    value = {"ok.attr": "why"} if field == "skip_reasons" else "why"
    with pytest.raises(TypeError, match="one table"):
        interop.OperatorConfig(name="HPool", op_class=_MyPool, json_path=_benchmark_file(tmp_path), **{field: value})


@promise(API, "backend (str) – force \"cpu\" or \"cuda\" for this operator.")
def test_backend_forces_the_operators_backend(tmp_path):
    cfg = interop.OperatorConfig(name="HPool", op_class=_MyPool, json_path=_benchmark_file(tmp_path),
                                 ignored_attrs=frozenset({"dilations"}), backend="cuda")
    assert {c.backend for c in interop.build_cases(cfg)} == {"cuda"}


@promise(API, "manual_cases (list) – an explicit list of OperatorCase, bypassing JSON parsing entirely.")
def test_manual_cases_bypass_json():
    case = interop.OperatorCase(id="Relu_manual", op_class=torch.nn.ReLU, torch_kwargs={}, input_size=(2, 3))
    cases = interop.build_cases(interop.OperatorConfig(name="Relu", op_class=torch.nn.ReLU, manual_cases=[case]))
    assert [c.id for c in cases] == ["Relu_manual"] and cases[0].input_size == (2, 3)


@pytest.mark.parametrize("layout, doc", [
    ("benchmark_ok", {"base_configuration": {"input_specs": [{"name": "X", "shape": [2, 3]}]},
                      "test_configurations": {"ok": {"attr": {"a": {}}}}}),
    ("benchmark_flat", {"base_configuration": {"input_specs": [{"name": "X", "shape": [2, 3]}]},
                        "test_configurations": {"shape": {"a": {}}}}),
    ("simple", {"a": {"input_specs": [{"name": "X", "shape": [2, 3]}]}}),
])
@promise(API, "JSON configuration formats. build_cases automatically detects one of the following JSON layouts: "
              "benchmark_ok, benchmark_flat, simple, manual")
def test_the_layouts_are_detected(layout, doc):
    assert interop.cases.detect_layout(doc) == layout


@promise(API, "Returns:: a fixture yielding a dict with keys name, torch_model, aidge_model, input_size, output_size, "
              "test_backward.")
def test_make_operator_fixture_yields_the_documented_keys():
    from interop.cases.suite import OperatorCaseRun

    case = interop.OperatorCase(id="Relu_x", op_class=torch.nn.ReLU, torch_kwargs={}, input_size=(2, 3))
    run = OperatorCaseRun(case, None)
    assert {"name", "torch_model", "aidge_model", "input_size", "output_size", "test_backward"} <= set(run)
    assert run["name"] == "Relu_x" and run["input_size"] == (2, 3) and run["test_backward"] is True
    assert callable(interop.make_operator_fixture)


@promise(API, "applies the right xfail/skip mark (operator-wide skip, operator-wide xfail, backward-only xfail, or "
              "per-case xfail, in that priority order)")
def test_the_operator_wide_skip_comes_before_the_per_case_xfail(tmp_path):
    # operator-wide and backward-only xfails are refused here (docs/differences.md); what remains of the order:
    # skip_all wins over the per-case strict xfail of the table
    (tmp_path / "test_priority.py").write_text(
        "import dataclasses, pytest\n"
        "from interop import make_operator_fixture\n"
        "from interop.cases.catalog import OPERATOR_CONFIGS\n"
        "plain = make_operator_fixture(OPERATOR_CONFIGS['ReduceMean'])\n"
        "skipped = make_operator_fixture(dataclasses.replace(OPERATOR_CONFIGS['ReduceMean'], skip_all='op-wide'))\n"
        "def test_plain(plain):\n"
        "    assert plain['expected_failure'] is not None  # the table's row: its strict xfail is applied\n"
        "    pytest.skip('per-case xfail applied')\n"
        "def test_skipped(skipped):\n"
        "    raise AssertionError('an operator-wide skip must not run the case')\n")
    done = _run("-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "no:xdist", str(tmp_path / "test_priority.py"),
                "-k", "keep_dims_false_all_dims")
    assert done.returncode == 0, done.stdout[-3000:]
    assert "2 skipped" in done.stdout and "op-wide" in done.stdout and "per-case xfail applied" in done.stdout


# ==============================================================================================
# Test suites: the -k examples
# ==============================================================================================
@pytest.mark.parametrize("target, k", [
    ("tests/test_models.py", "LeNet_eval"),
    ("tests/test_operators.py", "Conv2D"),
    ("tests/test_operators.py", "Conv2D_attributes_kernel_square"),
    ("tests/test_operators.py", "ReduceMean_axes_1_dim"),
    ("tests/test_tensor.py", "test_conversion_cpu"),
])
@promise(API, "pytest test_models.py -v -k \"LeNet_eval\" / pytest test_operators.py -v -k \"Conv2D\" / "
              "-k \"Conv2D_attributes_kernel_square\" / -k \"ReduceMean_axes_1_dim\" / pytest test_tensor.py -v -k "
              "\"test_conversion_cpu\"")
def test_the_documented_k_filters_select_cases(target, k):
    done = _run("-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", target, "-k", k)
    assert done.returncode == 0, done.stdout[-2000:]
    selected = [line for line in done.stdout.splitlines() if "::" in line]
    assert selected and all(k.lower() in line.lower() for line in selected), selected[:5]


# ==============================================================================================
# tensor_converter
# ==============================================================================================
@promise(API, "aidge_interop_torch.tensor_converter.torch_tensor_to_aidge() and "
              "aidge_interop_torch.tensor_converter.aidge_tensor_to_torch()")
def test_tensor_converter_round_trips():
    from interop import tensor_converter  # issue 27: ImportError before

    for dtype in (torch.float32, torch.float64, torch.int32, torch.int64):
        x = (torch.randn(2, 3) * 10).to(dtype)
        back = tensor_converter.aidge_tensor_to_torch(tensor_converter.torch_tensor_to_aidge(x))
        assert back.dtype == dtype and torch.equal(back, x)
    assert interop.tensor_converter.torch_tensor_to_aidge is interop.torch_tensor_to_aidge


# ==============================================================================================
# Results analysis
# ==============================================================================================
DATA = ROOT / "tests" / "unit" / "data"


@pytest.mark.parametrize("how", ["file", "file --bench", "piped", "piped --bench"])
@promise(API, "python analyze_results.py results.txt / python analyze_results.py results.txt --bench benchmarks.jsonl "
              "/ pytest test_operators.py -v 2>&1 | python analyze_results.py")
def test_every_documented_analyze_results_invocation_reads_the_failures(how):
    results, bench = DATA / "pytest_verbose.txt", DATA / "benchmarks.jsonl"
    args = ["analyze_results.py"] + ([str(results)] if how.startswith("file") else [])
    if how.endswith("--bench"):
        args += ["--bench", str(bench)]
    done = _run(*args, stdin=results.read_text() if how.startswith("piped") else "")
    assert done.returncode == 0, done.stderr[-2000:]
    reference = _run("analyze_results.py", str(results))
    # issue 27: piped with --bench printed "Aidge bugs to report: 0 operator(s)" for a run with failures
    assert "Aidge bugs to report: 0 operator(s)" not in done.stdout
    first = lambda text: next(line for line in text.splitlines() if "Aidge bugs to report" in line)  # noqa: E731
    assert first(done.stdout) == first(reference.stdout)


@pytest.mark.parametrize("args, pair", [
    (("Aidge backward failed (operator BatchNorm2D): Backward not yet implemented for BatchNorm_Op<2> on backend cpu",),
     ("backward_not_implemented", "🟠")),
    ((None, "[Conv2D_x, epoch 0] output differs between model1 (Conv2d) and model2 (AidgeModule) [seed 1]\n"
            "Tensors are not close at output!"), ("outputs_differ", "🔴")),
    ((None, "Shapes do not match at output: actual (1,) vs expected ()"), ("shape_mismatch (test strategy)", "🟡")),
])
@promise(API, "a (category, emoji) pair, e.g. (\"outputs_differ\", \"🔴\") or (\"shape_mismatch (test strategy)\", \"🟡\").")
def test_categorize_returns_the_documented_pairs(args, pair):
    assert interop.categorize(*args) == pair


# ==============================================================================================
# inference-toolkit.md
# ==============================================================================================
@promise(TOOLKIT, "from pytest_torch import (assert_tensors_close, assert_outputs_close, assert_finite, "
                  "assert_batch_invariant,)")
def test_the_assertions_are_importable():
    from interop import assert_batch_invariant, assert_finite, assert_outputs_close, assert_tensors_close  # noqa: F401


@promise(TOOLKIT, "integer and bool tensors compare exactly (also above 2^53) ... NaNs must sit at the same "
                  "positions and count as equal unless equal_nan=False.")
def test_tensor_comparison_semantics():
    big = torch.tensor([2 ** 53 + 1])
    with pytest.raises(AssertionError):
        interop.assert_tensors_close(big, torch.tensor([2 ** 53]))
    nan = torch.tensor([1.0, float("nan")])
    interop.assert_tensors_close(nan, nan.clone())
    with pytest.raises(AssertionError):
        interop.assert_tensors_close(nan, nan.clone(), equal_nan=False)


@promise(TOOLKIT, "Failures say how many elements differ, where the worst one is, and the absolute and relative error")
def test_a_failure_says_how_many_where_and_how_much():
    actual = torch.zeros(2, 3)
    expected = actual.clone()
    expected[1, 2] = 1.0
    with pytest.raises(AssertionError) as info:
        interop.assert_outputs_close({"pooled": actual}, {"pooled": expected})
    text = str(info.value)
    # how many, where the worst one is, absolute and relative error (the comparator's wording)
    assert "Mismatched elements: 1 / 6" in text and "at index (1, 2)" in text
    assert "absolute difference" in text and "relative difference" in text and "output['pooled']" in text


@promise(TOOLKIT, "assert_outputs_close also reports structure changes, including empty containers ([] vs {}); a "
                  "tuple and a list with the same contents count as the same.")
def test_structure_rules():
    x = torch.ones(2)
    interop.assert_outputs_close((x, x), [x, x])
    with pytest.raises(AssertionError):
        interop.assert_outputs_close([], {})


@promise(TOOLKIT, "assert_finite(out, \"output\")  # NaN/Inf anywhere in the structure")
def test_assert_finite():
    interop.assert_finite({"a": [torch.ones(2)]}, "output")
    with pytest.raises(AssertionError):
        interop.assert_finite({"a": [torch.tensor([1.0, float("inf")])]}, "output")


@promise(TOOLKIT, "assert_batch_invariant(model, batch)  # model(batch)[i] == model(batch[i:i+1])[0]")
def test_assert_batch_invariant():
    interop.assert_batch_invariant(torch.nn.Linear(4, 2).eval(), torch.randn(3, 4))


@promise(TOOLKIT, "report = check_inference_contract(model, x, raise_on_failure=False) ... Inference contract: "
                  "4 passed, 1 failed, 2 skipped")
def test_the_contract_report_reads_as_documented():
    report = interop.check_inference_contract(torch.nn.Linear(4, 2).eval(), torch.randn(3, 4), raise_on_failure=False)
    text = str(report)
    assert text.startswith("Inference contract: ") and "[PASS] eval_mode" in text
    assert "[SKIP] dtype_parity" in text


@promise(TOOLKIT, "Select checks with checks=[...] / skip=[...] (selecting none is an error, raised before the model "
                  "runs)")
def test_selecting_no_check_is_an_error():
    spy = _Counting(4, 2).eval()
    with pytest.raises(ValueError):
        interop.check_inference_contract(spy, torch.randn(3, 4), checks=[])
    assert not spy.calls


@promise(TOOLKIT, "report = localize_divergence(model_cpu, model_gpu, x) / report.raise_if_diverged()")
def test_localize_divergence_names_the_first_diverging_layer():
    torch.manual_seed(0)
    a = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    b = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    b.load_state_dict(a.state_dict())
    with torch.no_grad():
        b[2].bias.add_(1.0)
    report = interop.localize_divergence(a, b, torch.randn(2, 4))
    with pytest.raises(AssertionError, match="First: '2'"):
        report.raise_if_diverged()


@promise(TOOLKIT, "assert_padding_invariant, assert_mask_invariant, assert_permutation_invariant, "
                  "assert_permutation_equivariant, assert_invariant, assert_equivariant")
def test_the_invariance_assertions():
    interop.assert_invariant(lambda t: t.abs().sum(), torch.randn(3), lambda t: -t, name="sign flip")
    interop.assert_permutation_invariant(lambda p: p.sum(dim=1), torch.randn(2, 5, 3), dim=1)
    interop.assert_permutation_equivariant(torch.nn.Linear(3, 3), torch.randn(2, 5, 3))
    with pytest.raises(AssertionError):
        interop.assert_invariant(lambda t: t.sum(), torch.randn(3), lambda t: t + 1, name="shift")


@promise(TOOLKIT, "A missing golden file fails: CI must never pass vacuously.")
def test_a_missing_golden_file_fails(tmp_path):
    from interop.diagnostics.golden import GoldenFile, GoldenMissing

    with pytest.raises(GoldenMissing, match="--torch-update-golden"):
        GoldenFile(tmp_path / "absent.npz", test_id="t").check(torch.zeros(2))


@promise(TOOLKIT, "from pytest_torch.strategies import tensors / @given(x=tensors(shape=(4, 16)))")
def test_the_hypothesis_strategy():
    from hypothesis import given, settings

    from interop.diagnostics.strategies import tensors

    seen = []

    @settings(max_examples=10, deadline=None, database=None)
    @given(x=tensors(shape=(4, 16)))
    def check(x):
        seen.append(x)
        assert x.shape == (4, 16)

    check()
    assert len(seen) == 10


@promise(API, "test_backward (bool) – if True, also runs a backward pass, compares the loss, input gradients and "
              "parameter gradients, and updates model1 with an SGD step. / learning_rate (float)")
def test_test_backward_compares_gradients_and_steps_both_models():
    model = torch.nn.Linear(4, 2)
    aidge = interop.wrap(model, (2, 4))
    before = model.weight.detach().clone()
    tester = interop.ModelTester(model, aidge, test_backward=True, epochs=2, learning_rate=0.1, benchmark=False)
    tester.test_multiple_step((2, 4), (2, 2))
    assert not torch.equal(model.weight, before)  # stepped with the SGD step
    assert torch.allclose(model.weight, dict(aidge.named_parameters())["weight"], atol=1e-5)


@promise(TOOLKIT, "no_state_mutation covers every registered parameter and buffer, non-persistent buffers included")
def test_the_contract_catches_a_buffer_mutated_during_inference():
    class Counts(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("seen", torch.zeros(1), persistent=False)

        def forward(self, x):
            self.seen += 1
            return x * 2

    report = interop.check_inference_contract(Counts().eval(), torch.randn(2, 3), raise_on_failure=False)
    assert "[FAIL] no_state_mutation" in str(report)


@promise(TOOLKIT, "@pytest.mark.torch_golden(\"classifier_v1\") ... golden.check(model(make_tensor(8, 16)), atol=1e-4) "
                  "/ pytest --torch-update-golden --torch-device=cpu / A missing golden file fails")
def test_the_golden_workflow_as_documented(tmp_path):
    (tmp_path / "test_g.py").write_text(
        "import pytest, torch\n"
        "torch.manual_seed(0)\nMODEL = torch.nn.Linear(16, 4)\n"
        "@pytest.mark.torch_golden('classifier_v1')\n"
        "def test_matches_golden(make_tensor, golden):\n"
        "    golden.check(MODEL(make_tensor(8, 16)), atol=1e-4)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    run = lambda *a: subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",  # noqa: E731
                                     str(tmp_path / "test_g.py"), *a], cwd=tmp_path, env=env, capture_output=True,
                                    text=True, timeout=300)
    missing = run("--torch-device=cpu")
    assert missing.returncode == 1 and "golden reference missing" in missing.stdout  # never a vacuous pass
    assert run("--torch-update-golden", "--torch-device=cpu").returncode == 0
    again = run("--torch-device=cpu")
    assert again.returncode == 0, again.stdout[-2000:]


class _Flagged(torch.nn.Linear):
    """model2 of the fake-clock tests: marks its calls so the fake clock can tell them apart."""

    called = False

    def forward(self, x):
        type(self).called = True
        return super().forward(x)


def _fake_clock(monkeypatch, torch_s: float, aidge_s: float):
    """``timing.timed`` answering ``torch_s`` for model1's calls and ``aidge_s`` for model2's: the
    slowdown check is tested on a fake clock, never on the machine's (a timed assertion)."""
    from interop.equivalence import timing

    def timed(fn, cuda=False):
        _Flagged.called = False
        out = fn()
        return out, aidge_s if _Flagged.called else torch_s

    monkeypatch.setattr(timing, "timed", timed)


def _flagged_pair():
    return _pair(_Flagged)


@promise(API, "max_slowdown_ratio (float) – maximum tolerated mean(aidge) / mean(torch) ratio before "
              "test_multiple_step() raises.")
def test_max_slowdown_ratio_raises_on_a_fake_clock(monkeypatch):
    _fake_clock(monkeypatch, torch_s=1e-3, aidge_s=50e-3)  # x50
    tester = interop.ModelTester(*_flagged_pair(), test_backward=False, epochs=3, bench_warmup=1,
                                 max_slowdown_ratio=10.0)
    with pytest.raises(AssertionError, match="slower"):
        tester.test_multiple_step((1, 4))
    interop.ModelTester(*_flagged_pair(), test_backward=False, epochs=3, bench_warmup=1,
                        max_slowdown_ratio=100.0).test_multiple_step((1, 4))


@promise(API, "bench_min_time_ms (float) – skip the slowdown-ratio assertion for a phase whose PyTorch time is below "
              "this threshold")
def test_bench_min_time_ms_skips_an_overhead_dominated_phase(monkeypatch):
    _fake_clock(monkeypatch, torch_s=1e-6, aidge_s=1e-3)  # x1000, but torch at 0.001 ms < 0.1 ms
    interop.ModelTester(*_flagged_pair(), test_backward=False, epochs=3, bench_warmup=1,
                        max_slowdown_ratio=10.0, bench_min_time_ms=0.1).test_multiple_step((1, 4))


@promise(API, "bench_warmup (int) – number of leading epochs excluded from timing (JIT / cache warm-up).")
def test_bench_warmup_epochs_are_not_timed(monkeypatch):
    seen = []
    original = interop.ModelTester.unit_test

    def spy(self, inputs, label, record_timing=False):
        seen.append(record_timing)
        return original(self, inputs, label, record_timing=record_timing)

    monkeypatch.setattr(interop.ModelTester, "unit_test", spy)
    model = torch.nn.Linear(3, 2)
    interop.ModelTester(model, model, test_backward=False, epochs=5, bench_warmup=2).test_multiple_step((1, 3))
    assert seen == [False, False, True, True, True]


@promise(API, "cuda (bool) – run both models on GPU and synchronize before every timing measurement.")
def test_cuda_without_a_gpu_is_a_clear_error():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the CUDA suites hold cuda=True")
    with pytest.raises(interop.errors.CudaUnavailableError, match="cuda=True"):
        interop.ModelTester(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2), cuda=True)


@promise(API, "pytest test_operators.py -v  # all operators")
def test_the_operator_suite_collects_every_operator():
    done = _run("-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests/test_operators.py")
    assert done.returncode == 0, done.stdout[-2000:]
    operators = {line.split("::")[1].split("[")[0] for line in done.stdout.splitlines() if "::" in line}
    assert {"test_Conv2D_interop", "test_ReLU_interop", "test_BatchNorm2D_interop"} <= operators
    assert len(operators) >= 30


@promise(API, "Add a new entry to the test_cases list in test_models.py. ... a unique test name; the instantiated "
              "PyTorch model; the input and output tensor shapes; whether backward propagation should be validated")
def test_model_entries_carry_the_documented_keys():
    from interop.zoo.models import MODEL_CASES

    names = [spec["name"] for spec in MODEL_CASES]
    assert len(names) == len(set(names))
    for spec in MODEL_CASES:  # "expected_failure": the one table instead (docs/differences.md)
        assert {"name", "model", "input_size", "output_size", "test_backward"} <= set(spec), spec["name"]


@promise(TOOLKIT, "complex tensors compare real and imaginary parts")
def test_complex_tensors_compare_both_parts():
    z = torch.tensor([1 + 2j, 3 - 1j])
    interop.assert_tensors_close(z, z.clone())
    with pytest.raises(AssertionError):
        interop.assert_tensors_close(z, z + 0.5j)


@promise(TOOLKIT, "when --torch-device pins devices, only against the other pinned ones, so --torch-device=cpu never "
                  "touches a GPU.")
def test_device_parity_with_cpu_only_is_skipped():
    from interop.diagnostics.contract_checks import parity_devices

    assert parity_devices("cpu") == ()  # what --torch-device=cpu gives the contract: no other device
    report = interop.check_inference_contract(torch.nn.Linear(4, 2).eval(), torch.randn(3, 4), raise_on_failure=False,
                                              devices=parity_devices("cpu"))
    assert "[SKIP] device_parity" in str(report) and "never touches a GPU" in str(report)
    if not torch.cuda.is_available():
        report = interop.check_inference_contract(torch.nn.Linear(4, 2).eval(), torch.randn(3, 4),
                                                  raise_on_failure=False)
        assert "[SKIP] device_parity: no other device available" in str(report)


@promise(TOOLKIT, "a model that returns a buffer it overwrites in place on later calls fails the determinism check "
                  "instead of passing it.")
def test_a_model_returning_its_overwritten_buffer_fails_determinism():
    class Reuses(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("out", torch.zeros(3, 2), persistent=False)
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            self.out.copy_(x[:, :2] * self.calls)
            return self.out

    report = interop.check_inference_contract(Reuses().eval(), torch.randn(3, 4), raise_on_failure=False,
                                              checks=["deterministic"])
    assert "[FAIL] deterministic" in str(report)


@promise(TOOLKIT, "Divergence: 3 of 12 layers exceed tolerance (rtol=0.0001, atol=0.0001). First: 'encoder.1' "
                  "(LayerNorm) ... inputs=ok means the error started inside that layer ... Use module_map when layer "
                  "names differ between the two models.")
def test_the_divergence_report_and_module_map():
    torch.manual_seed(0)

    class A(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)
            self.head = torch.nn.Linear(4, 2)

        def forward(self, x):
            return self.head(torch.relu(self.fc(x)))

    class B(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dense = torch.nn.Linear(4, 4)
            self.out = torch.nn.Linear(4, 2)

        def forward(self, x):
            return self.out(torch.relu(self.dense(x)))

    a, b = A(), B()
    b.dense.load_state_dict(a.fc.state_dict())
    b.out.load_state_dict(a.head.state_dict())
    with torch.no_grad():
        b.dense.weight.add_(0.5)
    report = interop.localize_divergence(a, b, torch.randn(2, 4), rtol=1e-4, atol=1e-4,
                                         module_map={"fc": "dense", "head": "out"})
    text = str(report)
    assert "Divergence: " in text and "layers exceed tolerance (rtol=0.0001, atol=0.0001)" in text
    assert "First: 'fc' (Linear)" in text and "inputs=ok" in text


@promise(TOOLKIT, "assert_padding_invariant(model, batch, extra=4, side=\"right\") / assert_mask_invariant(model, "
                  "batch) / assert_equivariant")
def test_padding_mask_and_equivariance():
    torch.manual_seed(0)

    class Tokens(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(50, 4)

        def forward(self, input_ids, attention_mask):
            hidden = self.emb(input_ids) * attention_mask[..., None]
            return {"last_hidden_state": hidden, "pooled": hidden.sum(1)}

    batch = {"input_ids": torch.randint(1, 50, (2, 6)), "attention_mask": torch.ones(2, 6, dtype=torch.long)}
    model = Tokens().eval()
    interop.assert_padding_invariant(model, batch, extra=4, side="right")
    interop.assert_mask_invariant(model, batch)
    interop.assert_equivariant(lambda t: t * 2, torch.randn(5), lambda t: t.flip(0), lambda t: t.flip(0))
    with pytest.raises(AssertionError):
        interop.assert_equivariant(lambda t: t.cumsum(0), torch.randn(5), lambda t: t.flip(0), lambda t: t.flip(0))


#: every documented item of the two pages -> the test that holds it (None: not held yet). The
#: ModelTester and OperatorConfig parameters count one item each.
_TESTER = "test_model_tester_takes_the_documented_parameters_in_order"
_FIELDS = "test_operator_config_has_the_documented_fields"
ITEMS: dict[str, str | None] = {
    "api: wrap() basic example": "test_the_basic_example_runs_as_written",
    "api: wrap() copies the parameters": "test_wrap_copies_the_parameters",
    **{f"api: ModelTester({p})": _TESTER for p in ("model1", "model2", "name", "epochs", "cuda", "benchmark",
                                                   "max_slowdown_ratio", "bench_warmup", "bench_print",
                                                   "bench_min_time_ms")},
    "api: ModelTester(test_backward)": "test_test_backward_compares_gradients_and_steps_both_models",
    "api: ModelTester(learning_rate)": "test_test_backward_compares_gradients_and_steps_both_models",
    "api: ModelTester(relative_precision)": "test_explicit_precisions_are_used",
    "api: ModelTester(absolute_precision)": "test_explicit_precisions_are_used",
    "api: ModelTester.unit_test": "test_unit_test_raises_assertion_error_on_a_mismatch",
    "api: ModelTester.test_multiple_step": "test_test_multiple_step_names_the_failing_epoch",
    "api: ModelTester epochs behaviour": "test_epochs_is_the_number_of_steps",
    "api: ModelTester.performance_stats": "test_performance_stats_keys",
    "api: ModelTester.BENCH_LOG_FILE / None": "test_bench_log_file_default_and_none",
    "api: ModelTester max_slowdown_ratio behaviour": "test_max_slowdown_ratio_raises_on_a_fake_clock",
    "api: ModelTester bench_warmup behaviour": "test_bench_warmup_epochs_are_not_timed",
    "api: ModelTester bench_min_time_ms behaviour": "test_bench_min_time_ms_skips_an_overhead_dominated_phase",
    "api: ModelTester cuda behaviour (without a GPU)": "test_cuda_without_a_gpu_is_a_clear_error",
    "api: OperatorCase fields": "test_operator_case_has_the_documented_fields_first",
    "api: OperatorConfig(name) as id prefix": "test_a_benchmark_file_is_read_through_the_users_config",
    "api: OperatorConfig(op_class)": "test_a_benchmark_file_is_read_through_the_users_config",
    "api: OperatorConfig(json_path)": "test_a_benchmark_file_is_read_through_the_users_config",
    "api: OperatorConfig(manual_cases)": "test_manual_cases_bypass_json",
    "api: OperatorConfig(supported_attrs)": "test_supported_attrs_maps_onto_the_users_keywords",
    "api: OperatorConfig(ignored_attrs)": "test_an_attribute_not_ignored_reaches_the_module",
    "api: OperatorConfig(skip_reasons) refused": "test_the_refused_xfail_fields_say_why",
    "api: OperatorConfig(default_input_size)": "test_default_input_size_sizes_a_case_that_gives_none",
    "api: OperatorConfig(specs_to_kwargs)": "test_specs_to_kwargs_derives_keywords_from_shapes",
    "api: specs_to_kwargs example (my_extractor)": "test_the_pages_specs_to_kwargs_example_runs_as_written",
    "api: OperatorConfig(xfail_all) refused": "test_the_refused_xfail_fields_say_why",
    "api: OperatorConfig(skip_all)": "test_skip_all_skips_every_case",
    "api: OperatorConfig(xfail_backward) refused": "test_the_refused_xfail_fields_say_why",
    "api: OperatorConfig(forward_only_cases)": "test_forward_only_cases_true_keeps_the_shape_section",
    "api: OperatorConfig(backend)": "test_backend_forces_the_operators_backend",
    "api: OperatorConfig fields present": _FIELDS,
    "api: build_cases": "test_a_benchmark_file_is_read_through_the_users_config",
    "api: make_operator_fixture keys": "test_make_operator_fixture_yields_the_documented_keys",
    "api: make_operator_fixture mark priority": "test_the_operator_wide_skip_comes_before_the_per_case_xfail",
    "api: layout benchmark_ok": "test_the_layouts_are_detected",
    "api: layout benchmark_flat": "test_the_layouts_are_detected",
    "api: layout simple": "test_the_layouts_are_detected",
    "api: layout manual": "test_manual_cases_bypass_json",
    "api: -k LeNet_eval": "test_the_documented_k_filters_select_cases",
    "api: -k Conv2D": "test_the_documented_k_filters_select_cases",
    "api: -k Conv2D_attributes_kernel_square": "test_the_documented_k_filters_select_cases",
    "api: -k ReduceMean_axes_1_dim": "test_the_documented_k_filters_select_cases",
    "api: pytest test_operators.py (all operators)": "test_the_operator_suite_collects_every_operator",
    "api: -k test_conversion_cpu": "test_the_documented_k_filters_select_cases",
    "api: tensor_converter.torch_tensor_to_aidge": "test_tensor_converter_round_trips",
    "api: tensor_converter.aidge_tensor_to_torch": "test_tensor_converter_round_trips",
    "api: analyze_results.py FILE": "test_every_documented_analyze_results_invocation_reads_the_failures",
    "api: analyze_results.py FILE --bench": "test_every_documented_analyze_results_invocation_reads_the_failures",
    "api: ... | analyze_results.py": "test_every_documented_analyze_results_invocation_reads_the_failures",
    "api: ... | analyze_results.py --bench": "test_every_documented_analyze_results_invocation_reads_the_failures",
    "api: categorize pairs": "test_categorize_returns_the_documented_pairs",
    "api: model registration dict": "test_model_entries_carry_the_documented_keys",
    "toolkit: assert_tensors_close": "test_tensor_comparison_semantics",
    "toolkit: integers exact above 2^53, NaN positions": "test_tensor_comparison_semantics",
    "toolkit: complex tensors": "test_complex_tensors_compare_both_parts",
    "toolkit: assert_outputs_close structure": "test_structure_rules",
    "toolkit: failure message": "test_a_failure_says_how_many_where_and_how_much",
    "toolkit: assert_finite": "test_assert_finite",
    "toolkit: assert_batch_invariant": "test_assert_batch_invariant",
    "toolkit: contract report": "test_the_contract_report_reads_as_documented",
    "toolkit: contract checks=[] is an error": "test_selecting_no_check_is_an_error",
    "toolkit: no_state_mutation": "test_the_contract_catches_a_buffer_mutated_during_inference",
    "toolkit: device_parity / --torch-device": "test_device_parity_with_cpu_only_is_skipped",
    "toolkit: deterministic copies the first output": "test_a_model_returning_its_overwritten_buffer_fails_determinism",
    "toolkit: localize_divergence": "test_localize_divergence_names_the_first_diverging_layer",
    "toolkit: divergence table, inputs ok/DIFF, module_map": "test_the_divergence_report_and_module_map",
    "toolkit: assert_invariant": "test_the_invariance_assertions",
    "toolkit: assert_permutation_invariant": "test_the_invariance_assertions",
    "toolkit: assert_permutation_equivariant": "test_the_invariance_assertions",
    "toolkit: assert_padding_invariant": "test_padding_mask_and_equivariance",
    "toolkit: assert_mask_invariant": "test_padding_mask_and_equivariance",
    "toolkit: assert_equivariant": "test_padding_mask_and_equivariance",
    "toolkit: golden marker and check": "test_the_golden_workflow_as_documented",
    "toolkit: --torch-update-golden": "test_the_golden_workflow_as_documented",
    "toolkit: a missing golden file fails": "test_a_missing_golden_file_fails",
    "toolkit: hypothesis tensors()": "test_the_hypothesis_strategy",
}


def test_the_count_of_documented_items_held():
    """Every item names a test of this module that exists; the note of issue 27 quotes the count."""
    tests = {name for name in globals() if name.startswith("test_")}
    named = {t for t in ITEMS.values() if t is not None}
    assert named <= tests, sorted(named - tests)
    held = sum(t is not None for t in ITEMS.values())
    assert held >= 86 and len(set(COVERED)) == len(COVERED), (held, len(ITEMS))
