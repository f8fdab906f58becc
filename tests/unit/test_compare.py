"""Unit tests of interop.oracle.compare, the one shared comparator."""

from __future__ import annotations

import collections
import dataclasses
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from interop.equivalence import (
    Mismatch,
    assert_finite,
    assert_outputs_close,
    assert_tensors_close,
    compare_outputs,
    compare_tensors,
    default_tolerances,
    max_errors,
)

INF = math.inf
NAN = math.nan


def _raises(fn, *args, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        fn(*args, **kwargs)
    return str(info.value)


# --------------------------------------------------------------------------------------
# default_tolerances
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype, expected",
    [
        (torch.float32, (1.3e-6, 1e-5)),
        (torch.complex64, (1.3e-6, 1e-5)),
        (torch.float16, (1e-3, 1e-5)),
        (torch.bfloat16, (1.6e-2, 1e-5)),
        (torch.float64, (1e-7, 1e-7)),
        (torch.complex128, (1e-7, 1e-7)),
        (torch.int8, (0.0, 0.0)),
        (torch.int64, (0.0, 0.0)),
        (torch.uint8, (0.0, 0.0)),
        (torch.bool, (0.0, 0.0)),
        (np.float32, (1.3e-6, 1e-5)),
        (np.dtype("float32"), (1.3e-6, 1e-5)),
        (np.dtype("complex64"), (1.3e-6, 1e-5)),
        (np.float16, (1e-3, 1e-5)),
        (np.float64, (1e-7, 1e-7)),
        (np.complex128, (1e-7, 1e-7)),
        (np.int32, (0.0, 0.0)),
        (np.uint64, (0.0, 0.0)),
        (np.bool_, (0.0, 0.0)),
        (float, (1e-7, 1e-7)),
        (int, (0.0, 0.0)),
        (bool, (0.0, 0.0)),
        ("float32", (1.3e-6, 1e-5)),
        ("torch.bfloat16", (1.6e-2, 1e-5)),
    ],
)
def test_default_tolerances_table(dtype, expected):
    assert default_tolerances(dtype) == expected


def test_default_tolerances_mixed_takes_looser():
    assert default_tolerances(torch.float32, torch.float64) == (1.3e-6, 1e-5)
    assert default_tolerances(np.float64, torch.bfloat16) == (1.6e-2, 1e-5)
    assert default_tolerances(torch.float16, np.float32) == (1e-3, 1e-5)
    assert default_tolerances(torch.int64, np.float32) == (1.3e-6, 1e-5)
    assert default_tolerances(torch.int64, torch.bool) == (0.0, 0.0)
    # max rtol and max atol taken independently
    assert default_tolerances(torch.float64, torch.float16) == (1e-3, 1e-5)


def test_default_tolerances_errors():
    with pytest.raises(TypeError):
        default_tolerances()
    with pytest.raises((TypeError, ValueError)):
        default_tolerances(object())


# --------------------------------------------------------------------------------------
# compare_tensors: verdicts
# --------------------------------------------------------------------------------------


def test_equal_tensors_are_close():
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
    assert compare_tensors(x, x.clone()) is None
    assert compare_tensors(x.numpy(), x) is None


def test_within_default_float32_tolerance():
    e = torch.ones(5)
    assert compare_tensors(e + 5e-6, e) is None
    assert compare_tensors(e + 5e-5, e) is not None


def test_closeness_formula_boundary_inclusive():
    e = np.array([1.0, 1.0, -2.0])
    # |a-e| <= atol + rtol*|e|: 0.5 <= 0.25 + 0.25*1 ; 0.75 <= 0.25 + 0.25*2
    assert compare_tensors(np.array([1.5, 0.5, -1.25]), e, rtol=0.25, atol=0.25) is None
    m = compare_tensors(np.array([1.5000001, 1.0, -2.0]), e, rtol=0.25, atol=0.25)
    assert m is not None and m.n_mismatched == 1
    # rtol is relative to expected, not actual
    assert compare_tensors(np.array([2.0]), np.array([1.0]), rtol=0.5, atol=0) is not None
    assert compare_tensors(np.array([1.0]), np.array([2.0]), rtol=0.5, atol=0) is None


