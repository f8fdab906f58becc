"""interop.diagnostics.invariance: each assertion fails on a model built to violate it and passes on a
well-behaved one; dict batches compare sequence-aligned outputs on real tokens only."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from interop.diagnostics.invariance import (
    InvarianceError,
    assert_batch_invariant,
    assert_equivariant,
    assert_invariant,
    assert_mask_invariant,
    assert_padding_invariant,
    assert_permutation_equivariant,
    assert_permutation_invariant,
)

GEN = torch.Generator().manual_seed(0)
VOCAB, HIDDEN = 11, 6


def seeded(factory):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return factory().eval()


class TinyEncoder(nn.Module):
    """Token embedding -> per-token MLP; a pooled output averaged over real tokens.

    ``respect_mask=False`` pools over every position, padding included (a classic bug); the
    per-token output is garbage-free either way, but padded positions still get values.
    """

    def __init__(self, respect_mask: bool = True):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.mlp = nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.Tanh())
        self.respect_mask = respect_mask

    def forward(self, input_ids, attention_mask):
        h = self.mlp(self.embed(input_ids))  # (N, L, H): sequence-aligned
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        if self.respect_mask:
            pooled = (h * m).sum(1) / m.sum(1)
        else:
            pooled = h.mean(1)
        return {"tokens": h, "pooled": pooled}


class MixesTokens(TinyEncoder):
    """Each real token attends to every position, padding included (the mask is ignored)."""

    def forward(self, input_ids, attention_mask):
        h = self.mlp(self.embed(input_ids))
        return {"tokens": h + h.mean(1, keepdim=True), "pooled": h.mean(1)}


def token_batch(n=3, length=5, pad_last=(0, 2, 1)):
    ids = torch.randint(1, VOCAB, (n, length), generator=GEN)
    mask = torch.ones(n, length, dtype=torch.long)
    for i, k in enumerate(pad_last[:n]):
        if k:
            mask[i, -k:] = 0
            ids[i, -k:] = 0
    return {"input_ids": ids, "attention_mask": mask}


# --------------------------------------------------------------------------------------
# batch
# --------------------------------------------------------------------------------------


def test_batch_invariant():
    assert_batch_invariant(seeded(lambda: nn.Linear(4, 3)), torch.randn(5, 4, generator=GEN))

    class Mixes(nn.Module):
        def forward(self, x):
            return x - x.mean(0)

    with pytest.raises(InvarianceError, match=r"not batch invariant: \d+ of 5 samples"):
        assert_batch_invariant(Mixes(), torch.randn(5, 4, generator=GEN))


def test_batch_invariant_dict_batch():
    assert_batch_invariant(seeded(TinyEncoder), token_batch())


# --------------------------------------------------------------------------------------
# padding and mask
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("side", ["right", "left"])
def test_padding_invariant(side):
    batch = token_batch()
    # per-token outputs at padded positions are not zero, yet the check passes: real tokens only
    assert_padding_invariant(seeded(TinyEncoder), batch, extra=4, side=side)
    with pytest.raises(InvarianceError, match=f"4 padding position\\(s\\) on the {side}"):
        assert_padding_invariant(seeded(lambda: TinyEncoder(respect_mask=False)), batch, extra=4, side=side)


def test_padding_invariant_reports_the_output():
    with pytest.raises(InvarianceError) as info:
        assert_padding_invariant(seeded(MixesTokens), token_batch(), extra=2)
    assert "output['tokens']" in str(info.value) and "output['pooled']" in str(info.value)


def test_padding_invariant_needs_a_mask():
    with pytest.raises(TypeError, match="attention_mask"):
        assert_padding_invariant(seeded(TinyEncoder), {"input_ids": torch.zeros(2, 3, dtype=torch.long)})
    with pytest.raises(ValueError, match="side"):
        assert_padding_invariant(seeded(TinyEncoder), token_batch(), side="middle")


def test_mask_invariant():
    batch = token_batch()
    assert_mask_invariant(seeded(TinyEncoder), batch)
    with pytest.raises(InvarianceError, match="not mask invariant: changing the 3 masked position"):
        assert_mask_invariant(seeded(MixesTokens), batch)


def test_mask_invariant_pads_a_batch_without_masked_positions():
    batch = token_batch(pad_last=(0, 0, 0))
    assert_mask_invariant(seeded(TinyEncoder), batch)
    with pytest.raises(InvarianceError, match="changing the 12 masked position"):  # 3 samples x 4 padded
        assert_mask_invariant(seeded(MixesTokens), batch, extra=4)


# --------------------------------------------------------------------------------------
# permutations
# --------------------------------------------------------------------------------------


class DeepSet(nn.Module):
    def __init__(self, pool=True):
        super().__init__()
        self.phi = nn.Linear(3, 4)
        self.pool = pool

    def forward(self, x):  # (N, set, 3)
        h = torch.relu(self.phi(x))
        return h.sum(1) if self.pool else h


class Ordered(nn.Module):
    def forward(self, x):
        return x.cumsum(1)


def test_permutation_invariant():
    x = torch.randn(2, 6, 3, generator=GEN)
    assert_permutation_invariant(seeded(DeepSet), x, dim=1)
    with pytest.raises(InvarianceError, match="not permutation invariant along dim 1"):
        assert_permutation_invariant(Ordered(), x, dim=1)


def test_permutation_equivariant():
    x = torch.randn(2, 6, 3, generator=GEN)
    assert_permutation_equivariant(seeded(lambda: DeepSet(pool=False)), x, dim=1)
    with pytest.raises(InvarianceError, match="not permutation equivariant"):
        assert_permutation_equivariant(Ordered(), x, dim=1)


def test_permutation_needs_two_elements():
    with pytest.raises(ValueError, match="at least 2"):
        assert_permutation_invariant(seeded(DeepSet), torch.randn(2, 1, 3), dim=1)


# --------------------------------------------------------------------------------------
# any transformation
# --------------------------------------------------------------------------------------


def test_assert_invariant():
    x = torch.randn(4, 5, generator=GEN)
    assert_invariant(lambda t: t.abs(), x, lambda t: -t, name="negation")
    with pytest.raises(InvarianceError, match="not invariant to negation"):
        assert_invariant(torch.nn.ReLU(), x, lambda t: -t, name="negation")


def test_assert_equivariant():
    x = torch.randn(4, 5, generator=GEN)
    flip = lambda t: t.flip(1)  # noqa: E731
    assert_equivariant(torch.nn.Tanh(), x, flip, name="flip")
    with pytest.raises(InvarianceError, match="not equivariant to flip"):
        assert_equivariant(Ordered(), x.unsqueeze(0), flip, name="flip")
    # output_transform differs from the input transform: scaling in, scaling out for a linear map
    lin = seeded(lambda: nn.Linear(5, 3, bias=False))
    assert_equivariant(lin, x, lambda t: 2 * t, output_transform=lambda y: 2 * y, name="scaling")


def test_tolerances_go_through_the_comparator():
    x = torch.randn(4, 5, generator=GEN)
    noisy = lambda t: t * (1 + 1e-4)  # noqa: E731
    with pytest.raises(InvarianceError, match="Tolerance: rtol=1.3e-06"):
        assert_invariant(lambda t: t, x, noisy)
    assert_invariant(lambda t: t, x, noisy, rtol=1e-3)
