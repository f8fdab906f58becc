"""Data of the export_cpp rows of the expected-failure table (:mod:`interop.cases.expected_failures`
builds them into :class:`~interop.cases.expected_failures.ExpectedFailure` entries with
``backend="export_cpp"``): one keyword dict per reason (``operator``, ``phase``, ``category``,
``error``, ``cases``, ``kind``, ``note``).

Backend export_cpp (Aidge's generated C++, aidge-export-cpp 0.10.1), layout mode "torch" (the
policy; docs/aidge-notes.md, "C++ export", has both modes per operator). Generation errors are
phase compile (the bridge's "aidge-export-cpp generation failed: <the export's message>"); a
silent mismatch quotes the comparator. Measured on 2 cores, every case of the suites.
"""
_GEN = "aidge-export-cpp generation failed: "


def _export(operator: str, category: str, error: str, *cases: str, phase: str = "compile", kind: str = "operator",
            note: str = "") -> dict:
    return dict(operator=operator, phase=phase, category=category, error=error, cases=cases, kind=kind, note=note)


_MISMATCH = "Tensors are not close at output!"
EXPORT_CPP_FAILURES: tuple[dict, ...] = (
    _export("any 5-D input", "compile_error", _GEN + "list index out of range",
            *[f"{op}:*rank_5" for op in ("ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "SiLU", "Hardswish",
                                         "Hardsigmoid", "Softplus", "Sqrt", "Exp", "Log", "Abs", "Neg", "Erf",
                                         "Reciprocal")],
            note="adapt_input_dformats (aidge_core.export_utils.deploy_utils) picks the input layout from a "
                 "4-entry list indexed by rank - 1: a 5-D input has none. The message names no operator."),
    *[_export(op, "compile_error", _GEN + "Graphs with more than 1 mandatory input are not supported yet",
              *cases, note="model_forward takes one input: every two-input operator case stops here.")
      for op, cases in (("Add", ("Add:*",)), ("Sub", ("Sub:*",)), ("Mul", ("Mul:*",)), ("Div", ("Div:*",)),
                        ("Pow", ("Pow:broadcast_*",)), ("MatMul", ("MatMul:*",)), ("Concat", ("Concat:*",)),
                        ("Where", ("Where:*",)))],
    *[_export(op, "forward_not_implemented", _GEN + "No implementation found for node", *cases, note=note)
      for op, cases, note in (
          ("LogSoftmax", ("LogSoftmax:*",), "No export kernel for LogSoftmax."),
          ("Exp", ("Exp:rank_[1-4]*", "Softplus:attributes_*", "Softplus:inputs_rank_[23]"), "No export kernel for Exp; Aidge's Softplus is a meta-operator "
                                           "expanded into Exp + ..., which stops at the same node."),
          ("Flatten", ("Flatten:start_dim_1_*",), "Flatten(start_dim=1) stays a Flatten node, which has no export "
                                                 "kernel."))],
    _export("Pad", "forward_not_implemented", _GEN + "missing or invalid registrar key", "Pad:*",
            note="F.pad exports its pads as a Shape/ConstantOfShape/Mul... subgraph on int64; the export's "
                 "constant folding runs it on the cpu backend, which has no int64 Mul kernel."),
    _export("Slice", "compile_error", _GEN + "Slice_Op: Step ([0]) must have a non-zero value on axis 0!", "Slice:*",
            note="The Slice's starts/ends/axes/steps come from Unsqueeze'd constants; generation reads a zero step."),
    _export("Resize", "compile_error", _GEN + "Resize: All scale values must be strictly positive (got 0).",
            "Resize:*", note="F.interpolate's output size is computed by Shape/Slice/Concat; the export reads 0 scales."),
    _export("Reshape", "compile_error", _GEN + "Reshape: output size (48) does not match input size (384).",
            "Reshape:attributes_zero_copies_dims", "Flatten:*start_dim_2_rank_4",
            note="A Reshape whose shape holds 0 (copy the input's dim) or is computed: the export sizes it wrong."),
    _export("Slice", "compile_error", _GEN + "Cannot generate memory with token-based producer-consumer model",
            "Flatten:start_dim_0_rank_4", "ConvDepthwise2D:channel_multiplier_*",
            note="The export's memory planner rejects the node (a Slice of torch.flatten(x, 0); the channel-"
                 "multiplier depthwise convolution, which the cpu backend rejects at compile too)."),
    # -- silent mismatches: the export runs and returns other values ---------------------------------
    _export("MaxPooling2D", "outputs_differ", _MISMATCH, "MaxPool2D:dilation_2*", phase="forward",
            note="Dilation is ignored (the result equals a dilation-1 pooling's)."),
    _export("AvgPooling2D", "outputs_differ", _MISMATCH, "AvgPool2D:*count_exclude_pad", "AvgPool2D:ceil_mode_*",
            phase="forward", note="Padded average pooling divides by the full window (count_include_pad) and "
                                  "ceil_mode windows are wrong at the border."),
    _export("GlobalAveragePooling", "outputs_differ", _MISMATCH, "GlobalAveragePool:non_square_5x7", phase="forward",
            note="Square spatial inputs match; a 5x7 one does not."),
    _export("Clip", "outputs_differ", _MISMATCH, "Clip:*", "Hardtanh:*", phase="forward",
            note="torch.clamp / Hardtanh export min and max as inputs (Constant -> Cast); the export's Clip "
                 "ignores them and returns its input unclipped (measured: -3.54 where torch gives -0.5)."),
    _export("Reshape", "outputs_differ", _MISMATCH, "Transformer:eval", phase="forward", kind="model",
            note="Every element differs (max 0.26). Localised by exporting parts of the block: q_proj and norm1 "
                 "match; x.reshape(n, s, heads, head_dim) (its shape computed from x.shape) comes out of the "
                 "export as [4, 16, 8, 1] instead of [4, 2, 8, 8], so the attention runs on wrong heads. As an "
                 "output the bridge refuses those dims; inside the graph nothing notices."),
)
