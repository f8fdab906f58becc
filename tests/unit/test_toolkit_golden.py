"""interop.diagnostics.golden and the plugin's golden fixture: round trip, missing file, one file per
parameter set, --torch-update-golden, no pickle."""
from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
import torch

from interop.diagnostics.golden import GoldenFile, GoldenMismatch, GoldenMissing, golden_path

pytest_plugins = ("pytester",)


def output():
    g = torch.Generator().manual_seed(0)
    return {"logits": torch.randn(2, 3, generator=g), "aux": (torch.arange(4), torch.tensor(1.5, dtype=torch.float64))}


def test_round_trip(tmp_path):
    path = golden_path(tmp_path / "test_mod.py", "classifier_v1", "LeNet-cpu")
    assert path == tmp_path / "golden" / "test_mod" / "classifier_v1[LeNet-cpu].npz"
    GoldenFile(path, update=True, test_id="t").check(output())
    assert path.exists() and path.with_suffix(".json").exists()
    GoldenFile(path).check(output())  # same values: passes

    meta = json.loads(path.with_suffix(".json").read_text())
    assert [e["path"] for e in meta["entries"]] == ["output['logits']", "output['aux'][0]", "output['aux'][1]"]
    assert [e["dtype"] for e in meta["entries"]] == ["float32", "int64", "float64"]
    with np.load(path, allow_pickle=False) as data:  # plain arrays, no pickle needed
        assert sorted(data.files) == ["t0", "t1", "t2"]


def test_changed_values_fail_with_the_comparator_message(tmp_path):
    path = tmp_path / "g.npz"
    GoldenFile(path, update=True).check(output())
    changed = output()
    changed["logits"][1, 2] += 1e-3
    with pytest.raises(GoldenMismatch, match=r"Tensors are not close at output\['logits'\]") as info:
        GoldenFile(path).check(changed)
    assert "Worst mismatch at index (1, 2)" in str(info.value)
    GoldenFile(path).check(changed, atol=2e-3)  # a looser tolerance accepts it


def test_integers_are_exact(tmp_path):
    path = tmp_path / "g.npz"
    GoldenFile(path, update=True).check(torch.arange(5))
    with pytest.raises(GoldenMismatch):
        GoldenFile(path).check(torch.arange(5) + torch.tensor([0, 0, 0, 0, 1]))


def test_structure_change_fails(tmp_path):
    path = tmp_path / "g.npz"
    GoldenFile(path, update=True).check(output())
    with pytest.raises(GoldenMismatch, match="output structure differs"):
        GoldenFile(path).check(output()["logits"])


def test_missing_file_fails(tmp_path):
    with pytest.raises(GoldenMissing, match="--torch-update-golden"):
        GoldenFile(tmp_path / "none.npz", test_id="tests/x.py::t").check(output())
    assert not (tmp_path / "none.npz").exists()


def test_bfloat16_round_trip(tmp_path):
    path = tmp_path / "g.npz"
    x = torch.randn(4, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    GoldenFile(path, update=True).check(x)
    GoldenFile(path).check(x)
    assert json.loads(path.with_suffix(".json").read_text())["entries"][0]["dtype"] == "bfloat16"


# --------------------------------------------------------------------------------------
# The plugin: marker, fixture, options (run in a scratch pytest session)
# --------------------------------------------------------------------------------------

SUITE = textwrap.dedent("""
    import pytest, torch

    SCALE = {scale}

    @pytest.mark.torch_golden("classifier_v1")
    @pytest.mark.parametrize("width", [2, 3])
    def test_classifier(golden, width):
        golden.check(torch.linspace(0, 1, width) * SCALE, atol=1e-6)

    def test_unnamed(golden, make_tensor, torch_device):
        assert torch_device.type == "cpu"
        x = make_tensor(2, 2)
        golden.check(x)
""")


def _run(pytester, scale, *args):
    pytester.makepyfile(test_suite=SUITE.format(scale=scale))
    return pytester.runpytest("-p", "no:cacheprovider", "--torch-device=cpu", "-q", *args)


def test_plugin_update_check_and_missing(pytester):
    result = _run(pytester, 1.0)
    result.assert_outcomes(failed=3)  # no golden file yet: fails, never passes vacuously
    result.stdout.fnmatch_lines(["*golden reference missing*"])

    result = _run(pytester, 1.0, "--torch-update-golden")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*golden files written: 3*"])
    folder = pytester.path / "golden" / "test_suite"
    assert sorted(p.name for p in folder.iterdir()) == [
        "classifier_v1[2].json", "classifier_v1[2].npz", "classifier_v1[3].json", "classifier_v1[3].npz",
        "test_unnamed.json", "test_unnamed.npz"]  # one file per parameter set

    _run(pytester, 1.0).assert_outcomes(passed=3)
    result = _run(pytester, 1.001)  # the classifier drifted: both parameter sets fail
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*output differs from the golden file*classifier_v1*"])


def test_plugin_is_discoverable(pytester):
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.torch_golden(name)*"])
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*--torch-device=*", "*--torch-update-golden*"])
    result = pytester.runpytest("--torch-device=gpu7")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--torch-device='gpu7'*"])


def test_make_tensor_seed_is_printed_on_failure(pytester):
    pytester.makepyfile(test_seed="""
        def test_fails(make_tensor):
            x = make_tensor(3, low=0, high=1)
            assert (x >= 0).all() and (x < 1).all()
            assert False
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "--torch-device=cpu")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*make_tensor: seed *"])
