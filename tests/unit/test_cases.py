"""Unit tests of the operator-case framework: JSON layouts, merging, attribute mapping,
errors naming file/case/key, forward-only cases, mark priority, and the catalog itself."""
from __future__ import annotations

import dataclasses
import functools
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from interop.cases import (
    SUPPORTED_ATTRS,
    ConfigError,
    OperatorCase,
    OperatorConfig,
    build_cases,
    case_id,
    detect_layout,
)
from interop.cases.expected_failures import ExpectedFailure, expected_failure

pytest_plugins = ["pytester"]

OP = "interop.zoo.operators.conv2d:Conv2D"
SPECS = "interop.zoo.operators.conv2d:specs_to_kwargs"


def _specs(specs):
    from interop.zoo.operators.conv2d import specs_to_kwargs

    return specs_to_kwargs(specs)


def _conv_doc(tests):
    return {
        "base_configuration": {
            "attributes": {"kernel_dims": [3, 3], "stride_dims": [1, 1], "padding_dims": [0, 0, 0, 0]},
            "input_specs": [{"name": "data_input", "shape": [2, 3, 8, 8]},
                            {"name": "weight", "shape": [4, 3, 3, 3]},
                            {"name": "bias", "shape": [4]}],
        },
        "test_configurations": tests,
    }


def _write(tmp_path, name, doc):
    path = tmp_path / f"{name}.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def _conv_cfg(path, **kw):
    kw.setdefault("aidge_types", ("Conv2D|PaddedConv2D",))
    return OperatorConfig("Conv2D", OP, json_path=path, specs_to_kwargs=_specs, **kw)


# -- layouts -------------------------------------------------------------------------------
def test_layout_detection():
    assert detect_layout(_conv_doc({"ok": {"attr": {"a": {}}}, "error": {}})) == "benchmark_ok"
    assert detect_layout(_conv_doc({"attributes": {"a": {}}, "shape": {"b": {}}})) == "benchmark_flat"
    assert detect_layout({"rank_2": {"input_specs": [{"name": "x", "shape": [4, 16]}]}}) == "simple"


def test_unknown_layout_names_file_and_key(tmp_path):
    path = _write(tmp_path, "Bad", {"cases": [1, 2]})
    with pytest.raises(ConfigError, match=r"Bad\.json: key 'cases': unknown layout") as info:
        build_cases(_conv_cfg(path))
    assert info.value.file == str(path) and info.value.key == "cases"


def test_a_base_configuration_alone_holds_no_case(tmp_path):
    path = _write(tmp_path, "Half", {"base_configuration": {"attributes": {}}})
    with pytest.raises(ConfigError, match="a benchmark layout needs test_configurations"):
        build_cases(_conv_cfg(path))


def test_test_configurations_without_a_base_is_an_empty_base(tmp_path):
    # Aidge's own files (relu.json) have no base_configuration (issue 27)
    path = _write(tmp_path, "Conv2D", {"operation": "Conv2DOp", "test_configurations": {"shape": {"one": {
        "attributes": {"kernel_dims": [3, 3]},
        "input_specs": [{"name": "data_input", "shape": [1, 3, 8, 8]}, {"name": "weight", "shape": [4, 3, 3, 3]},
                        {"name": "bias", "shape": [4]}]}}}})
    assert [c.id for c in build_cases(dataclasses.replace(_conv_cfg(path), forward_only_cases=True))] == \
        ["Conv2D_shape_one"]


def test_benchmark_ok_reads_ok_cases_and_ignores_error_cases(tmp_path):
    path = _write(tmp_path, "Conv2D", _conv_doc({
        "ok": {"attr": {"kernel_square": {}, "stride_2": {"attributes": {"stride_dims": [2, 2]}}}},
        "error": {"nonsense": {"attributes": {"not_an_attribute": 1}}},
    }))
    cases = build_cases(_conv_cfg(path))
    assert [c.id for c in cases] == ["Conv2D_attr_kernel_square", "Conv2D_attr_stride_2"]
    assert cases[1].torch_kwargs["stride"] == (2, 2)
    assert cases[0].input_size == (2, 3, 8, 8)
    assert all(c.test_backward for c in cases)


def test_benchmark_flat_paths_and_nested_groups(tmp_path):
    path = _write(tmp_path, "Conv2D", _conv_doc({
        "attributes": {"kernel square": {}, "padding": {"one": {"attributes": {"padding_dims": [1, 1, 1, 1]}}}},
    }))
    cases = build_cases(_conv_cfg(path))
    assert [c.id for c in cases] == ["Conv2D_attributes_kernel_square", "Conv2D_attributes_padding_one"]
    assert [c.path for c in cases] == ["attributes.kernel square", "attributes.padding.one"]
    assert cases[1].torch_kwargs["padding"] == (1, 1)


