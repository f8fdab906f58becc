"""interop.diagnostics.strategies.tensors: edge cases on purpose, NaN/Inf only when asked, shrinking."""
from __future__ import annotations

import math

import pytest
import torch
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from interop.diagnostics.strategies import SUPPORTED_DTYPES, edge_values, tensors

FIND = settings(max_examples=2000, database=None, suppress_health_check=list(HealthCheck), deadline=None,
                derandomize=True)  # same examples every run: a shrink result that cannot flake



@pytest.fixture(autouse=True)
def _ieee_subnormals():
    """These tests assume IEEE subnormals. In two full runs of 2026-12-03 an earlier test of the same
    xdist worker left flush-to-zero set on the main thread (cause not found yet: see the session
    note); torch.set_flush_denormal(False) restores IEEE handling for the strategies' draws."""
    import torch

    torch.set_flush_denormal(False)
    yield


def found(strategy, condition):
    """An example satisfying ``condition`` exists among the drawn ones (hypothesis.find)."""
    return find(strategy, condition, settings=FIND)


F32 = torch.finfo(torch.float32)


@pytest.mark.parametrize("name, condition", [
    ("all zeros", lambda t: t.numel() > 1 and bool((t == 0).all())),
    ("negative zero", lambda t: bool(((t == 0) & torch.signbit(t)).any())),
    ("constant non-zero", lambda t: t.numel() > 1 and bool((t == t.flatten()[0]).all()) and float(t.flatten()[0]) != 0),
    ("float32 max", lambda t: bool((t == F32.max).any())),
    ("float32 lowest", lambda t: bool((t == -F32.max).any())),
    ("smallest normal", lambda t: bool((t.abs() == F32.tiny).any())),
    ("subnormal", lambda t: bool(((t != 0) & (t.abs() < F32.tiny)).any())),
])
def test_edge_cases_are_drawn(name, condition):
    x = found(tensors(shape=(2, 3)), condition)
    assert x.dtype == torch.float32 and x.shape == (2, 3)


def test_nan_and_inf_only_when_asked():
    @settings(max_examples=300, deadline=None, database=None)
    @given(tensors(shape=(4,)))
    def never(x):
        assert bool(torch.isfinite(x).all())

    never()
    found(tensors(shape=(4,), allow_nan=True), lambda t: bool(t.isnan().any()))
    found(tensors(shape=(4,), allow_infinity=True), lambda t: bool((t == -math.inf).any()))
    found(tensors(shape=(4,), allow_infinity=True), lambda t: bool((t == math.inf).any()))


def test_no_subnormals_when_disallowed():
    @settings(max_examples=300, deadline=None, database=None)
    @given(tensors(shape=(6,), allow_subnormal=False))
    def check(x):
        assert not bool(((x != 0) & (x.abs() < F32.tiny)).any())

    check()


def test_bounds_are_respected():
    @settings(max_examples=300, deadline=None, database=None)
    @given(tensors(shape=(5,), min_value=0.0, max_value=10.0))
    def check(x):
        assert bool(((x >= 0) & (x <= 10)).all()), x

    check()


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_every_dtype(dtype):
    x = found(tensors(shape=(3,), dtype=dtype), lambda t: t.numel() == 3)
    assert x.dtype == dtype
    if dtype.is_floating_point:
        big = torch.finfo(dtype).max
    elif dtype == torch.bool:
        big = True
    else:
        big = torch.iinfo(dtype).max
    found(tensors(shape=(3,), dtype=dtype), lambda t: bool((t == big).any()))


def test_integer_extremes():
    found(tensors(shape=(2,), dtype=torch.int32), lambda t: bool((t == torch.iinfo(torch.int32).min).any()))
    assert edge_values(torch.uint8)[:2] == [0, 1] and -1 not in edge_values(torch.uint8)


def test_shapes_and_dtypes_as_strategies():
    x = found(tensors(shape=st.sampled_from([(1,), (2, 2)]), dtype=st.sampled_from([torch.float16, torch.int8])),
              lambda t: t.shape == (2, 2) and t.dtype == torch.int8)
    assert x.shape == (2, 2)
    x = found(tensors(), lambda t: t.dim() == 3)  # default shapes: 1 to 4 dimensions
    assert x.dim() == 3


def test_custom_elements():
    @settings(max_examples=100, deadline=None, database=None)
    @given(tensors(shape=(3,), elements=st.sampled_from([2.0, 3.0])))
    def check(x):
        assert set(x.tolist()) <= {2.0, 3.0}

    check()


def test_shrinks_to_a_minimal_example():
    # "some element exceeds 1 in magnitude": the minimal example is one small tensor of small values
    x = find(tensors(), lambda t: bool((t.abs() > 1).any()), settings=FIND)
    assert x.numel() == 1, x
    assert 1 < float(x.abs().max()) <= 2, x


def test_unsupported_dtype():
    with pytest.raises(ValueError, match="unsupported dtype"):
        found(tensors(shape=(1,), dtype=torch.complex64), lambda t: True)
