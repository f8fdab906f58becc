"""The operator configurations as the documentation describes them: the form
``specs_to_kwargs`` gets (the documented list of merged specs; by name only for a function
that declares a ``dict``/``Mapping`` parameter, docs/differences.md) and a
``test_configurations`` entry that is itself a complete case."""
from __future__ import annotations

import json
import typing

import pytest

from interop.cases import ConfigError, OperatorConfig, build_cases

RELU = "torch.nn:ReLU"


def _write(tmp_path, doc: dict, name: str = "relu.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


# --------------------------------------------------------------------------------------
# test_configurations: flat named cases, no base_configuration
# --------------------------------------------------------------------------------------
_FLAT = {"small": {"attributes": {}, "input_specs": [{"name": "data_input", "shape": [2, 3]}]},
         "big": {"input_specs": [{"name": "data_input", "shape": [4, 8]}], "test_backward": False}}


@pytest.mark.parametrize("aidge_format", [True, False], ids=["aidge_format", "no_format"])
def test_flat_named_cases_under_test_configurations_are_cases(tmp_path, aidge_format):
    # was: "case 'small': neither a case (keys among [...]) nor a group of cases"
    doc = {"test_configurations": _FLAT}
    if aidge_format:
        doc = {"operation": "ReLUOp", "format": {"name": "Aidge"}, **doc}
    cases = build_cases(OperatorConfig("ReLU", RELU, json_path=_write(tmp_path, doc)))
    assert [(c.id, c.input_size, c.test_backward) for c in cases] == [("ReLU_small", (2, 3), True),
                                                                       ("ReLU_big", (4, 8), False)]


def test_a_complete_case_beside_a_base_overrides_it(tmp_path):
    doc = {"base_configuration": {"input_specs": [{"name": "data_input", "shape": [1, 2]}]},
           "test_configurations": {"own": {"input_specs": [{"name": "data_input", "shape": [5, 6]}]},
                                   "group": {"inherit": {"attributes": {}}}}}
    cases = build_cases(OperatorConfig("ReLU", RELU, json_path=_write(tmp_path, doc)))
    assert [(c.id, c.input_size) for c in cases] == [("ReLU_own", (5, 6)), ("ReLU_group_inherit", (1, 2))]


def test_an_entry_whose_values_are_all_objects_stays_a_group(tmp_path):
    # a group may be labelled like a case key: "attributes" here holds the case "slope"
    doc = {"base_configuration": {"input_specs": [{"name": "data_input", "shape": [3, 4]}]},
           "test_configurations": {"attributes": {"slope": {"attributes": {"negative_slope": 0.2}}}}}
    cases = build_cases(OperatorConfig("LeakyReLU", "torch.nn:LeakyReLU", json_path=_write(tmp_path, doc)))
    assert [(c.id, c.torch_kwargs) for c in cases] == [("LeakyReLU_attributes_slope", {"negative_slope": 0.2})]


def test_a_flat_case_with_a_bad_value_is_named(tmp_path):
    doc = {"test_configurations": {"small": {"input_specs": [{"name": "data_input", "shape": [2, -3]}]}}}
    path = _write(tmp_path, doc)
    with pytest.raises(ConfigError, match=r"relu\.json: case 'small': key 'input_specs\.data_input\.shape'"):
        build_cases(OperatorConfig("ReLU", RELU, json_path=path))


# --------------------------------------------------------------------------------------
# specs_to_kwargs: the documented list; by name for a dict/Mapping parameter
# --------------------------------------------------------------------------------------
_SPECS_DOC = {"one": {"input_specs": [{"name": "data_input", "shape": [2, 7]}, {"name": "weight", "shape": [7]}]}}


def _derive(tmp_path, extractor) -> dict:
    cfg = OperatorConfig("ReLU", RELU, json_path=_write(tmp_path, _SPECS_DOC), specs_to_kwargs=extractor)
    return build_cases(cfg)[0].torch_kwargs


def _as_list(specs: list[dict]) -> dict:
    assert isinstance(specs, list)
    return {"inplace": specs[1]["shape"] == [7] and specs[0]["name"] == "data_input"}


def _as_dict(specs: dict) -> dict:
    assert isinstance(specs, dict)
    return {"inplace": specs["weight"]["shape"] == [7]}


def _as_mapping(specs: typing.Mapping[str, dict]) -> dict:
    assert isinstance(specs, dict)
    return {"inplace": "weight" in specs}


def _typed(fn, annotation):
    fn.__annotations__ = {"specs": annotation}  # a type object, not the text of this module's annotations
    return fn


@pytest.mark.parametrize("extractor", [
    _as_list, _as_dict, _as_mapping,
    _typed(lambda specs: {"inplace": isinstance(specs, dict)}, dict),
    _typed(lambda specs: {"inplace": isinstance(specs, dict)}, typing.Dict[str, dict]),
    _typed(lambda specs: {"inplace": isinstance(specs, list)}, list[dict]),
    lambda specs: {"inplace": isinstance(specs, list)},  # no annotation: the documented list
], ids=["list", "dict", "Mapping_text", "dict_type", "Dict_type", "list_type", "lambda"])
def test_specs_to_kwargs_gets_the_form_its_declaration_names(tmp_path, extractor):
    assert _derive(tmp_path, extractor) == {"inplace": True}


def test_an_undeclared_dict_form_extractor_is_told_how_to_get_names(tmp_path):
    with pytest.raises(ConfigError, match=r"relu\.json: case 'one': key 'input_specs': .*list indices.*"
                                          r"annotate its first parameter `dict`"):
        _derive(tmp_path, lambda specs: {"inplace": specs["weight"]["shape"] == [7]})


def test_specs_to_kwargs_must_return_a_dict(tmp_path):
    with pytest.raises(ConfigError, match=r"relu\.json: case 'one': key 'input_specs': specs_to_kwargs must return "
                                          r"a dict of keywords, got list"):
        _derive(tmp_path, lambda specs: [("inplace", True)])


@pytest.mark.parametrize("form", ["list", "dict"])
def test_the_zoo_extractors_take_either_form(form):
    from interop.zoo.operators.fc import specs_to_kwargs as fc
    from interop.zoo.operators.conv2d import specs_to_kwargs as conv2d

    specs = [{"name": "data_input", "shape": [2, 3, 8, 8]}, {"name": "weight", "shape": [4, 3, 3, 3]},
             {"name": "bias", "shape": [4]}]
    given = specs if form == "list" else {s["name"]: s for s in specs}
    assert conv2d(given) == {"in_channels": 3, "out_channels": 4, "weight_kernel": (3, 3), "bias": True}
    fc_specs = [{"name": "data_input", "shape": [2, 5]}, {"name": "weight", "shape": [6, 5]}]
    given = fc_specs if form == "list" else {s["name"]: s for s in fc_specs}
    assert fc(given) == {"in_features": 5, "out_features": 6, "bias": False}