def test_simple_layout_needs_a_data_input(tmp_path):
    path = _write(tmp_path, "ReLU", {"rank_4": {"input_specs": [{"name": "data_input", "shape": [2, 3, 4, 4]}]},
                                     "default": {"description": "no input spec"}})
    cfg = OperatorConfig("ReLU", "interop.zoo.operators.relu:ReLU", json_path=path, aidge_types=("ReLU",))
    with pytest.raises(ConfigError, match=r"ReLU\.json: case 'default': key 'input_specs': no data input"):
        build_cases(cfg)


def test_manual_cases_get_ids_and_operator():
    cfg = OperatorConfig("Where", "interop.zoo.operators.where:Where", aidge_types=("Where",), manual_cases=[
        OperatorCase("same shape", "interop.zoo.operators.where:Where", {"threshold": 0.0}, [(2, 3), (2, 3)]),
    ])
    (case,) = build_cases(cfg)
    assert case.id == "Where_same_shape" and case.operator == "Where" and case.aidge_types == ("Where",)
    assert case.input_sizes == [(2, 3), (2, 3)]


# -- merging -------------------------------------------------------------------------------
def test_attributes_merge_and_null_drops(tmp_path):
    path = _write(tmp_path, "Clip", {
        "base_configuration": {"attributes": {"min": -0.5, "max": 0.5},
                               "input_specs": [{"name": "data_input", "shape": [4, 16]}]},
        "test_configurations": {"attributes": {"max_only": {"attributes": {"min": None, "max": 0.3}},
                                               "base": {}}},
    })
    cfg = OperatorConfig("Clip", "interop.zoo.operators.clip:Clip", json_path=path, aidge_types=("Clip",))
    max_only, base = build_cases(cfg)
    assert dict(max_only.torch_kwargs) == {"max": 0.3}
    assert dict(base.torch_kwargs) == {"min": -0.5, "max": 0.5}


def test_input_specs_merge_by_name_in_base_order_and_null_shape_drops_the_bias(tmp_path):
    path = _write(tmp_path, "Conv2D", _conv_doc({"attributes": {
        "no_bias": {"input_specs": [{"name": "bias", "shape": None}]},
        "wider": {"input_specs": [{"name": "weight", "shape": [8, 3, 3, 3]}, {"name": "bias", "shape": [8]},
                                  {"name": "data_input", "shape": [1, 3, 6, 6]}]},
    }}))
    no_bias, wider = build_cases(_conv_cfg(path))
    assert no_bias.torch_kwargs["bias"] is False and no_bias.torch_kwargs["out_channels"] == 4
    assert wider.torch_kwargs["bias"] is True and wider.torch_kwargs["out_channels"] == 8
    assert wider.input_size == (1, 3, 6, 6)  # data_input keeps its (first) place


def test_several_data_inputs_and_input_ranges(tmp_path):
    path = _write(tmp_path, "Div", {
        "base_configuration": {"attributes": {}, "input_specs": [
            {"name": "data_input", "shape": [2, 3]}, {"name": "other_input", "shape": [3], "range": [0.5, 2.0]}]},
        "test_configurations": {"broadcast": {"row": {}}},
    })
    cfg = OperatorConfig("Div", "interop.zoo.operators.div:Div", json_path=path, aidge_types=("Div",))
    (case,) = build_cases(cfg)
    assert case.input_size == [(2, 3), (3,)]
    assert case.input_ranges == (None, (0.5, 2.0))


# -- attributes --------------------------------------------------------------------------------
def test_attribute_mapping_table():
    assert SUPPORTED_ATTRS["kernel_dims"][0] == "kernel_size"
    assert SUPPORTED_ATTRS["keep_dims"][0] == "keepdim"
    assert SUPPORTED_ATTRS["epsilon"][0] == "eps"
    assert SUPPORTED_ATTRS["momentum"][1](0.9) == pytest.approx(0.1)  # ONNX momentum -> torch momentum


def test_unknown_attribute_names_file_case_and_key(tmp_path):
    path = _write(tmp_path, "Conv2D", _conv_doc({"attributes": {"odd": {"attributes": {"frobnicate": 2}}}}))
    with pytest.raises(ConfigError) as info:
        build_cases(_conv_cfg(path))
    msg = str(info.value)
    assert "Conv2D.json" in msg and "case 'attributes.odd'" in msg and "key 'attributes.frobnicate'" in msg
    assert "neither supported" in msg


def test_ignored_attributes_are_dropped(tmp_path):
    path = _write(tmp_path, "Conv2D", _conv_doc({"attributes": {"odd": {"attributes": {"frobnicate": 2}}}}))
    (case,) = build_cases(_conv_cfg(path, ignored_attrs=frozenset({"frobnicate"})))
    assert "frobnicate" not in case.torch_kwargs


