"""The one equivalence policy: what "Aidge matches torch" means for a case (issue 46, item 3).

pytest's verdict (:func:`interop.equivalence.verdict.check_callable`), asv's precheck
(``benchmarks/harness.py``) and ModelTester's step (:meth:`interop.equivalence.tester.ModelTester.unit_test`,
its documented MSE loss and SGD loop around it) decide through :func:`difference`; the rest of
this module is what they feed it:

- **seed**: a case's seed is :func:`seed_for` its name (``crc32``; ``$INTEROP_SEED`` replays
  another); a case's seeded inputs are :func:`seeded_inputs`; the output gradient of a
  backward is :func:`output_gradients` (seed :data:`OUTPUT_GRAD_SEED`);
- **tolerance**: the case's policy (:func:`~interop.oracle.tolerance.tolerance_for`) for
  the dtype of torch's value (its first tensor leaf); an explicit ``(rtol, atol)`` pair
  (ModelTester's ``relative_precision`` / ``absolute_precision``) holds for every dtype;
- **outputs**: every leaf of the structure, through the one comparator
  (:func:`~interop.oracle.outputs.compare_outputs`);
- **gradients** (of an input or a parameter): where torch gives no gradient (None: the tensor
  is detached, unused or not differentiable in torch) there is nothing to compare; where torch
  gives one and Aidge none, Aidge's is zeros (it equals torch's only when torch's is zero);
- **parameters**: those of the torch module that require grad and that the Aidge side holds
  under the same name, bound to the graph (:func:`compared_parameters`: an AidgeModule's
  :attr:`~interop.bridge.AidgeModule.unmapped_state` is not compared).

Before this module the three disagreed: on ``x * y.detach()`` (torch gives ``y`` no gradient,
Aidge one) pytest's verdict passed, asv's precheck failed ("Structure mismatch at input
grad[1]") and so did ModelTester's step (tests/unit/test_equivalence_policy.py).
"""
from __future__ import annotations

import dataclasses
import zlib
from typing import Any, Sequence

from ..oracle.outputs import compare_outputs
from ..oracle.tolerance import Tolerance, tolerance_for
from ..env import read

__all__ = ["SEED_ENV", "OUTPUT_GRAD_SEED", "Difference", "difference", "seed_for", "seeded_inputs",
           "output_gradients", "compared_parameters", "tolerance_of", "rounding_note"]

#: the variable that replays a case under another seed
SEED_ENV = "INTEROP_SEED"
#: the seed of the output gradient a backward starts from
OUTPUT_GRAD_SEED = 2


@dataclasses.dataclass(frozen=True)
class Difference:
    """Aidge's value is not torch's: ``what`` (``output``, ``input grad [1]``, ``grad of
    weight``...), the comparator's mismatches, both values as compared (a missing Aidge
    gradient as the zeros it was compared as) and the tolerance applied."""

    what: str
    mismatches: list
    actual: Any
    expected: Any
    tolerance: Tolerance

    @property
    def detail(self) -> str:
        return "\n".join(m.message for m in self.mismatches)


def seed_for(name: str) -> int:
    """The seed of the case named ``name``: ``$INTEROP_SEED`` when set, else ``crc32(name)``."""
    seed = read(SEED_ENV)
    return zlib.crc32(name.encode()) & 0x7FFFFFFF if seed is None else int(seed)


def seeded_inputs(seed: int, sizes: Sequence) -> list:
    """One standard-normal float32 tensor per shape of ``sizes``, drawn in order from ``seed``
    (what ModelTester's first epoch feeds, and asv's precheck)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=gen) for s in sizes]


def output_gradients(outputs: Sequence, seed: int = OUTPUT_GRAD_SEED) -> list:
    """The gradient a backward feeds each output leaf: standard-normal from ``seed`` for a float
    output that requires grad, None for the others (they take no part in the backward)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(o.shape, generator=gen, dtype=o.dtype).to(o.device)
            if o.is_floating_point() and o.requires_grad else None for o in outputs]


def compared_parameters(torch_module, aidge_module) -> list[tuple[str, Any, Any]]:
    """``(name, torch parameter, Aidge parameter)`` of every parameter of ``torch_module`` that
    requires grad and that ``aidge_module`` holds under the same name, bound to its graph."""
    held = dict(aidge_module.named_parameters())
    unmapped = set(getattr(aidge_module, "unmapped_state", ()))
    return [(n, p, held[n]) for n, p in torch_module.named_parameters()
            if p.requires_grad and n in held and n not in unmapped]


def tolerance_of(expected: Any, tolerance: Any = None) -> Tolerance:
    """The tolerance a value of torch's is compared under: ``tolerance`` (a policy, see the
    module docstring) for the dtype of its first tensor leaf (float32 when it has none)."""
    if isinstance(tolerance, tuple):
        rtol, atol = tolerance
        return Tolerance(rtol, atol, "explicit rtol and atol, for every dtype", "float64")
    from torch.utils import _pytree as pytree

    leaf = next((x for x in pytree.tree_leaves(expected) if hasattr(x, "dtype")), None)
    return tolerance_for(tolerance, leaf.dtype if leaf is not None else "float32")


def difference(what: str, actual: Any, expected: Any, tolerance: Any = None, *,
               gradient: bool = False) -> Difference | None:
    """Whether Aidge's ``actual`` matches torch's ``expected``: None when it does, else the
    :class:`Difference`. ``gradient``: the values are one gradient (a tensor or None), under the
    gradient rule of the module docstring. The one place this decision is made."""
    if gradient:
        if expected is None:
            return None  # torch gives no gradient: nothing to compare
        if actual is None:
            import torch

            actual = torch.zeros_like(expected)
    tol = tolerance_of(expected, tolerance)
    mismatches = compare_outputs(actual, expected, rtol=tol.rtol, atol=tol.atol, name=what)
    return Difference(what, mismatches, actual, expected, tol) if mismatches else None


def rounding_note(what: str, found) -> str:
    """One line for a difference the oracle calls float32 rounding (attribution ``precision``)."""
    first = found.mismatches[0] if found.mismatches else None
    figures = ""
    if first is not None and first.n_mismatched is not None:
        figures = (f": {first.n_mismatched} of {first.n_total} elements beyond rtol {found.tolerance.rtol:g} / atol "
                   f"{found.tolerance.atol:g}, max |diff| {first.max_abs:.3g}")
    return f"{what} differs by float32 rounding only{figures} (within torch float32's own error against float64)"
