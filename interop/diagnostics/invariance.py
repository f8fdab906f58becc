"""Invariance and metamorphic checks: what a model's outputs must not depend on.

Each ``assert_*`` runs the model (without autograd, on private copies of the inputs)
on an input and on a transformed input and compares the two outputs through the shared
comparator (:mod:`interop.equivalence` (the comparator), tolerances ``rtol``/``atol`` defaulting to the dtype's);
a violation raises :class:`InvarianceError` (an ``AssertionError``) with the comparator's
message.

``batch`` / ``x`` is a tensor, a tuple of tensors (``model(*x)``) or a dict (``model(**x)``)
such as ``{"input_ids": ..., "attention_mask": ...}``. With an ``attention_mask`` (shape
``(N, L)``), outputs whose first two dimensions are ``(N, L)`` are *sequence-aligned* and
compared on real tokens only (``mask == 1``); other outputs are compared whole (a pooled
``(N, H)`` output with ``H == L`` is taken for a sequence-aligned one).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import torch

from .. import equivalence as compare  # the comparator (interop.equivalence re-exports it)
from .model_io import batch_size, call_model, clone_tensors, iter_tensors, map_tensors, slice_batch

__all__ = [
    "InvarianceError",
    "assert_batch_invariant",
    "assert_padding_invariant",
    "assert_mask_invariant",
    "assert_permutation_invariant",
    "assert_permutation_equivariant",
    "assert_invariant",
    "assert_equivariant",
]

MASK_KEY = "attention_mask"
IDS_KEY = "input_ids"


class InvarianceError(AssertionError):
    """The model's output changed under a transformation it should be invariant to."""


def _run(model: Callable, x: Any) -> Any:
    with torch.no_grad():
        return clone_tensors(call_model(model, clone_tensors(x)))


def _name(model: Any) -> str:
    return type(model).__name__


def _mask(batch: Any) -> torch.Tensor | None:
    if isinstance(batch, Mapping) and MASK_KEY in batch:
        mask = batch[MASK_KEY]
        if not isinstance(mask, torch.Tensor) or mask.dim() != 2:
            raise ValueError(f"batch[{MASK_KEY!r}] must be a (batch, sequence) tensor, got "
                             f"{getattr(mask, 'shape', type(mask).__name__)}")
        return mask
    return None


def _real_tokens(out: Any, mask: torch.Tensor | None, padded: tuple[int, slice] | None = None) -> Any:
    """Keep the real tokens (mask == 1) of every sequence-aligned output leaf.

    ``padded = (padded length, window)``: outputs of a padded run whose dimension 1 has the
    padded length are first cut to ``window``, the positions of the unpadded sequence.
    """
    if mask is None:
        return out
    n, length = mask.shape
    keep = mask.to(torch.bool)

    def cut(t: torch.Tensor) -> torch.Tensor:
        if padded is not None and t.dim() >= 2 and t.shape[0] == n and t.shape[1] == padded[0]:
            t = t[:, padded[1]]
        if t.dim() >= 2 and tuple(t.shape[:2]) == (n, length):
            return t[keep.to(t.device)]
        return t

    return map_tensors(cut, out)


def _verdict(what: str, actual: Any, expected: Any, rtol, atol, detail: str = "") -> None:
    mismatches = compare.compare_outputs(actual, expected, rtol, atol, equal_nan=True)
    if mismatches:
        body = "\n\n".join(m.message for m in mismatches[:3])
        more = f"\n... and {len(mismatches) - 3} more" if len(mismatches) > 3 else ""
        raise InvarianceError(f"{what}{(' ' + detail) if detail else ''}\n\n{body}{more}")


# --------------------------------------------------------------------------------------
# Batch, padding, mask
# --------------------------------------------------------------------------------------


def assert_batch_invariant(model: Callable, batch: Any, rtol: float | None = None, atol: float | None = None,
                           max_samples: int | None = None) -> None:
    """``model(batch)[i] == model(batch[i:i+1])[0]`` for every sample ``i`` (up to ``max_samples``)."""
    n = batch_size(batch)
    if n is None:
        raise ValueError("assert_batch_invariant: the inputs share no batch dimension (dim 0)")
    mask = _mask(batch)
    full = _run(model, batch)
    failures = []
    for i in range(n if max_samples is None else min(n, max_samples)):
        single = _run(model, slice_batch(batch, i, i + 1, n))
        expected = slice_batch(full, i, i + 1, n)
        m = None if mask is None else mask[i:i + 1]
        mismatches = compare.compare_outputs(_real_tokens(single, m), _real_tokens(expected, m), rtol, atol)
        if mismatches:
            failures.append((i, mismatches))
    if failures:
        i, mismatches = failures[0]
        raise InvarianceError(
            f"{_name(model)} is not batch invariant: {len(failures)} of {n} samples change with the rest "
            f"of the batch; sample {i}: model(batch[{i}:{i + 1}]) vs model(batch)[{i}:{i + 1}]\n\n"
            + "\n\n".join(mm.message for mm in mismatches[:3]))