def test_bad_attribute_value_names_the_key(tmp_path):
    path = _write(tmp_path, "Conv2D", _conv_doc({"attributes": {
        "asym": {"attributes": {"padding_dims": [1, 0, 2, 0]}}}}))
    with pytest.raises(ConfigError, match=r"case 'attributes.asym': key 'attributes.padding_dims': torch pads "
                                          r"symmetrically"):
        build_cases(_conv_cfg(path))


def test_a_shape_the_operator_cannot_take_names_input_specs(tmp_path):
    path = _write(tmp_path, "Conv2D", _conv_doc({"attributes": {
        "channels": {"input_specs": [{"name": "weight", "shape": [4, 5, 3, 3]}]},
        "too_small": {"input_specs": [{"name": "data_input", "shape": [2, 3, 2, 2]}]},
    }}))
    with pytest.raises(ConfigError, match=r"case 'attributes.channels': key 'input_specs': the operator cannot "
                                          r"take these input specs"):
        build_cases(_conv_cfg(path))
    path = _write(tmp_path, "Conv2D", _conv_doc({"attributes": {
        "too_small": {"input_specs": [{"name": "data_input", "shape": [2, 3, 2, 2]}]}}}))
    with pytest.raises(ConfigError, match=r"case 'attributes.too_small': key 'input_specs': the operator cannot "
                                          r"take input shape"):
        build_cases(_conv_cfg(path))


def test_bad_spec_keys_and_shapes(tmp_path):
    path = _write(tmp_path, "Conv2D", _conv_doc({"attributes": {
        "bad": {"input_specs": [{"name": "data_input", "shape": [2, -3, 8, 8]}]}}}))
    with pytest.raises(ConfigError, match=r"key 'input_specs.data_input.shape'"):
        build_cases(_conv_cfg(path))
    path = _write(tmp_path, "Conv2D", _conv_doc({"attributes": {
        "bad": {"input_specs": [{"name": "data_input", "shape": [2, 3, 8, 8], "layout": "nchw"}]}}}))
    with pytest.raises(ConfigError, match=r"unknown input spec key"):
        build_cases(_conv_cfg(path))


def test_malformed_json_names_the_file_and_line(tmp_path):
    path = _write(tmp_path, "Broken", '{"base_configuration": {\n  "attributes": {,}\n}')
    with pytest.raises(ConfigError, match=r"Broken\.json: malformed JSON: .* at line 2"):
        build_cases(_conv_cfg(path))


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the configuration"):
        build_cases(_conv_cfg(tmp_path / "Nope.json"))


def test_duplicate_ids(tmp_path):
    path = _write(tmp_path, "Conv2D", _conv_doc({"attributes": {"a b": {}, "a.b": {}}}))
    with pytest.raises(ConfigError, match="two cases give the test id 'Conv2D_attributes_a_b'"):
        build_cases(_conv_cfg(path))


def test_case_ids():
    assert case_id("Conv2D", "attributes.kernel square") == "Conv2D_attributes_kernel_square"
    assert case_id("ReduceMean", "axes.1_dim") == "ReduceMean_axes_1_dim"


# -- forward-only shape cases --------------------------------------------------------------------
def test_forward_only_shape_cases_are_dropped_unless_asked(tmp_path):
    doc = _conv_doc({"ok": {"attr": {"k3": {}},
                            "shape": {"big": {"input_specs": [{"name": "data_input", "shape": [4, 3, 16, 16]}]}}}})
    path = _write(tmp_path, "Conv2D", doc)
    assert [c.id for c in build_cases(_conv_cfg(path))] == ["Conv2D_attr_k3"]
    cases = build_cases(_conv_cfg(path, forward_only_cases=True))
    assert [(c.id, c.test_backward) for c in cases] == [("Conv2D_attr_k3", True), ("Conv2D_shape_big", False)]


def test_a_leaf_can_be_forward_only(tmp_path):
    path = _write(tmp_path, "Conv2D", _conv_doc({"inference": {"k3": {"test_backward": False}}}))
    (case,) = build_cases(_conv_cfg(path))
    assert case.test_backward is False


# -- expected failures: the one lookup ------------------------------------------------------------
_BWD = ExpectedFailure("Op", "backward", "backward_not_implemented", "Backward not yet implemented", ("Op:*",))
_FWD = ExpectedFailure("Op", "forward", "outputs_differ", "Tensors are not close at output", ("Op:b",))
_IMP = ExpectedFailure("Op", "import", "unsupported_operator", "GenericOperator", ("Op:attr_c",))


def _case(name, train=True, **kw):
    return OperatorCase(f"Op_{name}", "x:Y", {}, (1,), test_backward=train, operator="Op", path=name, **kw)