def test_explicit_tolerances_override_and_partial_defaults():
    e = torch.zeros(3)
    a = torch.full((3,), 0.01)
    assert compare_tensors(a, e) is not None
    assert compare_tensors(a, e, rtol=0, atol=0.02) is None
    m = compare_tensors(a, e, rtol=0.5)  # atol from the table
    assert m is not None and m.rtol == 0.5 and m.atol == 1e-5
    m = compare_tensors(torch.ones(1) * 1.1, torch.ones(1), atol=0.0)  # rtol from the table
    assert m.rtol == 1.3e-6 and m.atol == 0.0


@pytest.mark.parametrize("rtol, atol", [(-1e-3, 0.0), (0.0, -1.0), (NAN, 0.0)])
def test_invalid_tolerances_rejected(rtol, atol):
    with pytest.raises(ValueError):
        compare_tensors(np.ones(2), np.ones(2), rtol=rtol, atol=atol)


def test_mismatch_is_frozen_dataclass_and_str_is_message():
    m = compare_tensors(np.array([1.0, 2.0]), np.array([1.0, 3.0]))
    assert isinstance(m, Mismatch)
    assert [f.name for f in dataclasses.fields(Mismatch)] == [
        "path", "message", "n_mismatched", "n_total", "max_abs", "max_rel",
        "worst_index", "worst_actual", "worst_expected", "rtol", "atol",
    ]
    assert str(m) == m.message
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.path = "x"  # type: ignore[misc]


def test_message_content():
    e = torch.zeros(4, 5, 6)
    a = e.clone()
    a[0, 2, 1], e[0, 2, 1] = 0.513, 0.498
    a[1, 1, 1] = 1e-3
    a[3, 4, 5] = -2e-3
    m = compare_tensors(a, e, path="output[1]")
    msg = m.message
    lines = msg.splitlines()
    assert lines[0] == "Tensors are not close at output[1]!"
    assert "Mismatched elements: 3 / 120 (2.5%)" in msg
    assert "Worst mismatch at index (0, 2, 1): actual 0.513, expected 0.498" in msg
    assert "Greatest absolute difference: 0.015 at index (0, 2, 1) (over mismatched elements)" in msg
    assert "Greatest relative difference: inf at index (1, 1, 1) (over mismatched elements)" in msg
    assert "Tolerance: rtol=1.3e-06, atol=1e-05" in msg
    assert m.path == "output[1]"
    assert (m.n_mismatched, m.n_total) == (3, 120)
    assert m.worst_index == (0, 2, 1)
    assert m.worst_actual == pytest.approx(0.513) and m.worst_expected == pytest.approx(0.498)
    assert m.max_abs == pytest.approx(0.015, rel=1e-5)
    assert m.max_rel == INF
    assert (m.rtol, m.atol) == (1.3e-6, 1e-5)


def test_message_without_path():
    m = compare_tensors(np.array([1.0]), np.array([2.0]))
    assert m.message.splitlines()[0] == "Tensors are not close!"
    assert m.path == ""


def test_worst_is_largest_excess_among_failing_not_largest_diff():
    # element 0 has the largest abs diff but is within tolerance (relative to 1000)
    e = np.array([1000.0, 0.0, 1.0])
    a = np.array([1000.5, 0.1, 1.0])
    m = compare_tensors(a, e, rtol=1e-3, atol=0.0)
    assert m.n_mismatched == 1
    assert m.worst_index == (1,)
    assert m.max_abs == pytest.approx(0.1)  # over failing elements only
    assert "Greatest absolute difference: 0.1 at index (1,)" in m.message


def test_worst_ranks_by_excess_over_tolerance():
    e = np.array([1000.0, 1.0])
    a = np.array([1001.5, 1.9])  # diffs 1.5 (allowed 1.0) and 0.9 (allowed 0.001)
    m = compare_tensors(a, e, rtol=1e-3, atol=0.0)
    assert m.n_mismatched == 2
    assert m.worst_index == (1,)  # excess 0.899 > 0.5
    assert m.max_abs == pytest.approx(1.5)
    assert "Greatest absolute difference: 1.5 at index (0,)" in m.message
    assert "Worst mismatch at index (1,): actual 1.9, expected 1.0" in m.message
    assert m.max_rel == pytest.approx(0.9)


def test_stats_over_failing_elements_only():
    e = np.array([1.0, 0.0, 10.0])
    a = np.array([1.0, 0.5, 10.4])  # rel of the passing one (0.04) must not count
    m = compare_tensors(a, e, rtol=0.05, atol=0.1)
    assert m.n_mismatched == 1
    assert m.max_abs == pytest.approx(0.5)
    assert m.max_rel == INF  # expected 0 -> relative diff inf


