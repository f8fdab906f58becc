"""One small torch module per operator under test, one file each.

Each module takes the torch keywords that :data:`interop.cases.attributes.SUPPORTED_ATTRS` maps the
Aidge attributes of its JSON configuration onto (``kernel_size``, ``dim``, ``keepdim``...),
plus the shape-derived keywords its ``specs_to_kwargs`` function (in the same file) computes
from the input specs. The catalog (:mod:`interop.cases.catalog`) refers to them by
``"module:Class"`` strings, so importing the catalog never imports torch.
"""