def test_the_earliest_phase_decides():
    table = (_BWD, _FWD, _IMP)
    # a case that trains: the forward entry wins over the backward one (the run stops first there)
    assert expected_failure(_case("b"), table=table) is _FWD
    assert expected_failure(_case("a"), table=table) is _BWD
    # a forward-only case never reaches backward: its forward stays verified
    assert expected_failure(_case("a", train=False), table=table) is None
    assert expected_failure(_case("b", train=False), table=table) is _FWD
    # asv times phases up to the one it benchmarks
    assert expected_failure(_case("a"), phases=("export", "import", "compile", "forward"), table=table) is None


def test_patterns_match_the_label_or_its_tail_not_the_layout():
    entry = ExpectedFailure("Op", "import", "unsupported_operator", "GenericOperator", ("Op:no_bias",))
    for path in ("no_bias", "attr.no_bias", "attributes.batch_8_no_bias"):
        assert expected_failure(_case(path), table=(entry,)) is entry, path
    for path in ("no_bias_2", "attr.nono_bias"):
        assert expected_failure(_case(path), table=(entry,)) is None, path
    # another operator, another kind, another backend: not covered
    assert expected_failure(dataclasses.replace(_case("no_bias"), operator="Other"), table=(entry,)) is None
    assert expected_failure(dataclasses.replace(_case("no_bias"), kind="model"), table=(entry,)) is None
    cpu_only = dataclasses.replace(entry, backend="cpu")
    assert expected_failure(_case("no_bias", backend="cuda"), table=(cpu_only,)) is None
    assert expected_failure(_case("no_bias", backend="cpu"), table=(cpu_only,)) is cpu_only


def test_entries_are_validated():
    with pytest.raises(ValueError, match="unknown category"):
        ExpectedFailure("Op", "forward", "wrong", "e", ("Op:*",))
    with pytest.raises(ValueError, match="unknown phase"):
        ExpectedFailure("Op", "later", "outputs_differ", "e", ("Op:*",))
    with pytest.raises(ValueError, match="quote"):
        ExpectedFailure("Op", "forward", "outputs_differ", " ", ("Op:*",))
    with pytest.raises(ValueError, match="<Operator>:<label pattern>"):
        ExpectedFailure("Op", "forward", "outputs_differ", "e", "Op:*")


def test_operator_wide_skip_is_attached_to_every_case():
    cfg = OperatorConfig("Op", "x:Y", manual_cases=[_case("a")], skip_all="no torch equivalent")
    (case,) = build_cases(cfg)
    assert case.skip_reason == "no torch equivalent"


def test_build_cases_attaches_backend_and_tolerance_and_leaves_the_row_to_the_plugin():
    from interop.equivalence import Tolerance

    tol = Tolerance(1e-4, 1e-5, reason="measured: reordered sums")
    cfg = OperatorConfig("Abs", "interop.zoo.operators.abs:Abs", aidge_types=("Abs",), tolerance=tol,
                         manual_cases=[OperatorCase("Abs_x", "interop.zoo.operators.abs:Abs", {}, (2, 3))])
    (case,) = build_cases(cfg, backend="cuda")
    assert case.backend == "cuda" and case.tolerance is tol
    assert case.expected_failure is None  # the pytest plugin attaches the row, once, at collection (issue 46)
    assert expected_failure(case) is not None and expected_failure(case).operator == "Abs"
    with pytest.raises(TypeError, match="must be a Tolerance"):
        OperatorConfig("Op", "x:Y", manual_cases=[], tolerance=(1e-3, 1e-4))


# -- one bad file does not stop the others ---------------------------------------------------------
def test_a_bad_config_is_one_failing_item_and_the_others_run(pytester, tmp_path):
    bad = _write(tmp_path, "Bad", "{not json")
    good = _write(tmp_path, "ReLU", {"rank_2": {"input_specs": [{"name": "data_input", "shape": [4, 16]}]},
                                     "rank_3": {"input_specs": [{"name": "data_input", "shape": [2, 3, 4]}]}})
    pytester.makepyfile(test_suite=textwrap.dedent(f"""
        from interop.cases import OperatorConfig
        from interop.cases.suite import make_operator_fixture

        bad_case = make_operator_fixture(OperatorConfig("Bad", "interop.zoo.operators.relu:ReLU",
                                                        json_path={str(bad)!r}, aidge_types=("ReLU",)))
        relu_case = make_operator_fixture(OperatorConfig("ReLU", "interop.zoo.operators.relu:ReLU",
                                                         json_path={str(good)!r}, aidge_types=("ReLU",)))

        def test_Bad_interop(bad_case):
            pass

        def test_ReLU_interop(relu_case):
            assert relu_case["name"].startswith("ReLU_") and relu_case["test_backward"]
    """))
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*ERROR*test_Bad_interop[[]Bad_config_error[]]*",
                                 "E * interop.cases.config.ConfigError: *Bad.json: malformed JSON*"])


