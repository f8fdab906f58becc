"""One small torch module per operator under test, one file each.

Each module takes the torch keywords that :data:`interop.cases.attributes.SUPPORTED_ATTRS` maps the
Aidge attributes of its JSON configuration onto (``kernel_size``, ``dim``, ``keepdim``...),
plus the shape-derived keywords its ``specs_to_kwargs`` function (in the same file) computes
from the input specs. The catalog (:mod:`interop.cases.catalog`) refers to them by
``"module:Class"`` strings, so importing the catalog never imports torch.
"""

#: the torch call each catalog operator's module makes, as a user writes it (what the records'
#: ``torch_op`` and the support matrix's rows name; each module's docstring says the same)
TORCH_OPS = {
    "Abs": "torch.abs", "Add": "torch.add (x + y)", "AvgPool2D": "torch.nn.AvgPool2d",
    "BatchNorm2D": "torch.nn.BatchNorm2d", "Clip": "torch.clamp", "Concat": "torch.cat", "Conv1D": "torch.nn.Conv1d",
    "Conv2D": "torch.nn.Conv2d", "ConvDepthwise2D": "torch.nn.Conv2d (groups=in_channels)",
    "ConvTranspose2D": "torch.nn.ConvTranspose2d", "Div": "torch.div (x / y)", "ELU": "torch.nn.ELU",
    "Embedding": "torch.nn.Embedding", "Erf": "torch.erf", "Exp": "torch.exp", "FC": "torch.nn.Linear",
    "Flatten": "torch.flatten", "Gather": "torch.index_select", "GELU": "torch.nn.GELU",
    "GlobalAveragePool": "torch.nn.AdaptiveAvgPool2d (1)", "GroupNorm": "torch.nn.GroupNorm",
    "Hardsigmoid": "torch.nn.functional.hardsigmoid", "Hardswish": "torch.nn.functional.hardswish",
    "Hardtanh": "torch.nn.Hardtanh", "InstanceNorm": "torch.nn.InstanceNorm2d", "LayerNorm": "torch.nn.LayerNorm",
    "LeakyReLU": "torch.nn.LeakyReLU", "Log": "torch.log", "LogSoftmax": "torch.log_softmax",
    "MatMul": "torch.matmul", "MaxPool2D": "torch.nn.MaxPool2d", "Mul": "torch.mul (x * y)", "Neg": "torch.neg",
    "Pad": "torch.nn.functional.pad", "Pow": "torch.pow (x ** y)", "Reciprocal": "torch.reciprocal",
    "ReduceMax": "torch.amax", "ReduceMean": "torch.mean", "ReduceMin": "torch.amin", "ReduceSum": "torch.sum",
    "ReLU": "torch.relu", "Reshape": "torch.Tensor.reshape", "Resize": "torch.nn.functional.interpolate",
    "ShiftGELU": "Aidge SDShiftGELU (no torch counterpart)", "ShiftMax": "Aidge SDShiftmax (no torch counterpart)",
    "Sigmoid": "torch.sigmoid", "SiLU": "torch.nn.functional.silu", "Slice": "torch.Tensor.__getitem__ (slice)",
    "Softmax": "torch.softmax", "Softplus": "torch.nn.Softplus", "Split": "torch.split", "Sqrt": "torch.sqrt",
    "Sub": "torch.sub (x - y)", "Tanh": "torch.tanh", "Transpose": "torch.Tensor.permute", "Where": "torch.where",
}
