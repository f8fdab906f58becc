"""Architectures nobody here wrote: networks of public libraries (MONAI, Hugging Face
``transformers``) at tiny configurations with random weights, as a case source
(:data:`ARCHITECTURES`; ``tests/test_architectures.py``, ``benchmarks/architectures.py``,
the porting-readiness table of :mod:`interop.reporting.porting`).

Each entry builds its model from a configuration, never from downloaded weights (no
network access is needed or attempted; ``pretrained=False`` where there is such an option),
seeded inside :func:`torch.random.fork_rng` so the caller's RNG is left alone, with every
dropout probability the configuration exposes at 0 (a random mask is no computation two
frameworks can agree on). Sizes: 2-D inputs (32x32 images, batch 2; 8 tokens of a 64-word
vocabulary), hidden size 32, 2 heads, 1-2 layers or blocks; a forward takes milliseconds on
one CPU thread. Hugging Face models are called with ``return_dict=False`` (and
``use_cache=False`` for the decoders).

Three MONAI entries are larger than the rest, and two of them random in train mode, because
their classes allow nothing smaller (kept: the expected-failure table's rows are measured on
them):

- ``monai_SEResNet`` (10.8M parameters): ``SENet``'s stage widths (64 to 512 planes, times 4)
  are fixed;
- ``monai_VNet`` (9.4M): V-Net's widths (16 to 256 channels) are fixed, and its last two up
  transitions hold a ``Dropout(0.5)`` the constructor does not expose (train mode is random);
- ``monai_EfficientNetBN`` (4.0M): efficientnet-b0, the smallest, brings a 0.2 head dropout
  and a 0.2 drop-connect rate (train mode is random).

The libraries are imported when a model is built, never when this module is imported: the
list is cheap to read, and a missing library makes its entries fail loudly
(:class:`ArchitectureUnavailable`) rather than vanish.
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


def _tokens(batch: int = 2, length: int = 8, vocab: int = 64, mask: bool = False, decoder: bool = False):
    """Token ids (int64 in [0, vocab)), ``return_dict=False``; ``mask``: an attention mask whose
    last two positions of the second sequence are padding; ``decoder``: ``use_cache=False``."""
    def make():
        import torch

        ids = torch.randint(0, vocab, (batch, length))
        kwargs: dict = {"return_dict": False}
        if mask:
            attention = torch.ones(batch, length, dtype=torch.int64)
            attention[-1, -2:] = 0
            kwargs["attention_mask"] = attention
        if decoder:
            kwargs["use_cache"] = False
        return (ids,), kwargs
    return make


def _pixels(batch: int = 2, channels: int = 3, size: int = 32):
    """Images as Hugging Face vision models take them: ``pixel_values``, ``return_dict=False``."""
    def make():
        import torch

        return (torch.randn(batch, channels, size, size),), {"return_dict": False}
    return make


def _monai(name: str, **kwargs):
    """A factory of ``monai.networks.nets.<name>(**kwargs)``."""
    def make():
        import monai.networks.nets as nets

        return getattr(nets, name)(**kwargs)
    make.__name__ = f"monai_{name}"
    return make


def _hf(model: str, config: str, **kwargs):
    """A factory of ``transformers.<model>(transformers.<config>(**kwargs))``, dropouts at 0."""
    def make():
        import transformers

        cfg = getattr(transformers, config)(**kwargs)
        for key in list(vars(cfg)):
            if ("dropout" in key or key.endswith("_pdrop") or key == "drop_path_rate") and \
                    isinstance(getattr(cfg, key), float):
                setattr(cfg, key, 0.0)
        return getattr(transformers, model)(cfg)
    make.__name__ = f"transformers_{model}"
    return make


#: a tiny text transformer's sizes (vocabulary 64, hidden 32, 2 heads, 2 layers)
_TEXT = dict(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
             max_position_embeddings=32)
#: a tiny vision transformer's sizes (32x32 RGB images, 8x8 patches)
_VISION = dict(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
               num_attention_heads=2, intermediate_size=64)
_UNET = dict(spatial_dims=2, in_channels=1, out_channels=2, channels=(4, 8, 16), strides=(2, 2), num_res_units=1)

M, T = "monai", "transformers"

#: the curated list (see the module docstring)
ARCHITECTURES: list[Architecture] = [
    # --- MONAI: encoders / classifiers ---------------------------------------------------------
    Architecture("monai_DenseNet121", M, "encoder (CNN, dense connections)",
                 _monai("DenseNet121", spatial_dims=2, in_channels=1, out_channels=3, init_features=8, growth_rate=4,
                        block_config=(2, 2, 2, 2)), _image(2, 1, 32, 32)),
    Architecture("monai_ResNet10", M, "encoder (CNN, residual)",
                 _monai("ResNet", block="basic", layers=(1, 1, 1, 1), block_inplanes=(4, 8, 16, 32), spatial_dims=2,
                        n_input_channels=1, num_classes=3), _image(2, 1, 32, 32)),
    Architecture("monai_SEResNet", M, "encoder (CNN, squeeze-and-excitation)",
                 _monai("SENet", spatial_dims=2, in_channels=1, block="se_resnet_bottleneck", layers=(1, 1, 1, 1),
                        groups=1, reduction=4, dropout_prob=None, inplanes=8, downsample_kernel_size=1,
                        input_3x3=False, num_classes=3), _image(2, 1, 32, 32),
                 note="SENet's fixed stage widths (10.8M parameters): the smallest SENet MONAI offers"),
    Architecture("monai_EfficientNetBN", M, "encoder (CNN, depthwise, swish)",
                 _monai("EfficientNetBN", model_name="efficientnet-b0", pretrained=False, spatial_dims=2,
                        in_channels=1, num_classes=3), _image(2, 1, 32, 32),
                 note="efficientnet-b0's full width (4.0M parameters), its 0.2 head dropout and 0.2 drop-connect "
                      "(random in train mode): the smallest configuration MONAI offers"),
    Architecture("monai_Classifier", M, "encoder (CNN, strided residual units)",
                 _monai("Classifier", in_shape=(1, 32, 32), classes=3, channels=(4, 8, 16), strides=(2, 2, 2)),
                 _image(2, 1, 32, 32)),
    Architecture("monai_Regressor", M, "encoder (CNN, regression head)",
                 _monai("Regressor", in_shape=(1, 32, 32), out_shape=(2,), channels=(4, 8, 16), strides=(2, 2, 2)),
                 _image(2, 1, 32, 32)),
    # --- MONAI: decoders with skip connections ---------------------------------------------------
    Architecture("monai_UNet", M, "decoder with skip connections (residual units, PReLU)",
                 _monai("UNet", **_UNET), _image(2, 1, 32, 32)),
    Architecture("monai_UNet_batchnorm", M, "normalisation variant (UNet, BatchNorm)",
                 _monai("UNet", **_UNET, norm="batch"), _image(2, 1, 32, 32)),
    Architecture("monai_UNet_relu_groupnorm", M, "normalisation variant (UNet, GroupNorm, ReLU)",
                 _monai("UNet", **_UNET, norm=("group", {"num_groups": 2}), act="relu"), _image(2, 1, 32, 32)),
    Architecture("monai_BasicUNet", M, "decoder with skip connections (basic blocks)",
                 _monai("BasicUNet", spatial_dims=2, in_channels=1, out_channels=2, features=(4, 4, 8, 8, 16, 4)),
                 _image(2, 1, 32, 32)),
    Architecture("monai_AttentionUnet", M, "decoder with skip connections (attention gates)",
                 _monai("AttentionUnet", spatial_dims=2, in_channels=1, out_channels=2, channels=(4, 8, 16),
                        strides=(2, 2)), _image(2, 1, 32, 32)),
    Architecture("monai_SegResNet", M, "decoder with skip connections (GroupNorm residual)",
                 _monai("SegResNet", spatial_dims=2, init_filters=4, in_channels=1, out_channels=2,
                        blocks_down=(1, 1, 1), blocks_up=(1, 1), norm=("group", {"num_groups": 2})),
                 _image(2, 1, 32, 32)),
    Architecture("monai_SegResNet_instancenorm", M, "normalisation variant (SegResNet, InstanceNorm)",
                 _monai("SegResNet", spatial_dims=2, init_filters=4, in_channels=1, out_channels=2,
                        blocks_down=(1, 1, 1), blocks_up=(1, 1), norm="instance"), _image(2, 1, 32, 32)),
    Architecture("monai_DynUNet", M, "decoder with skip connections (nnU-Net style)",
                 _monai("DynUNet", spatial_dims=2, in_channels=1, out_channels=2, kernel_size=(3, 3, 3),
                        strides=(1, 2, 2), upsample_kernel_size=(2, 2), filters=(4, 8, 16)), _image(2, 1, 32, 32)),
    Architecture("monai_VNet", M, "decoder with skip connections (V-Net, ELU)",
                 _monai("VNet", spatial_dims=2, in_channels=1, out_channels=2, dropout_prob_down=0.0,
                        dropout_prob_up=(0.0, 0.0)), _image(2, 1, 32, 32),
                 note="V-Net's fixed widths (16 to 256 channels, 9.4M parameters); up_tr64 and up_tr32 keep a "
                      "Dropout(0.5) VNet does not expose (random in train mode)"),
    Architecture("monai_HighResNet", M, "dilated residual network",
                 _monai("HighResNet", spatial_dims=2, in_channels=1, out_channels=2,
                        layer_params=({"name": "conv_0", "n_features": 4, "kernel_size": 3},
                                      {"name": "res_1", "n_features": 4, "kernels": (3, 3), "repeat": 1},
                                      {"name": "res_2", "n_features": 8, "kernels": (3, 3), "repeat": 1},
                                      {"name": "conv_1", "n_features": 8, "kernel_size": 1},
                                      {"name": "conv_2", "kernel_size": 1})), _image(2, 1, 32, 32)),
    Architecture("monai_AutoEncoder", M, "autoencoder",
                 _monai("AutoEncoder", spatial_dims=2, in_channels=1, out_channels=1, channels=(4, 8), strides=(2, 2)),
                 _image(2, 1, 32, 32)),
    # --- MONAI: attention ------------------------------------------------------------------------
    Architecture("monai_ViT", M, "attention (vision transformer)",
                 _monai("ViT", in_channels=1, img_size=(32, 32), patch_size=(8, 8), hidden_size=32, mlp_dim=64,
                        num_layers=2, num_heads=2, spatial_dims=2, classification=True, num_classes=3),
                 _image(2, 1, 32, 32)),
    Architecture("monai_UNETR", M, "attention encoder, convolutional decoder",
                 _monai("UNETR", in_channels=1, out_channels=2, img_size=(32, 32), feature_size=4, hidden_size=32,
                        mlp_dim=64, num_heads=2, spatial_dims=2), _image(2, 1, 32, 32)),
    # --- transformers: text encoders ---------------------------------------------------------
    Architecture("transformers_BertModel", T, "attention (encoder)", _hf("BertModel", "BertConfig", **_TEXT),
                 _tokens()),
    Architecture("transformers_BertModel_mask", T, "attention (encoder, with an attention mask)",
                 _hf("BertModel", "BertConfig", **_TEXT), _tokens(mask=True)),
    Architecture("transformers_DistilBertModel", T, "attention (encoder, distilled)",
                 _hf("DistilBertModel", "DistilBertConfig", vocab_size=64, dim=32, n_layers=2, n_heads=2,
                     hidden_dim=64, max_position_embeddings=32), _tokens()),
    Architecture("transformers_RobertaModel", T, "attention (encoder)",
                 _hf("RobertaModel", "RobertaConfig", **dict(_TEXT, max_position_embeddings=40)), _tokens()),
    Architecture("transformers_AlbertModel", T, "attention (encoder, shared layers)",
                 _hf("AlbertModel", "AlbertConfig", **_TEXT, embedding_size=16), _tokens()),
    Architecture("transformers_ElectraModel", T, "attention (encoder)",
                 _hf("ElectraModel", "ElectraConfig", **_TEXT, embedding_size=16), _tokens()),
    # --- transformers: text decoders ---------------------------------------------------------
    Architecture("transformers_GPT2Model", T, "attention (decoder, causal)",
                 _hf("GPT2Model", "GPT2Config", vocab_size=64, n_embd=32, n_layer=2, n_head=2, n_positions=32,
                     bos_token_id=0, eos_token_id=0),
                 _tokens(decoder=True)),
    Architecture("transformers_OPTModel", T, "attention (decoder, causal)",
                 _hf("OPTModel", "OPTConfig", vocab_size=64, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, ffn_dim=64, max_position_embeddings=32, word_embed_proj_dim=32),
                 _tokens(decoder=True)),
    Architecture("transformers_LlamaModel", T, "attention (decoder, RMSNorm, rotary)",
                 _hf("LlamaModel", "LlamaConfig", **_TEXT, num_key_value_heads=2), _tokens(decoder=True)),
    Architecture("transformers_Qwen2Model", T, "attention (decoder, RMSNorm, grouped-query)",
                 _hf("Qwen2Model", "Qwen2Config", **dict(_TEXT, num_attention_heads=4), num_key_value_heads=2),
                 _tokens(decoder=True)),
    Architecture("transformers_T5EncoderModel", T, "attention (encoder, relative positions, RMSNorm)",
                 _hf("T5EncoderModel", "T5Config", vocab_size=64, d_model=32, d_kv=16, d_ff=64, num_layers=2,
                     num_heads=2), _tokens()),
    # --- transformers: vision ----------------------------------------------------------------
    Architecture("transformers_ViTModel", T, "attention (vision transformer)", _hf("ViTModel", "ViTConfig", **_VISION),
                 _pixels()),
    Architecture("transformers_DeiTModel", T, "attention (vision transformer, distillation token)",
                 _hf("DeiTModel", "DeiTConfig", **_VISION), _pixels()),
    Architecture("transformers_SwinModel", T, "attention (shifted windows)",
                 _hf("SwinModel", "SwinConfig", image_size=32, patch_size=4, num_channels=3, embed_dim=16,
                     depths=(1, 1), num_heads=(2, 2), window_size=4), _pixels()),
    Architecture("transformers_SegformerModel", T, "attention (hierarchical, segmentation encoder)",
                 _hf("SegformerModel", "SegformerConfig", num_channels=3, num_encoder_blocks=2, depths=(1, 1),
                     sr_ratios=(2, 1), hidden_sizes=(8, 16), patch_sizes=(7, 3), strides=(4, 2),
                     num_attention_heads=(1, 2), mlp_ratios=(2, 2)), _pixels()),
    Architecture("transformers_CLIPVisionModel", T, "attention (vision transformer, pre-norm)",
                 _hf("CLIPVisionModel", "CLIPVisionConfig", **_VISION), _pixels()),
    Architecture("transformers_CLIPTextModel", T, "attention (text encoder, causal mask)",
                 _hf("CLIPTextModel", "CLIPTextConfig", vocab_size=64, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=32, bos_token_id=0,
                     eos_token_id=1, pad_token_id=1), _tokens()),
    Architecture("transformers_ConvNextModel", T, "encoder (CNN, LayerNorm, depthwise)",
                 _hf("ConvNextModel", "ConvNextConfig", num_channels=3, hidden_sizes=(8, 16), depths=(1, 1),
                     num_stages=2), _pixels()),
    Architecture("transformers_ResNetModel", T, "encoder (CNN, residual, BatchNorm)",
                 _hf("ResNetModel", "ResNetConfig", num_channels=3, embedding_size=8, hidden_sizes=(8, 16),
                     depths=(1, 1), layer_type="basic"), _pixels()),
    Architecture("transformers_MobileNetV2Model", T, "encoder (CNN, inverted residuals, ReLU6)",
                 _hf("MobileNetV2Model", "MobileNetV2Config", num_channels=3, image_size=32, depth_multiplier=0.25),
                 _pixels()),
    Architecture("transformers_RegNetModel", T, "encoder (CNN, grouped convolutions)",
                 _hf("RegNetModel", "RegNetConfig", num_channels=3, embedding_size=8, hidden_sizes=(8, 16),
                     depths=(1, 1), groups_width=4), _pixels()),
]


def architecture(name: str) -> Architecture:
    """The entry of :data:`ARCHITECTURES` called ``name`` (KeyError lists the known names)."""
    for arch in ARCHITECTURES:
        if arch.name == name:
            return arch
    raise KeyError(f"no architecture {name!r}; known: {[a.name for a in ARCHITECTURES]}")