# -- the catalog ------------------------------------------------------------------------------------
def test_catalog_import_is_cheap_and_side_effect_free():
    code = "import sys, interop.cases.catalog as c; print(len(c.OPERATOR_CONFIGS), 'torch' in sys.modules, " \
           "'aidge_core' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert int(out[0]) >= 40 and out[1:] == ["False", "False"]


def test_catalog_size_layouts_and_ids():
    from interop.cases import load_config_file
    from interop.cases.catalog import OPERATOR_CONFIGS, operator_cases

    cases = operator_cases()
    assert len(OPERATOR_CONFIGS) >= 40 and len(cases) >= 400
    assert len({c.id for c in cases}) == len(cases)
    assert all(c.id.startswith(c.operator + "_") and c.aidge_types for c in cases)
    layouts = {"manual" if cfg.manual_cases is not None else detect_layout(load_config_file(cfg.json_path))
               for cfg in OPERATOR_CONFIGS.values()}
    assert layouts == {"benchmark_ok", "benchmark_flat", "simple", "manual"}


@functools.lru_cache(maxsize=1)
def _all_cases():
    """Every case of the suites, the OpInfo ones at the cap their rows were triaged at (two
    samples per entry; none when torch's OpInfo database cannot be imported)."""
    from interop.cases import catalog, opinfo

    try:
        sampled = opinfo.opinfo_cases(cap=OPINFO_TRIAGED_SAMPLES)
    except opinfo.OpInfoUnavailable:
        sampled = []
    from interop.cases.architectures import architecture_cases
    from interop.cases.moduleinfo import ModuleInfoUnavailable, moduleinfo_cases

    try:
        modules = moduleinfo_cases(cap=1)  # the default run's, which its rows were triaged on
    except ModuleInfoUnavailable:
        modules = []
    return (catalog.operator_cases() + catalog.model_cases() + catalog.contract_cases()
            + catalog.property_cases() + _aidge_config_cases() + sampled + modules + architecture_cases()
            # the export's own entries (backend export_cpp: operator and model suites)
            + catalog.operator_cases(backend="export_cpp") + catalog.model_cases(backend="export_cpp"))


#: samples per OpInfo entry that interop/cases/_opinfo_failures.py was triaged on
OPINFO_TRIAGED_SAMPLES = 2


def _aidge_config_cases():
    """The cases of aidge-benchmark's configurations (none without the package)."""
    from interop.cases.aidge_configs import benchmark_cases
    from interop.cases.config import ConfigError

    try:
        return benchmark_cases()
    except ConfigError:
        return []


def test_every_table_entry_decides_a_case(monkeypatch):
    """An entry that decides no case of the suite (a renamed case, a typo, an entry behind
    an earlier-phase one for every case it covers) is dead data. Each route to ONNX
    (``--exporter``) reads the rows that hold for it: an entry is checked on its routes."""
    from interop.cases.expected_failures import EXPECTED_FAILURES, OPINFO_SHARD_ENTRIES, expected_failure
    from interop.exporters import EXPORTER_CHOICES, EXPORTER_ENV

    cases = _all_cases()
    kinds = {c.kind for c in cases}
    # the full OpInfo run's shard rows decide cases this run does not collect: checked below
    table = [e for e in EXPECTED_FAILURES if id(e) not in OPINFO_SHARD_ENTRIES and e.kind in kinds]
    covering, decided = set(), set()
    for route in EXPORTER_CHOICES:
        monkeypatch.setenv(EXPORTER_ENV, route)
        covering |= {id(e) for e in table if any(e.covers(c.kind, c.operator, c.label, e.backend or "cpu")
                                                 for c in cases)}
        decided |= {id(expected_failure(c)) for c in cases}
    dead = [(e.operator, e.cases) for e in table if id(e) not in covering]
    assert not dead, f"entries covering no case: {dead}"
    unused = [(e.operator, e.cases) for e in table if id(e) not in decided]
    assert not unused, f"entries deciding no case (always behind an earlier-phase entry): {unused}"


