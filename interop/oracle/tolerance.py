"""Tolerances: the comparator's per-dtype defaults (the torch.testing table).

The per-operator and per-model policy (:class:`Tolerance`, declared in the catalog with a
written reason for every loosening) is built on this table.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

__all__ = ["default_tolerances", "Tolerance", "tolerance_for"]

# --------------------------------------------------------------------------------------
# Tolerances
# --------------------------------------------------------------------------------------

# (rtol, atol), the torch.testing table; the float8 rows are ours (torch.testing has
# none): about one ulp of the format, relative.
_TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "longdouble": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
    "clongdouble": (1e-7, 1e-7),
    "float8_e4m3fn": (1.25e-1, 1e-5),
    "float8_e4m3fnuz": (1.25e-1, 1e-5),
    "float8_e5m2": (2.5e-1, 1e-5),
    "float8_e5m2fnuz": (2.5e-1, 1e-5),
}
_EXACT_PREFIXES = ("bool", "int", "uint", "qint", "quint")
_PYTHON_TYPES = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}


def _dtype_name(dtype: Any) -> str:
    """Canonical name of a torch dtype, numpy dtype / scalar type, python type or string."""
    if isinstance(dtype, str):
        name = dtype[len("torch."):] if dtype.startswith("torch.") else dtype
        if name in _TOLERANCES or name.startswith(_EXACT_PREFIXES):
            return name
        return _dtype_name(np.dtype(name))
    if type(dtype).__name__ == "dtype" and type(dtype).__module__.split(".")[0] == "torch":
        return str(dtype)[len("torch."):]
    for py_type, name in _PYTHON_TYPES.items():
        if dtype is py_type:
            return name
    try:
        np_dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"not a dtype: {dtype!r}") from None
    if np_dtype == np.longdouble and np_dtype != np.float64:
        return "longdouble"
    if np_dtype == np.clongdouble and np_dtype != np.complex128:
        return "clongdouble"
    return np_dtype.name


def _dtype_tolerance(dtype: Any) -> tuple[float, float]:
    name = _dtype_name(dtype)
    if name in _TOLERANCES:
        return _TOLERANCES[name]
    if name.startswith(_EXACT_PREFIXES):
        return (0.0, 0.0)
    raise ValueError(f"no default tolerance for dtype {name!r}")


def default_tolerances(*dtypes: Any) -> tuple[float, float]:
    """Default ``(rtol, atol)`` for comparing values of the given dtypes.

    The torch.testing table: float32 / complex64 ``(1.3e-6, 1e-5)``, float16
    ``(1e-3, 1e-5)``, bfloat16 ``(1.6e-2, 1e-5)``, float64 / complex128 ``(1e-7, 1e-7)``,
    integers and bool ``(0, 0)``.  With several dtypes the looser one wins (max rtol, max
    atol).  Accepts torch dtypes, numpy dtypes and scalar types, python types
    (``float``, ``int``...) and dtype names.
    """
    if not dtypes:
        raise TypeError("default_tolerances() needs at least one dtype")
    pairs = [_dtype_tolerance(d) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)




# --------------------------------------------------------------------------------------
# The policy: what every verdict uses
# --------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Tolerance:
    """``(rtol, atol)`` for one verdict, and why. A value is close when
    ``|actual - expected| <= atol + rtol * |expected|``.

    The default for a dtype is the comparator's table (:func:`default_tolerances`:
    float32 ``(1.3e-6, 1e-5)``). An operator or model may declare a looser one in the
    catalog, and must then give ``reason`` (what differs between the two computations,
    measured): a silent loosening is refused. Measured on the whole CPU suite (torch 2.13,
    Aidge 0.10.1): every operator and model case that passes at rtol 1e-3 / atol 1e-4 also
    passes at the float32 default, so no entry of the catalog loosens it today.
    """

    rtol: float
    atol: float
    reason: str = ""
    dtype: str = "float32"

    def __post_init__(self):
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
                raise ValueError(f"Tolerance: {name} must be a finite number >= 0, got {value!r}")
            object.__setattr__(self, name, float(value))
        object.__setattr__(self, "dtype", _dtype_name(self.dtype))
        object.__setattr__(self, "reason", self.reason.strip())
        base_rtol, base_atol = default_tolerances(self.dtype)
        if (self.rtol > base_rtol or self.atol > base_atol) and not self.reason:
            raise ValueError(f"Tolerance(rtol={self.rtol}, atol={self.atol}) is looser than the {self.dtype} "
                             f"default (rtol={base_rtol}, atol={base_atol}): give the reason (what was measured)")

    @classmethod
    def default(cls, dtype: Any = "float32") -> "Tolerance":
        rtol, atol = default_tolerances(dtype)
        return cls(rtol, atol, f"the comparator's {_dtype_name(dtype)} default", dtype)


def tolerance_for(policy: Any = None, dtype: Any = "float32") -> Tolerance:
    """The tolerance of a verdict on ``dtype`` values under ``policy``: None (the dtype's
    default), a :class:`Tolerance` (for its own dtype; other dtypes get their default) or a
    mapping ``dtype name -> Tolerance``."""
    name = _dtype_name(dtype)
    if policy is None:
        return Tolerance.default(name)
    if isinstance(policy, Tolerance):
        return policy if policy.dtype == name else Tolerance.default(name)
    if isinstance(policy, dict):
        found = policy.get(name)
        if found is not None and not isinstance(found, Tolerance):
            raise TypeError(f"tolerance policy for {name}: expected a Tolerance, got {found!r}")
        return found or Tolerance.default(name)
    raise TypeError(f"a tolerance policy is None, a Tolerance or a dict of them, got {policy!r}")


# --------------------------------------------------------------------------------------
# The suite's instruments that are screens, not verdicts on Aidge: each looser tolerance here,
# with its reason, and nowhere else (tests/unit/test_layout.py refuses a tolerance literal
# outside the oracle and the case catalog)
# --------------------------------------------------------------------------------------
#: the batch sweep's screen for a silent wrong answer (interop.diagnostics.batch_sweep)
SWEEP_SCREEN = Tolerance(1e-4, 1e-5, reason=(
    "a screen for silent wrong answers after a batch-size change, not a verdict: a row computed at "
    "the wrong batch is off by the values' own scale, while float32 reductions at another batch size "
    "differ from torch's by rounding (about 1e-6 relative)"))
#: device parity (the contract's device_parity check): GPU results against the CPU's
DEVICE_PARITY_RTOL = 1e-4  # TF32 matmuls and fused kernels loosen GPU results (torch's own docs)
#: node_profile's screen of a torch stand-in for an ONNX node before timing it
STAND_IN_SCREEN = Tolerance(1e-3, 1e-4, reason=(
    "decides only whether a torch call may stand in for an ONNX node in a timing (the per-node "
    "profile), never a verdict on Aidge: a stand-in off by more than this is not timed"))
