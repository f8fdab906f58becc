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
