"""Architectures nobody here wrote: networks of public libraries (MONAI, Hugging Face
``transformers``) at tiny configurations with random weights, as a case source
(:data:`ARCHITECTURES`; ``tests/test_architectures.py``, ``benchmarks/architectures.py``,
the porting-readiness table of :mod:`interop.reporting.porting`).

Each entry builds its model from a configuration, never from downloaded weights (no
network access is needed or attempted), seeded inside :func:`torch.random.fork_rng` so the
caller's RNG is left alone, with every dropout probability at 0 (a random mask is no
computation two frameworks can agree on). The libraries are imported when a model is built,
never when this module is imported: the list is cheap to read, and a missing library makes
its entries fail loudly (:class:`ArchitectureUnavailable`) rather than vanish.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

__all__ = ["Architecture", "ARCHITECTURES", "ArchitectureUnavailable", "architecture", "SEED"]

SEED = 0


class ArchitectureUnavailable(ImportError):
    """The library an architecture comes from cannot be imported (requirements/test.txt)."""


@dataclasses.dataclass(frozen=True)
class Architecture:
    """One architecture: ``build()`` returns a fresh model (train mode, seeded random weights),
    ``inputs()`` its example call ``(args, kwargs)``: tensors are the graph's inputs (token ids
    as int64), other values constants of the graph (``return_dict=False``)."""

    #: the id-safe name: ``<library>_<Class>[_<variant>]`` (``monai_DenseNet121``)
    name: str
    #: ``"monai"`` or ``"transformers"``
    library: str
    #: what kind of network it is (encoder, decoder with skip connections, attention...)
    family: str
    factory: Callable[[], Any]
    example: Callable[[], tuple[tuple, dict]]
    note: str = ""

    def build(self):
        """The model, seeded (the caller's RNG state is left as it was), in train mode."""
        import torch

        try:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(SEED)
                return self.factory()
        except ImportError as exc:
            raise ArchitectureUnavailable(f"architecture {self.name}: importing {self.library} failed ({exc}); it "
                                          f"is installed by requirements/test.txt") from exc

    def inputs(self) -> tuple[tuple, dict]:
        """``(args, kwargs)`` of the example call, seeded (the caller's RNG is left alone)."""
        import torch

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(SEED + 1)
            return self.example()


# ---------------------------------------------------------------------------------------------
def _image(*shape):
    def make():
        import torch

        return (torch.randn(*shape),), {}
    return make


def _tokens(batch: int = 2, length: int = 8, vocab: int = 64, mask: bool = False):
    def make():
        import torch

        ids = torch.randint(0, vocab, (batch, length))
        kwargs: dict = {"return_dict": False}
        if mask:
            kwargs["attention_mask"] = torch.ones(batch, length, dtype=torch.int64)
        return (ids,), kwargs
    return make


def _monai_densenet121():
    from monai.networks.nets import DenseNet121

    return DenseNet121(spatial_dims=2, in_channels=1, out_channels=3, init_features=8, growth_rate=4,
                       block_config=(2, 2, 2, 2))


def _hf_bert():
    from transformers import BertConfig, BertModel

    return BertModel(BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                intermediate_size=64, max_position_embeddings=32, hidden_dropout_prob=0.0,
                                attention_probs_dropout_prob=0.0))


#: the curated list (see the module docstring)
ARCHITECTURES: list[Architecture] = [
    Architecture("monai_DenseNet121", "monai", "encoder (CNN, dense connections)", _monai_densenet121,
                 _image(2, 1, 32, 32)),
    Architecture("transformers_BertModel", "transformers", "attention (encoder)", _hf_bert, _tokens()),
]


def architecture(name: str) -> Architecture:
    """The entry of :data:`ARCHITECTURES` called ``name`` (KeyError lists the known names)."""
    for arch in ARCHITECTURES:
        if arch.name == name:
            return arch
    raise KeyError(f"no architecture {name!r}; known: {[a.name for a in ARCHITECTURES]}")