def test_percentage_formatting():
    m = compare_tensors(np.zeros(3), np.array([0.0, 0.0, 1.0]))
    assert "Mismatched elements: 1 / 3 (33.3%)" in m.message
    m = compare_tensors(np.ones(4), np.zeros(4))
    assert "Mismatched elements: 4 / 4 (100%)" in m.message


# --------------------------------------------------------------------------------------
# shapes, empty, 0-d
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sa, se",
    [((2, 3), (3, 2)), ((3,), (1, 3)), ((), (1,)), ((0,), (0, 1)), ((2, 3), (2, 3, 1))],
)
def test_shape_mismatch(sa, se):
    m = compare_tensors(torch.zeros(sa), torch.zeros(se), path="out")
    assert m is not None
    assert str(sa) in m.message and str(se) in m.message
    assert m.message.startswith("Shapes do not match at out")
    assert m.n_mismatched is None and m.worst_index is None


def test_empty_tensors_match():
    assert compare_tensors(torch.zeros(0, 3), np.zeros((0, 3))) is None
    assert compare_tensors(np.zeros((2, 0), np.int64), np.zeros((2, 0), np.int64)) is None


def test_zero_dim_scalars():
    assert compare_tensors(torch.tensor(1.0), torch.tensor(1.0)) is None
    m = compare_tensors(torch.tensor(1.0), torch.tensor(2.0))
    assert m.worst_index == ()
    assert "Worst mismatch at index (): actual 1.0, expected 2.0" in m.message
    assert "Mismatched elements: 1 / 1 (100%)" in m.message


def test_python_and_numpy_scalars():
    assert compare_tensors(1.0, torch.tensor(1.0)) is None
    assert compare_tensors(np.float32(2.5), 2.5) is None
    assert compare_tensors(3, np.int64(3)) is None
    assert compare_tensors(True, np.bool_(True)) is None
    assert compare_tensors(1 + 2j, np.complex64(1 + 2j)) is None
    assert compare_tensors(3, 4) is not None
    assert compare_tensors(1.0, torch.ones(1)) is not None  # () vs (1,)


# --------------------------------------------------------------------------------------
# dtypes
# --------------------------------------------------------------------------------------


def test_mixed_float_dtypes_use_looser_tolerance():
    e = np.array([1.0], dtype=np.float64)
    a32 = np.array([1.0 + 5e-6], dtype=np.float32)
    assert compare_tensors(a32, e) is None  # float32 tolerance
    assert compare_tensors(np.array([1.0 + 5e-6]), e) is not None  # float64 tolerance
    m = compare_tensors(np.array([2.0], np.float32), e)
    assert (m.rtol, m.atol) == (1.3e-6, 1e-5)
    assert "Dtypes: actual float32, expected float64" in m.message


def test_low_precision_tolerances():
    e = torch.tensor([1.0])
    assert compare_tensors(torch.tensor([1.0078125], dtype=torch.bfloat16), e) is None
    assert compare_tensors(torch.tensor([1.0625], dtype=torch.bfloat16), e) is not None
    assert compare_tensors(torch.tensor([1.0009766], dtype=torch.float16), e) is None
    assert compare_tensors(torch.tensor([1.01], dtype=torch.float16), e) is not None


def test_bfloat16_message_prints_value():
    m = compare_tensors(torch.tensor([2.0], dtype=torch.bfloat16), torch.tensor([1.0], dtype=torch.bfloat16))
    assert "actual 2.0, expected 1.0" in m.message
    assert m.rtol == 1.6e-2


def test_integers_compare_exactly_beyond_2_53():
    big = 2**60
    a = np.array([big + 1], dtype=np.int64)
    e = np.array([big], dtype=np.int64)
    m = compare_tensors(a, e)
    assert m is not None
    assert m.worst_actual == big + 1 and m.worst_expected == big
    assert f"actual {big + 1}, expected {big}" in m.message
    assert m.max_abs == 1.0
    assert compare_tensors(torch.tensor([big + 1]), torch.tensor([big])) is not None
    assert compare_tensors(torch.tensor([big + 1]), torch.tensor([big + 1])) is None
    # 2**53 + 1 is not representable in float64
    assert compare_tensors(np.array([2**53 + 1]), np.array([2**53])) is not None