def test_the_full_runs_shard_rows_name_opinfo_cases():
    """The rows of interop/cases/_opinfo_shard_failures.py name OpInfo entries of the source and
    sample labels, each case once per phase. (Whether each names a case of shard 1/15 is checked
    by running that shard, `INTEROP_OPINFO_SHARD=1/15 nox -s opinfo`: the shard is a CRC-32 of the
    case id, and a label has lost the id's dots.)"""
    from interop.cases import opinfo
    from interop.cases.expected_failures import EXPECTED_FAILURES, OPINFO_SHARD_ENTRIES

    rows = [e for e in EXPECTED_FAILURES if id(e) in OPINFO_SHARD_ENTRIES]
    assert rows
    wrong, seen = [], set()
    for entry in rows:
        assert entry.kind == "opinfo" and entry.backend == "cpu" and entry.attribution
        for key in entry.cases:
            name, label = key.split(":")
            if name not in opinfo.OPINFO_OPS or not re.fullmatch(r"s(?:\d+|\*)(?:_[^.\s]*)?", label):
                wrong.append(key)
            if (key, entry.phase) in seen:
                wrong.append(f"{key} twice in phase {entry.phase}")
            seen.add((key, entry.phase))
    assert not wrong, wrong


def test_no_case_is_covered_twice_in_one_phase():
    from interop.cases.expected_failures import EXPECTED_FAILURES

    for case in _all_cases():
        phases = [e.phase for e in EXPECTED_FAILURES if e.covers(case.kind, case.operator, case.label, case.backend)]
        assert len(phases) == len(set(phases)), f"{case.id}: two entries for one phase {phases}"


def _as_the_suite_reports(entry) -> tuple[str | None, str | None]:
    """(runtime message, assertion message) of a failure quoting ``entry``, as the suites
    raise it: an AidgeError for Aidge's own errors, an EquivalenceError for a numerical or
    shape mismatch (its header names what differs), a plain comparator assertion for the
    property cases."""
    value_categories = {"outputs_differ", "gradients_differ", "training_diverges", "output_shape_differs"}
    if entry.category == "crash":  # an AidgeCrash's own message
        return f"{entry.error.strip()} killed by SIGSEGV during {entry.phase}", None
    if entry.category == "accepts_invalid_input":  # AcceptsInvalidInputError, an assertion
        return None, f"{entry.error}: aidge.x_error_y is a negative case of Aidge's own configurations"
    if entry.category == "unsupported_operator" and "GenericOperator" not in entry.error:
        # an OpInfo row quotes one node of UnsupportedOperatorError's list, "(ONNX op X)"
        return (f"Aidge {entry.phase} failed (operator {entry.operator}): Aidge has no native operator for 1 "
                f"node(s): 'X' {entry.error}; they were imported as GenericOperator and cannot run"), None
    if entry.category not in value_categories:
        return f"Aidge {entry.phase} failed (operator {entry.operator}): {entry.error}", None
    if entry.kind == "property":
        return None, f"{entry.operator} on values: Aidge (actual) vs torch (expected)\n\nTensors are not close!\n" \
                     f"{entry.error}"
    what = {"forward": "output", "backward": "input grad [0]", "step": "weights after the SGD step: w"}[entry.phase]
    if entry.error.startswith("["):  # the suite's own header, quoted whole
        return None, entry.error
    if "differs between model1" in entry.error:
        return None, f"[X_case, epoch 0] {entry.error} [seed 1]"
    return None, f"[X_case, epoch 0] {what} differs between model1 (M) and model2 (AidgeModule) [seed 1]\n{entry.error}"


def test_every_entry_is_in_the_category_the_categoriser_gives_its_quote():
    """One place decides a category: the categoriser. An entry's category must be what it
    gives for the entry's own quoted error (at runtime the guard checks the real failure)."""
    from interop.cases.expected_failures import EXPECTED_FAILURES
    from interop.reporting import categorize

    wrong = []
    for entry in [dataclasses.replace(e, error=q) for e in EXPECTED_FAILURES for q in e.quotes]:
        got = categorize(*_as_the_suite_reports(entry))[0]
        # a memory-unsafe entry's quote may be one of the other outcomes the heap gives the defect
        if got != entry.category and any(
                categorize(*_as_the_suite_reports(dataclasses.replace(entry, category=other)))[0] == other
                for other in entry.other_categories):
            continue
        if got != entry.category:
            wrong.append(f"{entry.operator} {entry.cases}: entry says {entry.category}, categoriser says {got}")
    assert not wrong, "\n".join(wrong)


def test_the_guard_refuses_a_quoted_failure_in_another_category():
    from interop.cases.expected_failures import (ExpectedAidgeFailure, ExpectedFailureMismatch,
                                                 expected_failure_guard)
    from interop.errors import AidgeError

    entry = ExpectedFailure("Op", "forward", "aidge_error", "Step (-1) is negative", ("Op:*",))
    with pytest.raises(ExpectedAidgeFailure):
        with expected_failure_guard(entry):
            raise AidgeError("forward", "Slice: Step (-1) is negative, we must have End (")
    with pytest.raises(ExpectedFailureMismatch, match="phase 'compile'"):
        with expected_failure_guard(entry):
            raise AidgeError("compile", "Slice: Step (-1) is negative, we must have End (")
    with pytest.raises(ExpectedFailureMismatch, match="category 'backward_not_implemented'"):
        with expected_failure_guard(entry):
            raise AidgeError("forward", "Backward not yet implemented for X; Step (-1) is negative")
    with pytest.raises(AidgeError):  # not the quoted error: a real failure, unchanged
        with expected_failure_guard(entry):
            raise AidgeError("forward", "something else")