def _pad_batch(batch: Mapping[str, Any], extra: int, side: str, pad_value: int) -> dict[str, Any]:
    mask = _mask(batch)
    n, length = mask.shape
    out = {}
    for key, value in batch.items():
        if isinstance(value, torch.Tensor) and value.dim() >= 2 and tuple(value.shape[:2]) == (n, length):
            fill = pad_value if key == IDS_KEY else 0
            pad = torch.full((n, extra, *value.shape[2:]), fill, dtype=value.dtype, device=value.device)
            out[key] = torch.cat([value, pad] if side == "right" else [pad, value], dim=1)
        else:
            out[key] = value
    return out


def _check_padding_args(batch: Any, extra: int, side: str, fn: str) -> None:
    if not isinstance(batch, Mapping) or _mask(batch) is None:
        raise TypeError(f"{fn}: batch must be a dict holding {MASK_KEY!r} (and e.g. {IDS_KEY!r}), "
                        f"got {type(batch).__name__}" + (f" with keys {list(batch)}" if isinstance(batch, Mapping) else ""))
    if side not in ("left", "right"):
        raise ValueError(f"{fn}: side must be 'left' or 'right', got {side!r}")
    if extra < 1:
        raise ValueError(f"{fn}: extra must be >= 1, got {extra}")


def assert_padding_invariant(model: Callable, batch: Mapping[str, Any], extra: int = 4, side: str = "right",
                             pad_value: int = 0, rtol: float | None = None, atol: float | None = None) -> None:
    """Padding every sequence with ``extra`` masked positions (``attention_mask`` 0, ``input_ids``
    ``pad_value``) on ``side`` leaves the outputs on the real tokens unchanged."""
    _check_padding_args(batch, extra, side, "assert_padding_invariant")
    mask = _mask(batch)
    padded = _pad_batch(batch, extra, side, pad_value)
    length = mask.shape[1]
    window = slice(0, length) if side == "right" else slice(extra, extra + length)
    expected = _real_tokens(_run(model, batch), mask)
    actual = _real_tokens(_run(model, padded), mask, padded=(length + extra, window))
    _verdict(f"{_name(model)} is not padding invariant:", actual, expected, rtol, atol,
             f"{extra} padding position(s) on the {side} change the outputs on real tokens")


def assert_mask_invariant(model: Callable, batch: Mapping[str, Any], vocab_size: int | None = None, seed: int = 0,
                          extra: int = 4, rtol: float | None = None, atol: float | None = None) -> None:
    """Changing what sits under masked positions (``attention_mask == 0``) leaves the outputs on
    the real tokens unchanged. Token ids are redrawn in ``[0, vocab_size)`` (default: up to the
    largest id present), float inputs redrawn from a normal law (seeded by ``seed``). A batch
    without masked positions is first padded with ``extra`` on the right."""
    _check_padding_args(batch, extra, "right", "assert_mask_invariant")
    mask = _mask(batch)
    if bool(mask.to(torch.bool).all()):
        batch = _pad_batch(batch, extra, "right", 0)
        mask = _mask(batch)
    n, length = mask.shape
    hidden = ~mask.to(torch.bool)
    gen = torch.Generator().manual_seed(seed)
    changed = {}
    for key, value in batch.items():
        if key == MASK_KEY or not (isinstance(value, torch.Tensor) and value.dim() >= 2
                                   and tuple(value.shape[:2]) == (n, length)):
            changed[key] = value
            continue
        new = value.clone()
        sel = hidden.to(value.device)
        if value.is_floating_point():
            noise = torch.randn(value.shape, generator=gen).to(value.dtype).to(value.device)
            new[sel] = noise[sel]
        elif value.dtype != torch.bool:
            vocab = vocab_size if vocab_size is not None else int(value.max()) + 1
            if vocab > 1:  # shift every hidden id by a random non-zero amount modulo vocab
                shift = torch.randint(1, vocab, value.shape, generator=gen).to(value.device)
                new[sel] = ((value + shift) % vocab).to(value.dtype)[sel]
        changed[key] = new
    expected = _real_tokens(_run(model, batch), mask)
    actual = _real_tokens(_run(model, changed), mask)
    _verdict(f"{_name(model)} is not mask invariant:", actual, expected, rtol, atol,
             f"changing the {int(hidden.sum())} masked position(s) changes the outputs on real tokens")