def test_integers_mixed_signedness_exact():
    u = np.array([2**60 + 1, 2**64 - 1, 5], dtype=np.uint64)
    s = np.array([2**60, -1, 5], dtype=np.int64)
    m = compare_tensors(u, s)
    assert m.n_mismatched == 2
    assert compare_tensors(np.array([2**62], np.uint64), np.array([2**62], np.int64)) is None
    assert compare_tensors(np.array([7], np.int8), torch.tensor([7], dtype=torch.int64)) is None
    assert compare_tensors(np.array([7], np.uint8), np.array([-249], np.int64)) is not None


def test_integer_overflow_free_differences():
    a = np.array([np.iinfo(np.int64).max], np.int64)
    e = np.array([np.iinfo(np.int64).min], np.int64)
    m = compare_tensors(a, e)
    assert m.max_abs == float(2**64 - 1)
    assert m.worst_actual == 2**63 - 1 and m.worst_expected == -(2**63)


def test_integer_explicit_tolerance_is_exact():
    e = np.array([2**60, 10], dtype=np.int64)
    assert compare_tensors(e + 1, e, rtol=0, atol=1) is None
    m = compare_tensors(e + 2, e, rtol=0, atol=1)
    assert m.n_mismatched == 2


def test_bools_exact():
    a = torch.tensor([True, False, True])
    assert compare_tensors(a, a.clone()) is None
    m = compare_tensors(a, torch.tensor([True, True, True]))
    assert m.n_mismatched == 1 and m.worst_index == (1,)
    assert "actual False, expected True" in m.message
    assert (m.rtol, m.atol) == (0.0, 0.0)
    assert compare_tensors(np.array([True, False]), np.array([1, 0])) is None


def test_mixed_int_float_compares_as_float_with_float_tolerance():
    assert compare_tensors(np.array([1, 2], np.int64), np.array([1.0, 2.0 + 1e-6], np.float32)) is None
    m = compare_tensors(torch.tensor([1, 2]), torch.tensor([1.0, 2.5]))
    assert m is not None and (m.rtol, m.atol) == (1.3e-6, 1e-5)
    assert "actual 2, expected 2.5" in m.message


# --------------------------------------------------------------------------------------
# complex
# --------------------------------------------------------------------------------------


def test_complex_close():
    x = torch.tensor([1 + 2j, -3 + 0.5j], dtype=torch.complex64)
    assert compare_tensors(x, x.clone()) is None
    assert compare_tensors(x, x.to(torch.complex128)) is None


def test_complex_real_part_mismatch():
    m = compare_tensors(np.array([1 + 2j, 3 + 4j]), np.array([1.5 + 2j, 3 + 4j]))
    assert m.n_mismatched == 1
    assert "Mismatched in real part: 1, in imaginary part: 0" in m.message
    assert "Worst mismatch at index (0,) (real part): actual (1+2j), expected (1.5+2j)" in m.message
    assert m.worst_actual == 1 + 2j and m.worst_expected == 1.5 + 2j


def test_complex_imaginary_part_mismatch():
    m = compare_tensors(np.array([1 + 2j, 3 + 4j]), np.array([1 + 2j, 3 + 5j]))
    assert "Mismatched in real part: 0, in imaginary part: 1" in m.message
    assert "(imaginary part)" in m.message.splitlines()[4]
    assert m.worst_index == (1,)


def test_complex_parts_checked_separately_and_counted_once():
    # modulus of the difference is small relative to |e|, but the imaginary part is off
    e = np.array([1000 + 0.001j])
    a = np.array([1000 + 0.5j])
    assert compare_tensors(a, e, rtol=1e-2, atol=0) is not None
    m = compare_tensors(np.array([2 + 2j, 1 + 1j]), np.array([1 + 1j, 1 + 1j]))
    assert m.n_mismatched == 1  # both parts of element 0 fail: one element
    assert "Mismatched in real part: 1, in imaginary part: 1" in m.message


def test_complex_vs_real():
    assert compare_tensors(np.array([1.0, 2.0]), np.array([1 + 0j, 2 + 0j])) is None
    m = compare_tensors(np.array([1.0, 2.0]), np.array([1 + 0j, 2 + 1j]))
    assert "imaginary part" in m.message


def test_complex_nan_in_one_part():
    e = np.array([complex(NAN, 1.0)])
    assert compare_tensors(e.copy(), e) is None
    assert compare_tensors(np.array([1 + 1j]), e) is not None