def test_model_contract_and_property_cases():
    from interop.cases import catalog

    models = catalog.model_cases()
    assert [c.id for c in models[:2]] == ["Perceptron_eval", "Perceptron_train"]
    assert all(c.kind == "model" and c.training == c.id.endswith("_train") for c in models)
    assert not any(c.test_backward for c in models if not c.training)
    contract = catalog.contract_cases()
    assert len(contract) == len(catalog.model_specs()) * 2 * len(__import__("interop.diagnostics",
                                                                            fromlist=["CHECKS"]).CHECKS)
    props = catalog.property_cases()
    assert {c.id for c in props} >= {"hypothesis_ReLU_nonfinite", "hypothesis_Log_finite"}
    assert expected_failure(next(c for c in props if c.id == "hypothesis_ReLU_nonfinite")) is not None


def test_every_catalog_operator_is_collected():
    """The catalog generates the operator tests: an operator whose entry yields no
    collected item (no test function, an empty config...) fails here."""
    from interop.cases.catalog import OPERATOR_CONFIGS

    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "-p", "no:xdist", "tests/test_operators.py"], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2], timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    ids = [line for line in out.stdout.splitlines() if "::" in line]
    missing = [name for name in OPERATOR_CONFIGS if not any(f"::test_{name}_interop[" in i for i in ids)]
    assert not missing, f"catalog operators with no collected test: {missing}"


# --- bad configurations are contained and named (issue 12) -------------------------------------------------------
def _relu_cfg(path):
    return OperatorConfig("ReLU", "interop.zoo.operators.relu:ReLU", json_path=path, aidge_types=("ReLU",))


def test_non_utf8_and_deeply_nested_files_name_the_file(tmp_path):
    # before: a raw UnicodeDecodeError / RecursionError without the file name
    binary = tmp_path / "Binary.json"
    binary.write_bytes(b'{"rank_1": {"input_specs": [{"name": "x", "shape": [4]}]}, "\xff": 1}')
    with pytest.raises(ConfigError, match=r"Binary\.json.*not UTF-8"):
        build_cases(_relu_cfg(binary))
    deep = tmp_path / "Deep.json"
    deep.write_text('{"a": ' * 100_000 + "1" + "}" * 100_000)
    with pytest.raises(ConfigError, match=r"Deep\.json.*nested too deeply"):
        build_cases(_relu_cfg(deep))


def test_a_duplicate_key_is_an_error_not_a_lost_case(tmp_path):
    path = tmp_path / "ReLU.json"
    path.write_text('{"rank_1": {"input_specs": [{"name": "x", "shape": [4]}]},\n'
                    ' "rank_1": {"input_specs": [{"name": "x", "shape": [2, 4]}]}}')
    with pytest.raises(ConfigError, match=r"ReLU\.json: key 'rank_1': duplicate key"):
        build_cases(_relu_cfg(path))


@pytest.mark.parametrize("spec, key, message", [
    ({"name": "x", "shape": [2, 4], "data": 0}, "input_specs.x.data", "'data' literals are not read"),
    ({"name": "x", "shape": [2, 0, 4]}, "input_specs.x.shape", "zero-size dimension"),
    ({"name": "x", "shape": [2, 4], "colour": "red"}, "input_specs", "unknown input spec key"),
], ids=["data_literal", "zero_size", "unknown_key"])
def test_spec_keys_the_suite_cannot_honour_are_errors(tmp_path, spec, key, message):
    # before: 'data' was accepted and ignored; a zero-size dim reached the report as a new Aidge bug
    path = _write(tmp_path, "ReLU", {"case": {"input_specs": [spec]}})
    with pytest.raises(ConfigError, match=message) as info:
        build_cases(_relu_cfg(path))
    assert info.value.file.endswith("ReLU.json") and info.value.case == "case" and info.value.key.startswith(key)


