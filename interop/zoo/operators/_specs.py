"""Shape helpers shared by the ``specs_to_kwargs`` functions (torch-free).

A spec is ``{"name": ..., "shape": [...]}``; the helpers take the merged specs as
``specs_to_kwargs`` gets them (the documented list, or a dict by name); a ValueError names what
the operator cannot take.
"""
from __future__ import annotations

from collections.abc import Mapping


def by_name(specs: list[dict] | Mapping) -> dict:
    """The merged specs by name, from the documented list (a dict by name as is)."""
    return dict(specs) if isinstance(specs, Mapping) else {s["name"]: s for s in specs}


def shape(specs: list[dict] | Mapping, name: str) -> list[int]:
    specs = by_name(specs)
    if name not in specs:
        raise ValueError(f"input spec {name!r} is required")
    return list(specs[name]["shape"])


def data_shape(specs: list[dict] | Mapping, rank: int | None = None, name: str = "data_input") -> list[int]:
    s = shape(specs, name)
    if rank is not None and len(s) != rank:
        raise ValueError(f"{name} must have rank {rank}, got shape {s}")
    return s


def conv_kwargs(specs: list[dict] | Mapping, spatial: int, transposed: bool = False) -> dict:
    """in/out channels, groups and bias of a (transposed) convolution from the data,
    weight and optional bias specs; the weight shape must agree with the data shape."""
    specs = by_name(specs)
    x = data_shape(specs, spatial + 2)
    w = shape(specs, "weight")
    if len(w) != spatial + 2:
        raise ValueError(f"weight must have rank {spatial + 2}, got shape {w}")
    c_in = x[1]
    if transposed:
        # torch ConvTranspose weight: [in, out / groups, *kernel]
        if w[0] != c_in:
            raise ValueError(f"weight shape {w}: dimension 0 must equal the {c_in} input channels")
        groups = 1
        c_out = w[1]
    else:
        # torch Conv weight: [out, in / groups, *kernel]
        if c_in % w[1]:
            raise ValueError(f"weight shape {w}: {c_in} input channels are not a multiple of {w[1]}")
        groups = c_in // w[1]
        c_out = w[0]
        if c_out % groups:
            raise ValueError(f"weight shape {w}: {c_out} output channels are not a multiple of {groups} groups")
    kwargs = {"in_channels": c_in, "out_channels": c_out, "weight_kernel": tuple(w[2:])}
    if groups != 1:
        kwargs["groups"] = groups
    if "bias" in specs:
        b = shape(specs, "bias")
        if b != [c_out]:
            raise ValueError(f"bias shape {b} must be [{c_out}]")
        kwargs["bias"] = True
    else:
        kwargs["bias"] = False
    return kwargs


def channels(specs: list[dict] | Mapping, min_rank: int = 2) -> dict:
    x = data_shape(specs)
    if len(x) < min_rank:
        raise ValueError(f"data_input must have rank >= {min_rank}, got shape {x}")
    return {"num_features": x[1]}