# --------------------------------------------------------------------------------------
# NaN / Inf
# --------------------------------------------------------------------------------------


def test_nan_positions_must_match():
    e = torch.tensor([1.0, NAN, 3.0])
    assert compare_tensors(e.clone(), e) is None
    m = compare_tensors(torch.tensor([1.0, 2.0, 3.0]), e)
    assert m.n_mismatched == 1 and m.worst_index == (1,)
    assert "actual 2.0, expected nan" in m.message
    assert "Non-finite mismatches: 1 NaN, 0 Inf" in m.message
    m = compare_tensors(torch.tensor([NAN, NAN, 3.0]), e)
    assert m.n_mismatched == 1 and m.worst_index == (0,)


def test_equal_nan_false():
    e = np.array([1.0, NAN])
    m = compare_tensors(e.copy(), e, equal_nan=False)
    assert m is not None and m.n_mismatched == 1 and m.worst_index == (1,)
    assert compare_tensors(np.array([1.0, 2.0]), np.array([1.0, 2.0]), equal_nan=False) is None
    assert assert_tensors_close(e, e) is None
    with pytest.raises(AssertionError):
        assert_tensors_close(e, e, equal_nan=False)


def test_nan_never_passes_huge_tolerance():
    assert compare_tensors(np.array([NAN]), np.array([1.0]), rtol=1e9, atol=1e9) is not None


def test_inf_must_match_exactly():
    e = torch.tensor([INF, -INF, 1.0])
    assert compare_tensors(e.clone(), e) is None
    m = compare_tensors(torch.tensor([-INF, -INF, 1.0]), e)
    assert m.n_mismatched == 1 and m.worst_index == (0,)
    assert "actual -inf, expected inf" in m.message
    assert "Non-finite mismatches: 0 NaN, 1 Inf" in m.message
    big = torch.finfo(torch.float32).max
    assert compare_tensors(torch.tensor([big, -INF, 1.0]), e) is not None
    assert compare_tensors(torch.tensor([INF, -INF, 1.0]), torch.tensor([big, -INF, 1.0])) is not None
    # even an infinite tolerance does not make Inf equal to a finite number
    assert compare_tensors(np.array([INF]), np.array([1.0]), rtol=0, atol=INF) is not None
    assert compare_tensors(np.array([5.0]), np.array([1.0]), rtol=0, atol=INF) is None


def test_nan_and_inf_failures_outrank_finite_ones():
    m = compare_tensors(np.array([100.0, 1.0, 0.0]), np.array([0.0, INF, 0.0]))
    assert m.worst_index == (1,)
    assert m.max_abs == INF


def test_only_nan_failures_have_nan_stats():
    m = compare_tensors(np.array([NAN, 1.0]), np.array([1.0, 1.0]))
    assert math.isnan(m.max_abs) and math.isnan(m.max_rel)
    assert "Greatest absolute difference: nan (over mismatched elements)" in m.message


# --------------------------------------------------------------------------------------
# input conversion
# --------------------------------------------------------------------------------------


def test_torch_tensor_variants():
    x = torch.randn(4, 3, requires_grad=True)
    assert compare_tensors(x, x.detach().clone()) is None  # requires_grad
    assert compare_tensors(x.detach().t(), x.detach().numpy().T) is None  # non-contiguous
    z = torch.tensor([1 + 2j, 3 - 1j])
    assert compare_tensors(z.conj(), np.array([1 - 2j, 3 + 1j])) is None  # lazy conj view
    assert compare_tensors(-z.conj().imag, np.array([2.0, -1.0])) is None  # neg bit
    s = torch.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse()
    assert compare_tensors(s, np.array([[0.0, 1.0], [2.0, 0.0]], np.float32)) is None


def test_meta_tensor_rejected():
    with pytest.raises(TypeError):
        compare_tensors(torch.zeros(2, device="meta"), torch.zeros(2))


@pytest.mark.parametrize("bad", [[1.0, 2.0], "1.0", None, object(), np.array(["a"]), np.array([None])])
def test_unsupported_inputs_raise_type_error(bad):
    with pytest.raises(TypeError):
        compare_tensors(bad, np.array([1.0, 2.0]))


