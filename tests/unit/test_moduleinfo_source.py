"""The ModuleInfo case source (interop/cases/moduleinfo.py): ids, the sample check, the cap."""
from __future__ import annotations

import dataclasses

import pytest

from interop.cases import moduleinfo


def test_ids_are_unique_stable_and_readable():
    first = moduleinfo.moduleinfo_cases(["nn.Conv2d", "nn.ReLU", "nn.LayerNorm"])
    second = moduleinfo.moduleinfo_cases(["nn.Conv2d", "nn.ReLU", "nn.LayerNorm"])
    ids = [c.id for c in first]
    assert ids == [c.id for c in second] and len(set(ids)) == len(ids)
    assert {c.params["mode"] for c in first} == {"eval", "train"}
    conv = [c for c in first if c.operator == "Conv2d"]
    assert conv and all(c.id.startswith(("moduleinfo_Conv2d_eval_s0_", "moduleinfo_Conv2d_train_s0_")) for c in conv)
    assert all(c.kind == "moduleinfo" and c.training == (c.params["mode"] == "train") for c in first)


def test_a_case_whose_sample_changed_is_refused():
    case = moduleinfo.moduleinfo_cases(["nn.ReLU"])[0]
    module, args, kwargs = moduleinfo.moduleinfo_sample(case)
    assert module.training is (case.params["mode"] == "train") and args
    moved = dataclasses.replace(case, path=case.path + "_other")
    with pytest.raises(RuntimeError, match="the case id no longer describes it"):
        moduleinfo.moduleinfo_sample(moved)


def test_the_sample_cap_is_validated(monkeypatch):
    monkeypatch.setenv(moduleinfo.SAMPLES_ENV, "all")
    assert moduleinfo.sample_cap() is None
    monkeypatch.setenv(moduleinfo.SAMPLES_ENV, "3")
    assert moduleinfo.sample_cap() == 3
    monkeypatch.setenv(moduleinfo.SAMPLES_ENV, "some")
    with pytest.raises(ValueError, match="INTEROP_MODULEINFO_SAMPLES='some'"):
        moduleinfo.sample_cap()


def test_random_and_lazy_modules_give_no_case():
    assert moduleinfo.moduleinfo_cases(["nn.FractionalMaxPool2d", "nn.LazyConv2d"]) == []
    assert not any(moduleinfo.NOT_COMPARABLE.search(name) for name in moduleinfo.MODULEINFO_MODULES)


def _with_entries(monkeypatch, **infos):
    """torch's ModuleInfo database plus ``infos`` (name -> ModuleInfo), for this test only."""
    db = dict(moduleinfo.module_db(), **infos)
    monkeypatch.setattr(moduleinfo, "module_db", lambda: db)


def _inputs(constructor_kwargs, shape=(3, 4)):
    """A ModuleInfo ``module_inputs_func``: one sample, ``module_cls(**constructor_kwargs)(randn(shape))``."""
    def inputs(module_info, device, dtype, requires_grad, training, **kwargs):
        from torch.testing import make_tensor
        from torch.testing._internal.common_modules import FunctionInput, ModuleInput

        x = make_tensor(shape, device=device, dtype=dtype, requires_grad=requires_grad)
        return [ModuleInput(constructor_input=FunctionInput(**constructor_kwargs), forward_input=FunctionInput(x))]

    return inputs


def test_a_dropout_module_in_train_mode_gives_no_case(monkeypatch):
    # torch 2.13's module_db holds no dropout entry: one made the way torch makes them
    import torch
    from torch.testing._internal.common_modules import ModuleInfo

    _with_entries(monkeypatch, **{
        "nn.Dropout": ModuleInfo(torch.nn.Dropout, module_inputs_func=_inputs({"p": 0.5})),
        "nn.TransformerEncoderLayer": ModuleInfo(torch.nn.TransformerEncoderLayer, module_inputs_func=_inputs(
            {"d_model": 4, "nhead": 2, "dim_feedforward": 8, "dropout": 0.1}, shape=(2, 3, 4)))})
    cases = moduleinfo.moduleinfo_cases(["nn.Dropout", "nn.TransformerEncoderLayer"])
    # eval mode is deterministic (dropout is the identity there): those cases stay
    assert sorted(c.id for c in cases) == ["moduleinfo_Dropout_eval_s0_p0_5_3x4",
                                           "moduleinfo_TransformerEncoderLayer_eval_s0_dmodel4_nhead2_dimfeedforward8_dropout0_1_2x3x4"]
    assert all(not c.training for c in cases)


def test_a_zero_dropout_keeps_the_train_mode_case():
    # torch's own Transformer samples pass dropout=0.0: deterministic, compared in train mode too
    cases = moduleinfo.moduleinfo_cases(["nn.TransformerEncoderLayer"])
    assert {c.params["mode"] for c in cases} == {"eval", "train"}
    assert all(c.test_backward for c in cases)