# --------------------------------------------------------------------------------------
# Permutations
# --------------------------------------------------------------------------------------


def _permutation(size: int, seed: int) -> torch.Tensor:
    if size < 2:
        raise ValueError(f"cannot permute a dimension of size {size}: give at least 2 elements")
    gen = torch.Generator().manual_seed(seed)
    while True:
        perm = torch.randperm(size, generator=gen)
        if not torch.equal(perm, torch.arange(size)):
            return perm


def _permute(obj: Any, dim: int, size: int, perm: torch.Tensor) -> Any:
    def apply(t: torch.Tensor) -> torch.Tensor:
        d = dim if dim >= 0 else t.dim() + dim
        if 0 <= d < t.dim() and t.shape[d] == size:
            return t.index_select(d, perm.to(t.device))
        return t

    return map_tensors(apply, obj)


def _dim_size(x: Any, dim: int, fn: str) -> int:
    sizes = set()
    for _, t in iter_tensors(x):
        d = dim if dim >= 0 else t.dim() + dim
        if 0 <= d < t.dim():
            sizes.add(t.shape[d])
    if len(sizes) != 1:
        raise ValueError(f"{fn}: the inputs do not agree on the size of dimension {dim} (sizes {sorted(sizes)})")
    return sizes.pop()


def assert_permutation_invariant(model: Callable, x: Any, dim: int = 1, seed: int = 0,
                                 rtol: float | None = None, atol: float | None = None) -> None:
    """Shuffling the inputs along ``dim`` (a seeded, non-identity permutation) leaves the outputs
    unchanged (set functions, pooling over a set)."""
    size = _dim_size(x, dim, "assert_permutation_invariant")
    perm = _permutation(size, seed)
    expected = _run(model, x)
    actual = _run(model, _permute(x, dim, size, perm))
    _verdict(f"{_name(model)} is not permutation invariant along dim {dim}:", actual, expected, rtol, atol,
             f"(permutation {perm.tolist()}, seed {seed})")


def assert_permutation_equivariant(model: Callable, x: Any, dim: int = 1, out_dim: int | None = None,
                                   seed: int = 0, rtol: float | None = None, atol: float | None = None) -> None:
    """Shuffling the inputs along ``dim`` shuffles the outputs the same way along ``out_dim``
    (default ``dim``): ``model(P x) == P model(x)``."""
    size = _dim_size(x, dim, "assert_permutation_equivariant")
    perm = _permutation(size, seed)
    expected = _permute(_run(model, x), dim if out_dim is None else out_dim, size, perm)
    actual = _run(model, _permute(x, dim, size, perm))
    _verdict(f"{_name(model)} is not permutation equivariant along dim {dim}:", actual, expected, rtol, atol,
             f"(permutation {perm.tolist()}, seed {seed})")


# --------------------------------------------------------------------------------------
# Any transformation
# --------------------------------------------------------------------------------------


def assert_invariant(model: Callable, x: Any, transform: Callable[[Any], Any], name: str | None = None,
                     rtol: float | None = None, atol: float | None = None) -> None:
    """``model(transform(x)) == model(x)``; ``name`` names the transformation in the message."""
    label = name or getattr(transform, "__name__", "transform")
    expected = _run(model, x)
    actual = _run(model, transform(clone_tensors(x)))
    _verdict(f"{_name(model)} is not invariant to {label}:", actual, expected, rtol, atol)


def assert_equivariant(model: Callable, x: Any, transform: Callable[[Any], Any],
                       output_transform: Callable[[Any], Any] | None = None, name: str | None = None,
                       rtol: float | None = None, atol: float | None = None) -> None:
    """``model(transform(x)) == output_transform(model(x))`` (``output_transform`` defaults to
    ``transform``)."""
    label = name or getattr(transform, "__name__", "transform")
    out_t = transform if output_transform is None else output_transform
    expected = out_t(_run(model, x))
    actual = _run(model, transform(clone_tensors(x)))
    _verdict(f"{_name(model)} is not equivariant to {label}:", actual, expected, rtol, atol)