def test_aidge_tensor():
    aidge_core = pytest.importorskip("aidge_core")
    t = aidge_core.Tensor(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32))
    assert compare_tensors(t, torch.tensor([[1.0, 2.0], [3.0, 4.0]])) is None
    assert compare_tensors(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), t) is None
    m = compare_tensors(t, np.array([[1.0, 2.0], [3.0, 4.5]], np.float32), path="aidge_out")
    assert m.worst_index == (1, 1) and "at aidge_out" in m.message
    m = compare_tensors(t, np.zeros((4,), np.float32))
    assert "(2, 2)" in m.message and "(4,)" in m.message
    ti = aidge_core.Tensor(np.array([2**60 + 1], dtype=np.int64))
    assert compare_tensors(ti, np.array([2**60], np.int64)) is not None
    assert_outputs_close({"y": t}, {"y": np.array([[1, 2], [3, 4]], np.float32)})
    assert_finite([t])


def test_module_imports_neither_torch_nor_aidge():
    code = (
        "import sys\n"
        "import interop.oracle.compare as m, interop.oracle.outputs, interop.oracle.tolerance\n"
        "assert 'torch' not in sys.modules and 'aidge_core' not in sys.modules, sorted(sys.modules)\n"
        "import numpy as np\n"
        "assert m.compare_tensors(np.ones(2), np.ones(2)) is None\n"
        "assert m.compare_tensors(np.ones(2), np.zeros(2)) is not None\n"
        "assert 'torch' not in sys.modules and 'aidge_core' not in sys.modules\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr


def test_no_print_and_no_warning_filter_changes(capsys):
    filters_before = list(warnings.filters)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compare_tensors(np.array([NAN, INF, 0.0, 1.0]), np.array([1.0, -INF, 0.0, 0.0]))
        compare_tensors(np.array([0.0]), np.array([0.0]), rtol=0, atol=0)
        max_errors(np.array([NAN, INF, 1.0, 0.0]), np.array([NAN, INF, 0.0, 0.0]))
        with pytest.raises(AssertionError):
            assert_finite(np.array([NAN]))
        with pytest.raises(AssertionError):
            assert_outputs_close([np.zeros(1)], {"a": np.zeros(1)})
    assert caught == []
    assert list(warnings.filters) == filters_before
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


# --------------------------------------------------------------------------------------
# assert_tensors_close
# --------------------------------------------------------------------------------------


def test_assert_tensors_close_passes_and_fails():
    assert_tensors_close(torch.ones(3), np.ones(3, np.float32))
    msg = _raises(assert_tensors_close, torch.ones(3), torch.zeros(3))
    assert msg.startswith("Tensors are not close!")
    assert "Mismatched elements: 3 / 3 (100%)" in msg


def test_assert_tensors_close_msg_prefix_and_tolerances():
    msg = _raises(assert_tensors_close, np.ones(2), np.zeros(2), msg="conv2d forward")
    assert msg.startswith("conv2d forward")
    assert "Tensors are not close!" in msg
    assert_tensors_close(np.ones(2), np.zeros(2), rtol=0, atol=1.0)
    msg = _raises(assert_tensors_close, np.ones(2), np.zeros(2), rtol=0.0, atol=0.5)
    assert "Tolerance: rtol=0, atol=0.5" in msg


def test_assert_tensors_close_shape_message():
    msg = _raises(assert_tensors_close, torch.zeros(2, 3), torch.zeros(3, 2))
    assert "(2, 3)" in msg and "(3, 2)" in msg


# --------------------------------------------------------------------------------------
# assert_outputs_close / compare_outputs
# --------------------------------------------------------------------------------------


def test_outputs_close_nested_pass():
    out = (torch.ones(2), {"a": [torch.zeros(3), 1.5], "b": np.int64(3)}, None)
    exp = [np.ones(2, np.float32), {"b": 3, "a": (np.zeros(3), 1.5)}, None]  # list vs tuple ok
    assert_outputs_close(out, exp)
    assert compare_outputs(out, exp) == []


def test_outputs_reports_every_mismatching_leaf():
    out = (torch.zeros(2), torch.ones(2), torch.zeros(2))
    exp = (torch.ones(2), torch.ones(2), torch.full((2,), 2.0))
    msg = _raises(assert_outputs_close, out, exp)
    assert msg.startswith("2 mismatch(es) in output:")
    assert "Tensors are not close at output[0]!" in msg
    assert "Tensors are not close at output[2]!" in msg
    assert "output[1]" not in msg
    ms = compare_outputs(out, exp)
    assert [m.path for m in ms] == ["output[0]", "output[2]"]


def test_outputs_dict_and_nested_paths():
    out = {"pooled": torch.zeros(2), "seq": [{"a": torch.zeros(1)}, torch.zeros(1)]}
    exp = {"pooled": torch.ones(2), "seq": [{"a": torch.ones(1)}, torch.zeros(1)]}
    msg = _raises(assert_outputs_close, out, exp)
    assert "Tensors are not close at output['pooled']!" in msg
    assert "Tensors are not close at output['seq'][0]['a']!" in msg
    msg = _raises(assert_outputs_close, [out["seq"][0]], [exp["seq"][0]])
    assert "output[0]['a']" in msg


def test_outputs_custom_name_and_msg():
    msg = _raises(assert_outputs_close, [torch.zeros(1)], [torch.ones(1)], name="logits", msg="resnet18")
    assert msg.startswith("resnet18")
    assert "Tensors are not close at logits[0]!" in msg


def test_outputs_scalar_leaves():
    assert_outputs_close((1.0, 2), (1.0, 2))
    msg = _raises(assert_outputs_close, (1.0, 2), (1.0, 3))
    assert "Tensors are not close at output[1]!" in msg
    assert "actual 2, expected 3" in msg
    assert_outputs_close({"loss": torch.tensor(0.25)}, {"loss": 0.25})


def test_outputs_namedtuple_paths():
    Out = collections.namedtuple("Out", ["logits", "hidden"])
    msg = _raises(assert_outputs_close, Out(torch.zeros(1), torch.zeros(1)), Out(torch.zeros(1), torch.ones(1)))
    assert "Tensors are not close at output.hidden!" in msg
    x = torch.tensor([[1.0, 5.0], [3.0, 2.0]])
    r = torch.max(x, dim=0)
    assert_outputs_close(r, (np.array([3.0, 5.0], np.float32), np.array([1, 0])))
    msg = _raises(assert_outputs_close, (torch.tensor([3.0, 5.0]), torch.tensor([1, 1])), r)
    assert "output.indices" in msg


@pytest.mark.parametrize(
    "actual, expected, fragment",
    [
        ([torch.zeros(1)], {"a": torch.zeros(1)}, "Structure mismatch at output: actual is a list of length 1, expected a dict"),
        ({"a": torch.zeros(1)}, [torch.zeros(1)], "expected a list of length 1"),
        ({"a": torch.zeros(1)}, {"a": torch.zeros(1), "b": torch.zeros(1)}, "missing key(s) in actual: ['b']"),
        ({"a": torch.zeros(1), "c": torch.zeros(1)}, {"a": torch.zeros(1)}, "unexpected extra key(s) in actual: ['c']"),
        ((torch.zeros(1),), (torch.zeros(1), torch.zeros(1)), "actual is a tuple of length 1, expected a tuple of length 2"),
        (torch.zeros(2), (torch.zeros(2),), "actual is a tensor of shape (2,), expected a tuple of length 1"),
        ([{"a": (torch.zeros(2),)}], [{"a": torch.zeros(2)}], "Structure mismatch at output[0]['a']: actual is a tuple of length 1, expected a tensor of shape (2,)"),
        ([None], [torch.zeros(1)], "Structure mismatch at output[0]: actual is None"),
        ([1.0], [[1.0]], "actual is a scalar (float), expected a list of length 1"),
    ],
)
def test_outputs_structure_mismatch(actual, expected, fragment):
    msg = _raises(assert_outputs_close, actual, expected)
    assert fragment in msg
    ms = compare_outputs(actual, expected)
    assert ms and ms[0].n_mismatched is None


def test_outputs_structure_and_value_mismatches_reported_together():
    out = {"a": torch.zeros(1), "b": torch.zeros(1)}
    exp = {"a": torch.ones(1), "c": torch.zeros(1)}
    ms = compare_outputs(out, exp)
    assert len(ms) == 3
    assert {m.path for m in ms} == {"output", "output['a']"}


def test_outputs_shape_mismatch_leaf_path():
    msg = _raises(assert_outputs_close, [torch.zeros(2, 3)], [torch.zeros(3, 2)])
    assert "Shapes do not match at output[0]: actual (2, 3) vs expected (3, 2)" in msg


def test_outputs_unknown_leaf_type_raises_type_error():
    with pytest.raises(TypeError):
        compare_outputs([object()], [object()])


# --------------------------------------------------------------------------------------
# assert_finite
# --------------------------------------------------------------------------------------


def test_assert_finite_passes():
    assert_finite(torch.randn(3))
    assert_finite({"a": [np.ones(2), 1.0], "b": torch.arange(3), "c": None})
    assert_finite(torch.zeros(0))


def test_assert_finite_message():
    x = torch.zeros(2, 3)
    x[0, 2] = NAN
    x[1, 0] = INF
    x[1, 1] = -INF
    x[1, 2] = NAN
    msg = _raises(assert_finite, {"feat": [torch.zeros(1), x]}, name="out")
    assert "out['feat'][1]" in msg
    assert "2 NaN, 1 +Inf, 1 -Inf" in msg
    assert "first at index (0, 2)" in msg
    assert "out['feat'][0]" not in msg


def test_assert_finite_reports_every_bad_leaf_and_complex():
    msg = _raises(assert_finite, (np.array([INF]), np.array([1.0]), np.array([complex(0, NAN)])))
    assert "output[0]" in msg and "output[2]" in msg and "output[1]" not in msg
    assert "1 NaN, 0 +Inf, 0 -Inf" in msg
    assert "first at index (0,)" in msg
    msg = _raises(assert_finite, torch.tensor(float("-inf")))
    assert "0 NaN, 0 +Inf, 1 -Inf" in msg and "first at index ()" in msg


# --------------------------------------------------------------------------------------
# max_errors
# --------------------------------------------------------------------------------------


def test_max_errors_basic():
    abs_e, rel_e = max_errors(np.array([1.0, 2.5, 4.0]), np.array([1.0, 2.0, 5.0]))
    assert abs_e == pytest.approx(1.0)
    assert rel_e == pytest.approx(0.25)  # measured against expected: 0.5/2.0 and 1/5
    assert max_errors(torch.ones(3), torch.ones(3)) == (0.0, 0.0)


def test_max_errors_special_values():
    assert max_errors(np.array([1.0]), np.array([0.0])) == (1.0, INF)
    assert max_errors(np.array([NAN, INF, 1.0]), np.array([NAN, INF, 1.0])) == (0.0, 0.0)
    assert max_errors(np.array([NAN]), np.array([1.0])) == (INF, INF)
    assert max_errors(np.array([-INF]), np.array([INF])) == (INF, INF)
    assert max_errors(np.zeros(0), np.zeros(0)) == (0.0, 0.0)


def test_max_errors_integers_exact_and_complex():
    assert max_errors(np.array([2**60 + 1]), np.array([2**60])) == (1.0, 1 / 2**60)
    assert max_errors(np.array([3 + 4j]), np.array([0j])) == (5.0, INF)
    assert max_errors(torch.tensor([1, 2]), torch.tensor([1.0, 2.5])) == (0.5, 0.2)


def test_max_errors_shape_mismatch():
    with pytest.raises(ValueError):
        max_errors(np.zeros(2), np.zeros(3))


# --------------------------------------------------------------------------------------
# property: agrees with torch.testing.assert_close
# --------------------------------------------------------------------------------------

_floats = st.floats(allow_nan=True, allow_infinity=True, width=64)


@settings(max_examples=25, deadline=None)
@given(
    pair=st.integers(1, 6).flatmap(
        lambda n: st.tuples(
            hnp.arrays(np.float64, n, elements=_floats),
            hnp.arrays(np.float64, n, elements=_floats),
        )
    ),
    rtol=st.sampled_from([0.0, 1e-3, 0.5]),
    atol=st.sampled_from([0.0, 1e-3, 1.0]),
    equal_nan=st.booleans(),
    perturb=st.booleans(),
)
def test_verdict_agrees_with_torch_testing(pair, rtol, atol, equal_nan, perturb):
    a, e = pair
    if perturb:  # mostly-close inputs exercise the tolerance boundary
        with np.errstate(all="ignore"):
            a = e + (a % 2.0) * 1e-3
    try:
        torch.testing.assert_close(torch.from_numpy(a), torch.from_numpy(e), rtol=rtol, atol=atol, equal_nan=equal_nan)
        torch_close = True
    except AssertionError:
        torch_close = False
    assert (compare_tensors(a, e, rtol, atol, equal_nan) is None) == torch_close


@settings(max_examples=20, deadline=None)
@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4), elements=st.floats(width=32)))
def test_self_comparison_always_close(x):
    assert compare_tensors(x, x.copy()) is None
    assert compare_tensors(torch.from_numpy(x.copy()), x) is None