def test_validation_runs_no_forward_on_real_data(tmp_path, monkeypatch):
    # before: the forward on zeros of a [1, 3, 8000, 8000] case took 22 s and 6 GB at collection.
    # Every input the validation gives the module is on torch's meta device (no data, nothing
    # computed): said by the module itself, not by a clock (a timed assertion fails on a loaded
    # machine, issue 32)
    from interop.zoo.operators.relu import ReLU

    devices = []
    real_forward = ReLU.forward

    def forward(self, x):
        devices.append(x.device.type)
        return real_forward(self, x)

    monkeypatch.setattr(ReLU, "forward", forward)
    path = _write(tmp_path, "ReLU", {"huge": {"input_specs": [{"name": "x", "shape": [1, 3, 8000, 8000]}]}})
    (case,) = build_cases(_relu_cfg(path), validate=True)
    assert devices and set(devices) == {"meta"}, devices
    assert case.input_sizes == [(1, 3, 8000, 8000)]
    bad = _write(tmp_path, "Conv2D", _conv_doc({"ok": {"shape": {"wrong_channels": {
        "input_specs": [{"name": "data_input", "shape": [1, 5, 8, 8]}]}}}}))
    with pytest.raises(ConfigError):
        build_cases(_conv_cfg(bad), validate=True)  # still caught, on the meta device


def test_one_bad_file_costs_only_its_operator_in_the_benchmarks(monkeypatch):
    # before: one malformed file made `import benchmarks.operators` fail: ~500 benchmarks lost
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from benchmarks import harness
    from interop.cases import catalog

    real = catalog.operator_cases

    def one_bad(names=None, **kw):
        if names == ["ReLU"]:
            raise ConfigError("malformed JSON: Expecting value at line 1 column 1", file="configs/ReLU.json")
        return real(names, **kw)

    monkeypatch.setattr(catalog, "operator_cases", one_bad)
    cases = harness._operator_cases()
    ids = [c.id for c in cases]
    assert "ReLU_config_error" in ids
    assert not any(i.startswith("ReLU_rank") for i in ids)
    assert len(ids) > 400  # every other operator is still benchmarked
    (broken,) = [c for c in cases if c.id == "ReLU_config_error"]
    with pytest.raises(ConfigError, match=r"configs/ReLU\.json"):
        broken.build_model()


def test_opinfo_dtypes_per_entry_and_their_ids(monkeypatch):
    from interop.cases import opinfo

    try:
        cases = opinfo.opinfo_cases(["abs"], cap=1)
    except opinfo.OpInfoUnavailable:
        pytest.skip("torch's OpInfo database does not import here")
    by_dtype = {c.params["dtype"]: c for c in cases}
    assert set(by_dtype) == {"float32", "float64", "float16", "int64"}  # abs is a catalog entry
    assert by_dtype["float32"].id == "opinfo_abs_s0_20x20"  # float32 ids unchanged
    assert by_dtype["float64"].id == "opinfo_abs_s0_20x20_float64"
    assert by_dtype["float64"].test_backward and not by_dtype["int64"].test_backward
    assert opinfo.entry_dtypes("cdist") == ("float32",)  # not a catalog entry: float32 only by default
    monkeypatch.setenv(opinfo.DTYPES_ENV, "all")
    assert opinfo.entry_dtypes("cdist") == ("float32", *opinfo.EXTRA_DTYPES)
    monkeypatch.setenv(opinfo.DTYPES_ENV, "float32")
    assert [c.params["dtype"] for c in opinfo.opinfo_cases(["abs"], cap=1)] == ["float32"]
    monkeypatch.setenv(opinfo.DTYPES_ENV, "float32,bfloat16")
    with pytest.raises(ValueError, match="INTEROP_OPINFO_DTYPES.*bfloat16"):
        opinfo.entry_dtypes("abs")


def test_opinfo_shards_partition_the_cases(monkeypatch):
    from interop.cases import opinfo

    ids = [f"opinfo_abs_s{i}_20x20" for i in range(200)]
    shards = [[i for i in ids if opinfo.in_shard(i, (k, 7))] for k in range(1, 8)]
    assert sorted(i for s in shards for i in s) == sorted(ids)  # disjoint, complete
    assert all(shards)
    assert all(opinfo.in_shard(i, None) for i in ids)
    monkeypatch.setenv(opinfo.SHARD_ENV, "3/20")
    assert opinfo.shard() == (3, 20)
    for bad in ("0/4", "5/4", "1of4"):
        monkeypatch.setenv(opinfo.SHARD_ENV, bad)
        with pytest.raises(ValueError, match="INTEROP_OPINFO_SHARD"):
            opinfo.shard()
    monkeypatch.setenv(opinfo.SHARD_ENV, "1/2")
    try:
        kept = {c.id for c in opinfo.opinfo_cases(["abs"], cap=None)}
        monkeypatch.setenv(opinfo.SHARD_ENV, "2/2")
        other = {c.id for c in opinfo.opinfo_cases(["abs"], cap=None)}
    except opinfo.OpInfoUnavailable:
        pytest.skip("torch's OpInfo database does not import here")
    monkeypatch.delenv(opinfo.SHARD_ENV)
    assert kept | other == {c.id for c in opinfo.opinfo_cases(["abs"], cap=None)} and not kept & other
