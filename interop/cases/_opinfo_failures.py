"""Data of the OpInfo rows of the expected-failure table (:mod:`interop.cases.expected_failures`
builds them into :class:`~interop.cases.expected_failures.ExpectedFailure` entries of kind ``opinfo``):
``(Aidge operator, phase, category, quoted error, attribution, cases)``, one row per reason, cases as
``"<OpInfo entry>:<sample label>"``. Triaged from a run of the first two samples of every entry
(``INTEROP_OPINFO_SAMPLES=2``, float32) with torch 2.13.0 and Aidge 0.10.1 CPU. The other dtypes'
rows: :mod:`interop.cases._opinfo_dtype_failures`."""

OPINFO_FAILURES = (
    ('Concat', 'forward', 'aidge_error', 'Every input must have the same DataFormat', 'aidge', (
        'roll:s1_5x5x5_0_0',)),
    ('Concat', 'forward', 'aidge_error', 'Number of elements to copy is above implementation current capacity (16B > 8B)', 'aidge', (
        'unflatten:s1_8_0_4_2',)),
    ('Concat', 'forward', 'aidge_error', 'Number of elements to copy is above implementation current capacity (8B > 0B)', 'aidge', (
        'unflatten:s0_8_0_8',)),
    ('DepthToSpace', 'forward', 'aidge_error', 'Cannot resize Tensor with shared storage', 'aidge', (
        'nn.functional.pixel_shuffle:s0_1x9x2x2_upscalefactor1',
        'nn.functional.pixel_shuffle:s1_1x9x2x2_upscalefactor3',)),
    ('Expand', 'forward', 'aidge_error', 'Expand: data input (#0) defines output shape. Must have only 1 dimension.', 'aidge', (
        'repeat:s0_0d',)),
    ('Producer', 'forward', 'aidge_error', 'map::at', 'aidge', (
        'full_like:s1_5x5_-1_76583', 'new_full:s1_5x5_2_0_4_31909', 'new_ones:s1_5x5_2_0', 'new_zeros:s1_5x5_2_0',
        'ones_like:s1_5x5', 'zero_:s1_5x5x5', 'zeros_like:s1_5x5',)),
    ('Reshape', 'forward', 'aidge_error', 'Number of elements to copy is above implementation current capacity (192B > 4B)', 'aidge', (
        'repeat_interleave:s1_2x3x4_repeats2',)),
    ('Reshape', 'forward', 'aidge_error', 'Number of elements to copy is above implementation current capacity (500B > 4B)', 'aidge', (
        'flatten:s0_5x5x5',)),
    ('Reshape', 'forward', 'aidge_error', 'Number of elements to copy is above implementation current capacity (8B > 4B)', 'aidge', (
        'repeat_interleave:s0_0d_repeats2',)),
    ('Shape', 'forward', 'aidge_error', "Shape_Op: 'start' attribute must be in", 'aidge', (
        'expand_as:s1_0d_0d', 'full_like:s0_0d_-8_47837', 'ones_like:s0_0d', 'zero_:s0_0d', 'zeros_like:s0_0d',)),
    ('Slice', 'forward', 'aidge_error', 'Step (-1) is negative, we must have End (', 'aidge', (
        'constant_pad_nd:s0_1x3x3_2_2', 'constant_pad_nd:s1_1x3_1_2_1',
        'nn.functional.multi_head_attention_forward:s0_3x2x2_3x2x2_3x2x2_2_2_6x2_6_2_2_False_0_5_2x2_2_qprojwe_84942353',
        'nn.functional.pad.constant:s0_1x3x3_2_2', 'nn.functional.pad.constant:s1_1x3_1_2_constant_1',
        'nn.functional.pad.reflect:s0_1x3_1_2_reflect', 'nn.functional.pad.reflect:s1_1x3_0_1_reflect',
        'nn.functional.pad.replicate:s0_1x3_1_2_replicate', 'nn.functional.pad.replicate:s1_1x3_0_1_replicate',
        'nn.functional.pad.replicate_negative:s0_5x3x4x4_-4_5_0_0_replicate',
        'nn.functional.pad.replicate_negative:s1_6x2x4x4_0_0_2_-4_replicate',)),
    ('Sub', 'backward', 'aidge_error', 'bad_function_call', 'aidge', (
        'nn.functional.max_pool1d:s0_1x2x3_kernelsize3_stride2_ceilmodeTrue_padding0_dilatio_20b76491',
        'nn.functional.max_pool2d:s0_1x2x3x6_kernelsize3_stride2_ceilmodeTrue_padding0_dilat_f6d8ff02',)),
    ('all', 'forward', 'aidge_error', 'Expected boolean data type for input#0, got float32.', 'aidge', (
        'all:s0_0d', 'all:s1_0d_dim0_keepdimTrue',)),
    ('bucketize', 'forward', 'aidge_error', "Shape_Op: 'start' attribute must be in", 'aidge', (
        'bucketize:s0_0d_5_outint32False_rightFalse', 'bucketize:s1_0d_5_outint32False_rightTrue',)),
    ('conj', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'conj:s1_1x0x3',)),
    ('cos', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'cos:s1_1x0x3',)),
    ('exp', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'exp:s1_1x0x3',)),
    ('index_copy', 'forward', 'aidge_error', "Shape_Op: 'start' attribute must be in", 'aidge', (
        'index_copy:s0_0d_0_int641_0d',)),
    ('index_fill', 'forward', 'aidge_error', "Shape_Op: 'start' attribute must be in", 'aidge', (
        'index_fill:s0_0d_0_int641_-8_47837', 'index_fill:s1_0d_0_int641_0d',)),
    ('linear', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'nn.functional.linear:s1_0x3_4x3_4',)),
    ('log', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'log:s1_1x0x3',)),
    ('log10', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'log10:s1_1x0x3',)),
    ('log2', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'log2:s1_1x0x3',)),
    ('logical_not', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'logical_not:s1_1x0x3',)),
    ('mm', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'mm:s1_0x5_5x10',)),
    ('nn.functional.glu', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'nn.functional.glu:s1_0x2_1',)),
    ('nn.functional.hardsigmoid', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'nn.functional.hardsigmoid:s1_1x0x3',)),
    ('nn.functional.logsigmoid', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'nn.functional.logsigmoid:s1_1x0x3',)),
    ('nn.functional.mish', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'nn.functional.mish:s1_1x0x3',)),
    ('nn.functional.mse_loss', 'forward', 'aidge_error', "Shape_Op: 'start' attribute must be in", 'aidge', (
        'nn.functional.mse_loss:s0_0d_0d',)),
    ('nn.functional.pad.circular', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'nn.functional.pad.circular:s0_0x3x3_1_2_circular', 'nn.functional.pad.circular:s1_0x3x3_0_1_circular',)),
    ('nn.functional.relu6', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'nn.functional.relu6:s1_1x0x3',)),
    ('nn.functional.silu', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'nn.functional.silu:s1_1x0x3',)),
    ('nn.functional.softplus', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'nn.functional.softplus:s1_1x0x3_beta3_threshold0_2',)),
    ('nn.functional.softsign', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'nn.functional.softsign:s1_1x0x3',)),
    ('nn.functional.tanhshrink', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'nn.functional.tanhshrink:s1_1x0x3',)),
    ('reciprocal', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'reciprocal:s1_1x0x3',)),
    ('roll', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'roll:s0_0x0x0_0_0',)),
    ('round.decimals_0', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'round.decimals_0:s1_1x0x3_decimals0',)),
    ('round.decimals_3', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'round.decimals_3:s1_1x0x3_decimals3',)),
    ('round.decimals_neg_3', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'round.decimals_neg_3:s1_1x0x3_decimals-3',)),
    ('rsqrt', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'rsqrt:s1_1x0x3',)),
    ('sigmoid', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'sigmoid:s1_1x0x3',)),
    ('square', 'forward', 'aidge_error', 'Aidge does not compute on empty tensors', 'aidge', (
        'square:s1_1x0x3',)),
    ('Abs', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Abs_Op on backend cpu', 'aidge', (
        'abs:s0_20x20', 'nn.functional.softsign:s0_20',)),
    ('ArgMax', 'backward', 'backward_not_implemented', 'Backward not yet implemented for ArgMax_Op on backend cpu || Backward not yet implemented for ReduceMax_Op on backend cpu', 'aidge', (
        'max.reduction_with_dim:s0_5x5x5_1', 'max.reduction_with_dim:s1_5x5x5_1_True',)),
    ('AvgPooling1D', 'backward', 'backward_not_implemented', 'Backward not yet implemented for AvgPooling_Op<1> on backend cpu', 'aidge', (
        'nn.functional.avg_pool1d:s0_2x3x9_3',)),
    ('BatchNorm2D', 'backward', 'backward_not_implemented', 'Backward not yet implemented for BatchNorm_Op<2> on backend cpu', 'aidge', (
        'nn.functional.batch_norm:s1_3x2x4_2_2_2_2_trainingFalse_momentum-1_2',)),
    ('Cast', 'backward', 'backward_not_implemented', 'backward() not implemented yet for operator of type Cast', 'aidge', (
        'clamp:s0_5x10x5_5x10x5_5x10x5', 'clamp:s1_5x10x5_10x5_10x5', 'clamp_max:s0_0d_0d', 'clamp_max:s1_5_0d',
        'clamp_min:s0_0d_0d', 'clamp_min:s1_5_0d', 'div.trunc_rounding:s0_0d_0d_roundingmodetrunc',
        'div.trunc_rounding:s1_5_0d_roundingmodetrunc', 'double:s0_0d',
        'double:s1_0d_memoryformattorch_contiguousformat', 'float:s0_0d',
        'float:s1_0d_memoryformattorch_contiguousformat', 'half:s0_0d',
        'half:s1_0d_memoryformattorch_contiguousformat', 'log_softmax.with_dtype:s0_5_0_dtypefloat64',
        'masked.log_softmax:s0_5_0_maskNone', 'masked.log_softmax:s1_5_0_maskbool5', 'masked.prod:s0_0d_maskNone',
        'masked.softmax:s0_5_0_maskNone', 'masked.softmax:s1_5_0_maskbool5', 'masked.softmin:s0_5_0_maskNone',
        'masked.softmin:s1_5_0_maskbool5', 'masked_fill:s0_5x5_bool5x5_10', 'masked_fill:s1_5x5_bool5x5_0d',
        'nn.functional.gaussian_nll_loss:s0_5_5_5_reductionnone',
        'nn.functional.gaussian_nll_loss:s1_5_5_5_fullTrue_reductionnone', 'nn.functional.relu6:s0_20',
        'nn.functional.softmin.with_dtype:s0_5_0_dtypefloat64',
        'nn.functional.softmin.with_dtype:s1_5x5_0_dtypefloat64', 'softmax.with_dtype:s0_5_0_dtypefloat64',
        'softmax.with_dtype:s1_5x5_0_dtypefloat64',
        'to:s0_5x5x5x5_cpu_float64_True_True_memoryformattorch_preserveformat',
        'to:s1_5x5x5x5_cpu_float64_True_True_memoryformattorch_channelslast',)),
    ('Ceil', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Ceil_Op on backend cpu', 'aidge', (
        'ceil:s0_20x20',)),
    ('ConstantOfShape', 'backward', 'backward_not_implemented', 'backward() not implemented yet for operator of type ConstantOfShape', 'aidge', (
        'nn.functional.kl_div:s1_2_2_reductionnone_logtargetFalse',)),
    ('Erf', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Erf_Op on backend cpu', 'aidge', (
        'erf:s0_20x20', 'nn.functional.gelu:s0_10x10_approximatenone',)),
    ('Expand', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Expand_Op on backend cpu', 'aidge', (
        'broadcast_tensors:s0_3_1x2x1_1x1_5x1x1', 'broadcast_to:s0_5x1x1_5_5_5', 'broadcast_to:s1_5x1x5_5_5_5',
        'expand:s0_5x1x1_5_5_5', 'expand:s1_5x1x5_5_5_5', 'expand_as:s0_5x1x1_5x5x5',
        'meshgrid.list_of_tensors:s?_0d_indexingij', 'meshgrid.variadic_tensors:s?_0d_indexingij',
        'nn.functional.normalize:s0_2x1x4x5_p1_dim2', 'nn.functional.normalize:s1_2x3x4x5_p2_dim1',)),
    ('Floor', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Floor_Op on backend cpu', 'aidge', (
        '__rmod__:s0_0d_0d', '__rmod__:s1_5_0d', 'div.floor_rounding:s0_0d_0d_roundingmodefloor',
        'div.floor_rounding:s1_5_0d_roundingmodefloor', 'floor:s0_20x20', 'remainder:s0_0d_0d', 'remainder:s1_5_0d',)),
    ('Gather', 'backward', 'backward_not_implemented', 'backward() not implemented yet for operator of type Gather', 'aidge', (
        '__getitem__:s0_5x5x5_1_2', 'as_strided.partial_views:s0_10_2_2_1_2',
        'as_strided.partial_views:s1_10_2_2_1_2_storageoffset0', 'as_strided:s0_1_1_1_storageoffset0',
        'as_strided:s1_3x3_2_2_1_2_storageoffset0', 'index_select:s1_1_0_int641',
        'nn.functional.embedding:s0_10x5_int640d', 'nn.functional.embedding:s1_10x5_int645', 'select:s0_5x5x5_1_2',
        'select:s1_5x5x5_-1_2',)),
    ('GatherElements', 'backward', 'backward_not_implemented', 'backward() not implemented yet for operator of type GatherElements', 'aidge', (
        'gather:s0_10x5_0_int645x5', 'gather:s1_10x5_0_int325x5',)),
    ('Less', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Less_Op on backend cpu', 'aidge', (
        'atan2:s1_5_0d', 'lerp:s0_5x5_5x5_0_4', 'lerp:s1_5x5_5_0_4', 'logit:s1_5x5x5_0_2',)),
    ('Less', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Less_Op on backend cpu || Backward not yet implemented for Greater_Op on backend cpu', 'aidge', (
        'nn.functional.softshrink:s0_5x5_lambd0', 'nn.functional.softshrink:s1_5x5_lambd0_5',)),
    ('MatMul', 'backward', 'backward_not_implemented', 'Backward not yet implemented for MatMul_Op on backend cpu', 'aidge', (
        '__rmatmul__:s0_20_20', '__rmatmul__:s1_10_5x10', 'bmm:s0_10x5x10_10x10x5', 'dot:s0_5_5', 'matmul:s0_20_20',
        'matmul:s1_5x10_10', 'mv:s0_5x10_10', 'nn.functional.linear:s0_3_4x3_4',
        'nn.functional.scaled_dot_product_attention:s0_4x3x8_4x6x8_4x6x8_iscausalTrue_dropoutp0',
        'nn.functional.scaled_dot_product_attention:s1_4x3x8_4x6x8_4x6x8_iscausalTrue_dropoutp0',)),
    ('MatMul', 'backward', 'backward_not_implemented', 'Backward not yet implemented for MatMul_Op on backend cpu || backward() not implemented yet for operator of type Cast', 'aidge', (
        'baddbmm:s0_5x5x10_5x5x5_5x5x10_beta1_alpha1', 'baddbmm:s1_1_5x5x5_5x5x10_beta1_alpha1',)),
    ('Mod', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Mod_Op on backend cpu', 'aidge', (
        'fmod:s0_0d_0d', 'fmod:s1_5_0d',)),
    ('PaddedConvTranspose1D', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Conv_Op<1> on backend cpu', 'aidge', (
        'nn.functional.conv_transpose1d:s0_1x3x4_3x3x3_3_stride2_padding2_outputpadding1_groups1',
        'nn.functional.conv_transpose1d:s1_3x4_3x3x3_3_stride2_padding2_outputpadding1_groups1',)),
    ('PaddedConvTranspose2D', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Conv_Op<2> on backend cpu', 'aidge', (
        'nn.functional.conv_transpose2d:s0_1x3x4x4_3x3x3x3_3_stride22_padding2_outputpadding11_groups1',
        'nn.functional.conv_transpose2d:s1_3x4x4_3x3x3x3_3_stride22_padding2_outputpadding11_groups1',)),
    ('PaddedConvTranspose3D', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Conv_Op<2> on backend cpu', 'aidge', (
        'nn.functional.conv_transpose3d:s0_1x3x4x4x4_3x3x3x3x3_3_stride222_padding2_outputpadding1_5247d3de',
        'nn.functional.conv_transpose3d:s1_3x4x4x4_3x3x3x3x3_3_stride222_padding2_outputpadding111_groups1',)),
    ('ReduceMean', 'backward', 'backward_not_implemented', 'Backward not yet implemented for ReduceMean_Op on backend cpu', 'aidge', (
        'native_layer_norm:s0_1x2x3_1_2_3_1x2x3_1x2x3_0_5', 'native_layer_norm:s1_1x2x3_1_2_3_None_1x2x3_0_5',)),
    ('ReduceMin', 'backward', 'backward_not_implemented', 'Backward not yet implemented for ReduceMin_Op on backend cpu', 'aidge', (
        'aminmax:s1_5x5x5_dim1',)),
    ('ReduceSum', 'backward', 'backward_not_implemented', 'Backward not yet implemented for ReduceSum_Op on backend cpu', 'aidge', (
        'linalg.matrix_norm:s0_2x2_fro_-2_-1_True', 'nn.functional.cosine_similarity:s0_5x5_5x5_dim1',
        'nn.functional.cosine_similarity:s1_5x2_5x2_dim-1', 'nn.functional.pairwise_distance:s1_2x3_2x3',)),
    ('Resize', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Slice_Op on backend cpu', 'aidge', (
        'nn.functional.interpolate.bicubic:s0_2x3x4x4_3_3_scalefactorNone_modebicubic_aligncornersTrue',
        'nn.functional.interpolate.bicubic:s1_2x3x4x4_5_5_scalefactorNone_modebicubic_aligncornersTrue',
        'nn.functional.interpolate.bilinear:s0_2x3x4x4_3_3_scalefactorNone_modebilinear_aligncornersTrue',
        'nn.functional.interpolate.bilinear:s1_2x3x4x4_5_5_scalefactorNone_modebilinear_aligncornersTrue',
        'nn.functional.interpolate.linear:s0_2x3x4_3_scalefactorNone_modelinear_aligncornersTrue',
        'nn.functional.interpolate.linear:s1_2x3x4_5_scalefactorNone_modelinear_aligncornersTrue',
        'nn.functional.interpolate.nearest:s0_2x3x4_3_scalefactorNone_modenearest_aligncornersNone',
        'nn.functional.interpolate.nearest:s1_2x3x4_5_scalefactorNone_modenearest_aligncornersNone',
        'nn.functional.interpolate.trilinear:s0_2x3x4x4x4_3_3_3_scalefactorNone_modetrilinear_aligncornersTrue',
        'nn.functional.interpolate.trilinear:s1_2x3x4x4x4_5_5_5_scalefactorNone_modetrilinear_aligncornersTrue',
        'nn.functional.upsample_bilinear:s0_2x3x4x4_size33', 'nn.functional.upsample_bilinear:s1_2x3x4x4_size55',
        'nn.functional.upsample_nearest:s0_2x3x4_size3', 'nn.functional.upsample_nearest:s1_2x3x4_size5',)),
    ('Round', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Round_Op on backend cpu', 'aidge', (
        'round.decimals_0:s0_20_decimals0', 'round.decimals_3:s0_20_decimals3',
        'round.decimals_neg_3:s0_20_decimals-3', 'round:s0_20x20',)),
    ('Scatter', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Scatter_Op on backend cpu', 'aidge', (
        'scatter:s0_10x5_0_int645x5_5x5', 'scatter:s1_10x5_0_int325x5_5x5', 'scatter_add:s0_10x5_0_int645x5_5x5',
        'scatter_add:s1_10x5_1_int645x5_5x5',)),
    ('Shape', 'backward', 'backward_not_implemented', 'backward() not implemented yet for operator of type Shape', 'aidge', (
        'nn.functional.group_norm:s0_1x6x3_2_weight6_bias6_eps0_5',
        'nn.functional.group_norm:s1_1x6x3_2_weight6_bias6_eps0_5', 'reshape_as:s0_5x5x5_25x5',
        'reshape_as:s1_25x5_5x5x5', 'view_as:s0_5x5x5_25x5', 'view_as:s1_25x5_5x5x5',)),
    ('Shape', 'backward', 'backward_not_implemented', 'backward() not implemented yet for operator of type Shape || backward() not implemented yet for operator of type Gather', 'aidge', (
        'take:s0_3x3_int643', 'take:s1_3x3_int643',)),
    ('Slice', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Slice_Op on backend cpu', 'aidge', (
        '__getitem__:s1_5x5x5_slice03None', 'chunk:s0_5x5x5_2', 'chunk:s1_5x5x5_5_1', 'cross:s0_5x3_5x3',
        'cross:s1_5x3x5_5x3x5_dim1', 'linalg.cross:s0_5x3_5x3', 'linalg.cross:s1_5x3x5_5x3x5_dim1',
        'narrow:s0_5x5x5_1_2_2', 'slice:s0_3_0', 'slice:s1_20x30x40_dim1_start1_end-2',)),
    ('Split', 'backward', 'backward_not_implemented', 'backward() not implemented yet for operator of type Split', 'aidge', (
        'nn.functional.glu:s0_2_0', 'split.list_args:s0_5x5x5_1_3_1', 'split.list_args:s1_5x5x5_2_1_2_2',
        'split:s0_5x5x5_2', 'split:s1_5x5x5_5_1', 'split_with_sizes:s0_5x5x5_1_3_1',
        'split_with_sizes:s1_5x5x5_1_4_0', 'unbind:s0_5_0', 'unbind:s1_5x5_0', 'unsafe_chunk:s0_5x5x5_2',
        'unsafe_chunk:s1_5x5x5_5_1', 'unsafe_split:s0_5x5x5_2', 'unsafe_split:s1_5x5x5_5_1',)),
    ('Tile', 'backward', 'backward_not_implemented', 'backward() not implemented yet for operator of type Tile', 'aidge', (
        'repeat:s1_0d_0',)),
    ('TopK', 'backward', 'backward_not_implemented', 'Backward not yet implemented for TopK_Op on backend cpu', 'aidge', (
        'sort:s0_8000', 'sort:s1_5x5x5_-3_True', 'topk:s0_5x10x5_3', 'topk:s1_5x10x5_3_1',)),
    ('Trilu', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Trilu_Op on backend cpu', 'aidge', (
        'tril:s0_10x10', 'tril:s1_10x10_2', 'triu:s0_10x10', 'triu:s1_10x10_2',)),
    ('addmm', 'compile', 'compile_error', 'Wrong bias size for FC operator.', 'aidge', (
        'addmm:s0_2x3_2x2_2x3_alpha0_6_beta0_2', 'addmm:s1_3x3_3x3_3x3_alpha0_6_beta0_2',)),
    ('addmm.decomposed', 'compile', 'compile_error', 'Wrong bias size for FC operator.', 'aidge', (
        'addmm.decomposed:s0_2x3_2x2_2x3_alpha1_beta1', 'addmm.decomposed:s1_3x3_3x3_3x3_alpha1_beta1',)),
    ('flip', 'compile', 'compile_error', 'Step (-1) is negative, we must have End (', 'aidge', (
        'flip:s0_5x10x5_dims012', 'flip:s1_5x10x5_dims0',)),
    ('amax', 'forward', 'crash', 'crash: process killed by SIGSEGV during forward', 'aidge', (
        'amax:s1_0d_dim0_keepdimTrue',)),
    ('amin', 'forward', 'crash', 'crash: process killed by SIGSEGV during forward', 'aidge', (
        'amin:s1_0d_dim0_keepdimTrue',)),
    ('any', 'forward', 'crash', 'crash: process killed by SIGSEGV during forward', 'aidge', (
        'any:s1_0d_dim0_keepdimTrue',)),
    ('argmax', 'forward', 'crash', 'crash: process killed by SIGSEGV during forward', 'aidge', (
        'argmax:s1_0d_dim0_keepdimTrue',)),
    ('index_select', 'forward', 'crash', 'crash: process killed by SIGSEGV during forward', 'aidge', (
        'index_select:s0_0d_0_int641',)),
    ('linspace.tensor_overload', 'forward', 'crash', 'crash: process killed by SIGSEGV during forward', 'aidge', (
        'linspace.tensor_overload:s0_0d_int640d_0_dtypefloat32_devicecpu',
        'linspace.tensor_overload:s1_0d_-3_0_dtypefloat32_devicecpu',)),
    ('masked.normalize', 'forward', 'crash', 'crash: process killed by SIGSEGV during forward', 'aidge', (
        'masked.normalize:s0_5_2_0', 'masked.normalize:s1_5x5_2_0',)),
    ('mean', 'forward', 'crash', 'crash: process killed by SIGSEGV during forward', 'aidge', (
        'mean:s1_0d_dim0_keepdimTrue',)),
    ('nonzero', 'forward', 'crash', 'crash: process killed by SIGSEGV during forward', 'aidge', (
        'nonzero:s1_0d_astupleTrue',)),
    ('sum', 'forward', 'crash', 'crash: process killed by SIGSEGV during forward', 'aidge', (
        'sum:s1_0d_dim0_keepdimTrue',)),
    ('linalg.norm.subgradients_at_zero', 'export', 'export_error (test strategy)', "'NoneType' object is not subscriptable", 'export', (
        'linalg.norm.subgradients_at_zero:s1_5_0_keepdimFalse',)),
    ('meshgrid.list_of_tensors', 'export', 'export_error (test strategy)', 'list index out of range', 'export', (
        'meshgrid.list_of_tensors:s?_0d_indexingxy',)),
    ('meshgrid.variadic_tensors', 'export', 'export_error (test strategy)', 'list index out of range', 'export', (
        'meshgrid.variadic_tensors:s?_0d_indexingxy',)),
    ('nn.functional.adaptive_avg_pool2d', 'export', 'export_error (test strategy)', 'Unsupported: ONNX export of operator adaptive_avg_pool2d, output size that are not factor', 'export', (
        'nn.functional.adaptive_avg_pool2d:s0_1x8x8x8_5_7', 'nn.functional.adaptive_avg_pool2d:s1_8x8x8_5_7',)),
    ('nn.functional.adaptive_max_pool3d', 'export', 'export_error (test strategy)', 'Unsupported: ONNX export of operator adaptive_max_pool3d, output size that are not factor', 'export', (
        'nn.functional.adaptive_max_pool3d:s1_4x4x3x5_None_None_None_True',)),
    ('Expand', 'forward', 'forward_not_implemented', 'missing or invalid registrar key', 'aidge', (
        'index_copy:s1_1_0_int641_1',)),
    ('bfloat16', 'compile', 'forward_not_implemented', 'missing or invalid registrar key', 'aidge', (
        'bfloat16:s0_0d', 'bfloat16:s1_0d_memoryformattorch_contiguousformat',)),
    ('masked_select', 'forward', 'forward_not_implemented', 'missing or invalid registrar key', 'aidge', (
        'masked_select:s0_10x10_bool10x10', 'masked_select:s1_10x10_bool10',)),
    ('narrow', 'forward', 'forward_not_implemented', 'missing or invalid registrar key', 'aidge', (
        'narrow:s1_5x5x5_1_int640d_2',)),
    ('nn.functional.adaptive_max_pool3d', 'compile', 'forward_not_implemented', 'missing or invalid registrar key', 'aidge', (
        'nn.functional.adaptive_max_pool3d:s0_1x4x4x3x5_None_None_None_True',)),
    ('nn.functional.avg_pool3d', 'compile', 'forward_not_implemented', 'missing or invalid registrar key', 'aidge', (
        'nn.functional.avg_pool3d:s0_2x3x3x4x4_2_2_2',)),
    ('nn.functional.max_pool3d', 'compile', 'forward_not_implemented', 'missing or invalid registrar key', 'aidge', (
        'nn.functional.max_pool3d:s0_1x2x3x6x5_kernelsize3_stride2_ceilmodeTrue_padding0_dil_7e52df01',
        'nn.functional.max_pool3d:s1_1x2x3x6x5_kernelsize3_stride2_ceilmodeTrue_padding0_dil_cf4009a8',)),
    ('asin', 'backward', 'gradients_differ', 'Tensors are not close at input grad [0]!', 'precision', (
        'asin:s0_20x20',)),
    ('atan', 'backward', 'gradients_differ', 'Tensors are not close at input grad [0]!', 'aidge', (
        'atan:s0_20x20',)),
    ('cos', 'backward', 'gradients_differ', 'Tensors are not close at input grad [0]!', 'aidge', (
        'cos:s0_20',)),
    ('nn.functional.leaky_relu', 'backward', 'gradients_differ', 'Tensors are not close at input grad [0]!', 'aidge', (
        'nn.functional.leaky_relu:s0_10x10', 'nn.functional.leaky_relu:s1_10x10',)),
    ('sin', 'backward', 'gradients_differ', 'Tensors are not close at input grad [0]!', 'aidge', (
        'sin:s0_20x20',)),
    ('tan', 'backward', 'gradients_differ', 'Tensors are not close at input grad [0]!', 'aidge', (
        'tan:s0_20x20',)),
    ('amax', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'amax:s0_0d',)),
    ('amin', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'amin:s0_0d',)),
    ('aminmax', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'aminmax:s0_5x5x5',)),
    ('any', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'export', (
        'any:s0_0d',)),
    ('argmax', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'argmax:s0_0d',)),
    ('atan2', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'atan2:s0_0d_0d',)),
    ('linalg.matrix_norm', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'linalg.matrix_norm:s1_2x2_fro_-2_-1_False',)),
    ('linalg.vector_norm', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'linalg.vector_norm:s0_0d_ord6', 'linalg.vector_norm:s1_0d_ord4',)),
    ('masked.amax', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'masked.amax:s0_0d_maskNone', 'masked.amax:s1_0d_maskbool0d',)),
    ('masked.amin', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'masked.amin:s0_0d_maskNone', 'masked.amin:s1_0d_maskbool0d',)),
    ('masked.argmax', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'masked.argmax:s0_0d_maskNone', 'masked.argmax:s1_0d_maskbool0d',)),
    ('masked.norm', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'masked.norm:s0_0d_2_maskNone', 'masked.norm:s1_0d_2_maskbool0d',)),
    ('masked.prod', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'masked.prod:s1_0d_maskbool0d',)),
    ('max.reduction_no_dim', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'max.reduction_no_dim:s0_5x5x5', 'max.reduction_no_dim:s1_0d',)),
    ('mean', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'mean:s0_0d',)),
    ('min.reduction_no_dim', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'min.reduction_no_dim:s0_5x5x5', 'min.reduction_no_dim:s1_0d',)),
    ('nn.functional.binary_cross_entropy_with_logits', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'nn.functional.binary_cross_entropy_with_logits:s0_0d_0d',)),
    ('nn.functional.binary_cross_entropy_with_logits', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'export', (
        'nn.functional.binary_cross_entropy_with_logits:s1_1_1',)),
    ('nn.functional.mse_loss', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'nn.functional.mse_loss:s1_5_5_reductionmean',)),
    ('nn.functional.multilabel_soft_margin_loss', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'export', (
        'nn.functional.multilabel_soft_margin_loss:s0_5_5',
        'nn.functional.multilabel_soft_margin_loss:s1_5_5_weight5',)),
    ('nn.functional.pairwise_distance', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'export', (
        'nn.functional.pairwise_distance:s0_3_3',)),
    ('nn.functional.triplet_margin_with_distance_loss', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'nn.functional.triplet_margin_with_distance_loss:s0_5x10_5x10_5x10_margin1e-06_distancefunctionPairwiseDistance',
        'nn.functional.triplet_margin_with_distance_loss:s1_5x10_5x10_5x10_margin1_distancefunctionPairwiseDistance',)),
    ('nonzero', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'export', (
        'nonzero:s0_0d_astupleFalse',)),
    ('norm', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'norm:s1_5x5_0',)),
    ('norm.inf', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'norm.inf:s0_5x5_-inf', 'norm.inf:s1_5x5_inf',)),
    ('std.unbiased', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'std.unbiased:s1_5_False',)),
    ('std_mean.unbiased', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'std_mean.unbiased:s1_5_False',)),
    ('sum', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'sum:s0_0d',)),
    ('var.unbiased', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'var.unbiased:s1_5_False',)),
    ('var_mean.unbiased', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'var_mean.unbiased:s1_5_False',)),
    ('BatchNorm', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'aidge', (
        'nn.functional.batch_norm:s0_5x5x5_5_5_5_5_trainingTrue_momentum0_5_eps0_6',)),
    ('ConstantOfShape', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'aidge', (
        'new_full:s0_0d_-1_76583', 'new_ones:s0_0d',)),
    ('cdist', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'export', (
        'cdist:s0_5x5x2_5x6x2_0_usemmforeucliddist', 'cdist:s1_5x5_5x5_0_usemmforeucliddist',)),
    ('floor_divide', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'export', (
        'floor_divide:s1_5_0d',)),
    ('linalg.norm', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'aidge', (
        'linalg.norm:s0_5_keepdimFalse', 'linalg.norm:s1_5_None_keepdimFalse',)),
    ('log_softmax.with_dtype', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'export', (
        'log_softmax.with_dtype:s1_5x5_0_dtypefloat64',)),
    ('masked.std', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'aidge', (
        'masked.std:s0_5x5x5_maskNone', 'masked.std:s1_5x5x5_maskbool5x5x5',)),
    ('masked.var', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'aidge', (
        'masked.var:s0_5x5x5_maskNone', 'masked.var:s1_5x5x5_maskbool5x5x5',)),
    ('nn.functional.avg_pool2d', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'export', (
        'nn.functional.avg_pool2d:s0_1x3x9x9_3_1_1_True_False_2',
        'nn.functional.avg_pool2d:s1_1x3x9x9_4_4_2_3_1_True_False_2',)),
    ('nn.functional.instance_norm', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'export', (
        'nn.functional.instance_norm:s0_5x5x5_runningmean5_runningvar5_weight5_bias5_momentum0_5_eps0_6',
        'nn.functional.instance_norm:s1_5x5x5_runningmean5_runningvar5_weight5_bias5_momentum0__b4432757',)),
    ('nn.functional.softplus', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'export', (
        'nn.functional.softplus:s0_20_beta3_threshold0_2',)),
    ('norm', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'aidge', (
        'norm:s0_5x5_2',)),
    ('norm.fro', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'aidge', (
        'norm.fro:s0_5x5', 'norm.fro:s1_5x5_fro',)),
    ('Acos', 'import', 'unsupported_operator', '(ONNX op Acos)', 'aidge', (
        'acos:s0_20', 'acos:s1_1x0x3',)),
    ('ArgMin', 'import', 'unsupported_operator', '(ONNX op ArgMin)', 'aidge', (
        'argmin:s0_0d', 'argmin:s1_0d_dim0_keepdimTrue', 'masked.argmin:s0_0d_maskNone',
        'masked.argmin:s1_0d_maskbool0d', 'min.reduction_with_dim:s0_5x5x5_1',
        'min.reduction_with_dim:s1_5x5x5_1_True',)),
    ('AveragePool', 'import', 'unsupported_operator', '(ONNX op AveragePool)', 'aidge', (
        'nn.functional.avg_pool1d:s1_1x3x9_3_stride1_padding1_ceilmodeTrue_countincludepadFalse',
        'nn.functional.avg_pool3d:s1_1x2x4x4x4_2_stride1_padding1_ceilmodeTrue_countincludep_c64561d3',)),
    ('Celu', 'import', 'unsupported_operator', '(ONNX op Celu)', 'aidge', (
        'nn.functional.celu:s0_20', 'nn.functional.celu:s1_1x0x3',)),
    ('ConcatFromSequence', 'import', 'unsupported_operator', '(ONNX op ConcatFromSequence)', 'aidge', (
        'vstack:s0_5_5_5', 'vstack:s1_5x5_5x5_5x5',)),
    ('CumSum', 'import', 'unsupported_operator', '(ONNX op CumSum)', 'aidge', (
        'cumsum:s0_5x5x5_0', 'cumsum:s1_5x5x5_1', 'diagonal:s0_5x5', 'diagonal:s1_5x5_offset2',
        'masked.cumsum:s0_5_0_maskbool5', 'masked.cumsum:s1_5x5_0_maskbool5x5',)),
    ('Det', 'import', 'unsupported_operator', '(ONNX op Det)', 'aidge', (
        'linalg.det:s0_0x0', 'linalg.det:s1_1x1', 'logdet:s0_0x0', 'logdet:s1_1x1',)),
    ('Einsum', 'import', 'unsupported_operator', '(ONNX op Einsum)', 'aidge', (
        'einsum:s0_3_i-', 'einsum:s1_3_4_ij-ij', 'outer:s0_5_10', 'tensordot:s0_2x2x2_2x2x2_dims2',
        'tensordot:s1_2x2x1_2x1x2_dims0120',)),
    ('Elu', 'import', 'unsupported_operator', '(ONNX op Elu)', 'aidge', (
        'nn.functional.elu:s0_20', 'nn.functional.elu:s1_1x0x3',)),
    ('GridSample', 'import', 'unsupported_operator', '(ONNX op GridSample)', 'aidge', (
        'nn.functional.grid_sample:s0_2x3x5x5_2x5x5x2_modebilinear_paddingmodezeros_aligncornersFalse',
        'nn.functional.grid_sample:s1_2x3x5x5_2x5x5x2_modebilinear_paddingmodezeros_aligncornersTrue',)),
    ('If', 'import', 'unsupported_operator', '(ONNX op If)', 'aidge', (
        'hstack:s0_5_5_5', 'hstack:s1_5x5_5x5_5x5',
        'nn.functional.local_response_norm:s0_1x6x3_2_alpha3e-05_beta0_5_k1_25',
        'nn.functional.local_response_norm:s1_1x6x3_2_beta0_5_k1_25', 'tile:s0_0d', 'tile:s1_0',)),
    ('IsInf', 'import', 'unsupported_operator', '(ONNX op IsInf)', 'aidge', (
        'isfinite:s0_20', 'isfinite:s1_1x0x3', 'isinf:s0_20x20', 'nan_to_num:s0_20', 'nan_to_num:s1_1x0x3',)),
    ('IsNaN', 'import', 'unsupported_operator', '(ONNX op IsNaN)', 'aidge', (
        'isnan:s0_20x20',)),
    ('LayerNormalization', 'import', 'unsupported_operator', '(ONNX op LayerNormalization)', 'aidge', (
        'nn.functional.layer_norm:s0_1x2x3_1_2_3_1x2x3_1x2x3_eps0_5',
        'nn.functional.layer_norm:s1_2x2x3_2_3_2x3_2x3_eps-0_5',)),
    ('Loop', 'import', 'unsupported_operator', '(ONNX op Loop)', 'aidge', (
        'nn.functional.embedding_bag:s0_10x5_int645_offsetsint642_modesum_persampleweights5',
        'nn.functional.embedding_bag:s1_10x5_int645_offsetsint642_modesum_persampleweights5',
        'tensor_split:s0_5x5x5_int643',)),
    ('NegativeLogLikelihoodLoss', 'import', 'unsupported_operator', '(ONNX op NegativeLogLikelihoodLoss)', 'aidge', (
        'nn.functional.nll_loss:s0_2x3_int642_reductionnone',
        'nn.functional.nll_loss:s1_2x3_int642_weight3_reductionnone',)),
    ('Or', 'import', 'unsupported_operator', '(ONNX op Or)', 'aidge', (
        'logical_or:s0_0d_0d', 'logical_or:s1_5_0d', 'nn.functional.hardshrink:s0_5x5_lambd-0_5',
        'nn.functional.hardshrink:s1_5x5_lambd0',)),
    ('PRelu', 'import', 'unsupported_operator', '(ONNX op PRelu)', 'aidge', (
        'nn.functional.prelu:s0_20_weight0d', 'nn.functional.prelu:s1_1x0x3_weight0d',)),
    ('ReduceLogSumExp', 'import', 'unsupported_operator', '(ONNX op ReduceLogSumExp)', 'aidge', (
        'logsumexp:s0_0d_0_True', 'logsumexp:s1_5x5_1_True', 'masked.logsumexp:s0_0d_maskNone',
        'masked.logsumexp:s1_0d_maskbool0d',)),
    ('ReduceProd', 'import', 'unsupported_operator', '(ONNX op ReduceProd)', 'aidge', (
        'prod:s0_5x5x5', 'prod:s1_5x5x5_0', 'std.unbiased:s0_5x5_True', 'std:s0_5x5x5', 'std:s1_5x5x5_dim1',
        'std_mean.unbiased:s0_5x5_True', 'std_mean:s0_5x5x5', 'std_mean:s1_5x5x5_dim1', 'var.unbiased:s0_5x5_True',
        'var:s0_5x5x5', 'var:s1_5x5x5_dim1', 'var_mean.unbiased:s0_5x5_True', 'var_mean:s0_5x5x5',
        'var_mean:s1_5x5x5_dim1',)),
    ('ScatterND', 'import', 'unsupported_operator', '(ONNX op ScatterND)', 'aidge', (
        'index_put:s0_5x5_int641_1x5_accumulateFalse', 'index_put:s1_5x5_bool5_5_accumulateFalse',
        'masked_scatter:s0_5x5_bool5x5_5x5', 'masked_scatter:s1_5x5_bool5_5x5',)),
    ('Selu', 'import', 'unsupported_operator', '(ONNX op Selu)', 'aidge', (
        'nn.functional.selu:s0_20', 'nn.functional.selu:s1_1x0x3',)),
    ('SequenceAt', 'import', 'unsupported_operator', '(ONNX op SequenceAt)', 'aidge', (
        'tensor_split:s1_5x5x5_int640d',)),
    ('Sign', 'import', 'unsupported_operator', '(ONNX op Sign)', 'aidge', (
        'sign:s0_20x20',)),
    ('SoftmaxCrossEntropyLoss', 'import', 'unsupported_operator', '(ONNX op SoftmaxCrossEntropyLoss)', 'aidge', (
        'nn.functional.cross_entropy:s0_2x3_int642', 'nn.functional.cross_entropy:s1_2x3_2x3',
        'nn.functional.linear_cross_entropy.chunked:s0_3_4x3_int640d_reductionmean_optionsLinearCrossEntropyOp_206df056',
        'nn.functional.linear_cross_entropy.chunked:s1_8x3_4x3_int648_reductionmean_optionsLinearCrossEntropyO_fc2b35b6',
        'nn.functional.linear_cross_entropy.chunked_none:s0_3_4x3_int640d_reductionnone_optionsLinearCrossEntropyOp_96739593',
        'nn.functional.linear_cross_entropy.chunked_none:s1_8x3_4x3_int648_reductionnone_optionsLinearCrossEntropyO_36a5312e',
        'nn.functional.linear_cross_entropy:s0_3_4x3_int640d',
        'nn.functional.linear_cross_entropy:s1_8x3_4x3_int648',)),
    ('Transpose', 'import', 'unsupported_operator', '(ONNX op Transpose)', 'aidge', (
        'movedim:s1_4x3x2x1_0_-1_-2_-3_-3_-2_-1_0', 'permute:s1_1x2x3x4_0_-2_-1_1',)),
    ('Unique', 'import', 'unsupported_operator', '(ONNX op Unique)', 'aidge', (
        'unique:s0_0d_sortedFalse_returninverseFalse_returncountsFalse_dimNone',
        'unique:s1_0d_sortedFalse_returninverseFalse_returncountsFalse_dimNone',)),
    ('Xor', 'import', 'unsupported_operator', '(ONNX op Xor)', 'aidge', (
        'logical_xor:s0_0d_0d', 'logical_xor:s1_5_0d',)),
)
