"""Data of the OpInfo rows of the expected-failure table for the float64, float16 and int64
cases (ids ending with the dtype), in the format of :mod:`interop.cases._opinfo_failures`:
``(Aidge operator, phase, category, quoted error, attribution, cases)``. Triaged from a run of
the first sample of each of those cases of the catalog's entries (the default run's), with
torch 2.13.0 and Aidge 0.10.1 CPU (dtype-faithful compile, :func:`interop.bridge.graph.compute_dtype`)."""

OPINFO_DTYPE_FAILURES = (
    ('Reshape', 'forward', 'aidge_error', 'Number of elements to copy is above implementation current capacity (250B > 2B)', 'aidge', (
        'flatten:s0_5x5x5_float16',)),
    ('Reshape', 'forward', 'aidge_error', 'Number of elements to copy is above implementation current capacity (1000B > 8B)', 'aidge', (
        'flatten:s0_5x5x5_float64', 'flatten:s0_int645x5x5_int64',)),
    ('Slice', 'forward', 'aidge_error', 'Slice: Step (-1) is negative, we must have End (3) < Start (2) on axis 0', 'aidge', (
        'nn.functional.pad.constant:s0_1x3x3_2_2_float16', 'nn.functional.pad.constant:s0_1x3x3_2_2_float64',
        'nn.functional.pad.constant:s0_int641x3x3_2_2_int64',)),
    ('Sub', 'backward', 'aidge_error', 'bad_function_call', 'aidge', (
        'nn.functional.max_pool2d:s0_1x2x3x6_kernelsize3_stride2_ceilmodeTrue_padding0_dilat_f6d8ff02_float64',)),
    ('Abs', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Abs_Op on backend cpu', 'aidge', (
        'abs:s0_20x20_float64',)),
    ('Cast', 'backward', 'backward_not_implemented', 'backward() not implemented yet for operator of type Cast', 'aidge', (
        'add:s0_0d_0d_float64', 'clamp:s0_5x10x5_5x10x5_5x10x5_float64', 'div.no_rounding_mode:s0_0d_0d_float64',
        'mul:s0_0d_0d_float64', 'pow:s0_0d_0d_float64', 'sub:s0_0d_0d_float64',)),
    ('Erf', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Erf_Op on backend cpu', 'aidge', (
        'erf:s0_20x20_float64', 'nn.functional.gelu:s0_10x10_approximatenone_float64',)),
    ('Gather', 'backward', 'backward_not_implemented', 'backward() not implemented yet for operator of type Gather', 'aidge', (
        'nn.functional.embedding:s0_10x5_int640d_float16', 'nn.functional.embedding:s0_10x5_int640d_float64',)),
    ('MatMul', 'backward', 'backward_not_implemented', 'Backward not yet implemented for MatMul_Op on backend cpu', 'aidge', (
        'matmul:s0_20_20_float64', 'nn.functional.linear:s0_3_4x3_4_float64',)),
    ('PaddedConvTranspose2D', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Conv_Op<2> on backend cpu', 'aidge', (
        'nn.functional.conv_transpose2d:s0_1x3x4x4_3x3x3x3_3_stride22_padding2_outputpadding11_groups1_float64',)),
    ('Resize', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Slice_Op on backend cpu', 'aidge', (
        'nn.functional.interpolate.nearest:s0_2x3x4_3_scalefactorNone_modenearest_aligncornersNone_float16',
        'nn.functional.interpolate.nearest:s0_2x3x4_3_scalefactorNone_modenearest_aligncornersNone_float64',)),
    ('Shape', 'backward', 'backward_not_implemented', 'backward() not implemented yet for operator of type Shape', 'aidge', (
        'nn.functional.group_norm:s0_1x6x3_2_weight6_bias6_eps0_5_float64',)),
    ('Slice', 'backward', 'backward_not_implemented', 'Backward not yet implemented for Slice_Op on backend cpu', 'aidge', (
        'narrow:s0_5x5x5_1_2_2_float64',)),
    ('Split', 'backward', 'backward_not_implemented', 'backward() not implemented yet for operator of type Split', 'aidge', (
        'split:s0_5x5x5_2_float16', 'split:s0_5x5x5_2_float64',)),
    ('index_select', 'forward', 'crash', 'crash: process killed by SIGSEGV during forward', 'aidge', (
        'index_select:s0_0d_0_int641_float16', 'index_select:s0_0d_0_int641_float64',
        'index_select:s0_int640d_0_int641_int64',)),
    ('nn.functional.adaptive_avg_pool2d', 'export', 'export_error (test strategy)', 'Unsupported: ONNX export of operator adaptive_avg_pool2d, output size that are not factor', 'export', (
        'nn.functional.adaptive_avg_pool2d:s0_1x8x8x8_5_7_float16',
        'nn.functional.adaptive_avg_pool2d:s0_1x8x8x8_5_7_float64',)),
    ('Abs', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, Default, [(20, 20), (20, 20)]], [int64, Default, [(20, 20), (20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_6Abs_Op', 'aidge', (
        'abs:s0_int6420x20_int64',)),
    ('Abs', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(20, 20), (20, 20)]], [float16, Default, [(20, 20), (20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_6Abs_Op', 'aidge', (
        'abs:s0_20x20_float16',)),
    ('Add', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [], float16, Default, []], [float16, Default, []]" for registrable object N5Aidge16OperatorImpl_cpuINS_6Add_Op', 'aidge', (
        'add:s0_0d_0d_float16',)),
    ('AvgPooling', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, NCHW, [(1, 1), (3, 3), (11, 11), (11, 11)]], [int64, NCHW, [(1, 1), (3, 3), (9, 9), (9, 9)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_13AvgPooling_Op', 'aidge', (
        'nn.functional.avg_pool2d:s0_int641x3x9x9_3_1_1_True_False_2_int64',)),
    ('AvgPooling', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, NCHW, [(1, 1), (3, 3), (11, 11), (11, 11)]], [float16, NCHW, [(1, 1), (3, 3), (9, 9), (9, 9)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_13AvgPooling_Op', 'aidge', (
        'nn.functional.avg_pool2d:s0_1x3x9x9_3_1_1_True_False_2_float16',)),
    ('BatchNorm', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, NCW, [(1, 1), (25, 25), (5, 5)], float16, NCW, [], float16, NCW, [], float16, Default, [], float16, Default, []], [float16, NCW, []]" for registrable object N5Aidge16OperatorImpl_cpuINS_12BatchNorm_Op', 'aidge', (
        'nn.functional.instance_norm:s0_5x5x5_runningmean5_runningvar5_weight5_bias5_momentum0_5_eps0_6_float16',)),
    ('BatchNorm', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(5, 5), (5, 5), (5, 5)], float16, Default, [(5, 5)], float16, Default, [(5, 5)], float16, Default, [(5, 5)], float16, Default, [(5, 5)]], [float16, NCW, [(5, 5), (5, 5), (5, 5)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_12BatchNorm_Op', 'aidge', (
        'nn.functional.batch_norm:s0_5x5x5_5_5_5_5_trainingTrue_momentum0_5_eps0_6_float16',)),
    ('BatchNorm', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float64, NCW, [(1, 1), (25, 25), (5, 5)], float64, NCW, [], float64, NCW, [], float64, Default, [], float64, Default, []], [float64, NCW, []]" for registrable object N5Aidge16OperatorImpl_cpuINS_12BatchNorm_Op', 'aidge', (
        'nn.functional.instance_norm:s0_5x5x5_runningmean5_runningvar5_weight5_bias5_momentum0_5_eps0_6_float64',)),
    ('BatchNorm', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float64, Default, [(5, 5), (5, 5), (5, 5)], float64, Default, [(5, 5)], float64, Default, [(5, 5)], float64, Default, [(5, 5)], float64, Default, [(5, 5)]], [float64, NCW, [(5, 5), (5, 5), (5, 5)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_12BatchNorm_Op', 'aidge', (
        'nn.functional.batch_norm:s0_5x5x5_5_5_5_5_trainingTrue_momentum0_5_eps0_6_float64',)),
    ('Clip', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(5, 5), (5, 5)], float16, Default, [], float16, Default, []], [float16, Default, [(5, 5), (5, 5)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_7Clip_Op', 'aidge', (
        'nn.functional.hardtanh:s0_5x5_minval-0_5_maxval0_5_float16',)),
    ('Conv', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, NCHW, [(1, 1), (3, 3), (8, 8), (8, 8)], int64, Default, [(3, 3), (3, 3), (3, 3), (3, 3)], int64, Default, [(3, 3)]], [int64, NCHW, [(1, 1), (3, 3), (3, 3), (3, 3)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_7Conv_Op', 'aidge', (
        'nn.functional.conv2d:s0_int641x3x4x4_int643x3x3x3_int643_stride22_padding2_groups1_int64',)),
    ('Conv', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, NCW, [(1, 1), (3, 3), (8, 8)], int64, Default, [(3, 3), (3, 3), (3, 3)], int64, Default, [(3, 3)]], [int64, NCW, [(1, 1), (3, 3), (3, 3)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_7Conv_Op', 'aidge', (
        'nn.functional.conv1d:s0_int641x3x4_int643x3x3_int643_stride2_padding2_groups1_int64',)),
    ('ConvTranspose', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, Default, [(1, 1), (3, 3), (4, 4), (4, 4)], int64, Default, [(3, 3), (3, 3), (3, 3), (3, 3)], int64, Default, [(3, 3)]], [int64, NCHW, [(1, 1), (3, 3), (9, 9), (9, 9)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_16ConvTranspose_Op', 'aidge', (
        'nn.functional.conv_transpose2d:s0_int641x3x4x4_int643x3x3x3_int643_stride22_padding2_outp_cbc4a724_int64',)),
    ('Div', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [], float16, Default, []], [float16, Default, []]" for registrable object N5Aidge16OperatorImpl_cpuINS_6Div_Op', 'aidge', (
        'div.no_rounding_mode:s0_0d_0d_float16',)),
    ('Erf', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(20, 20), (20, 20)]], [float16, Default, [(20, 20), (20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_6Erf_Op', 'aidge', (
        'erf:s0_20x20_float16',)),
    ('Erf', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, Default, [(20, 20), (20, 20)]], [int64, Default, [(20, 20), (20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_6Erf_Op', 'aidge', (
        'erf:s0_int6420x20_int64',)),
    ('Exp', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, Default, [(20, 20)]], [int64, Default, [(20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_6Exp_Op', 'aidge', (
        'exp:s0_int6420_int64',)),
    ('HardSigmoid', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(20, 20)]], [float16, Default, [(20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_14HardSigmoid_Op', 'aidge', (
        'nn.functional.hardsigmoid:s0_20_float16',)),
    ('LeakyReLU', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(10, 10), (10, 10)]], [float16, Default, [(10, 10), (10, 10)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_12LeakyReLU_Op', 'aidge', (
        'nn.functional.leaky_relu:s0_10x10_float16',)),
    ('Ln', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(20, 20)]], [float16, Default, [(20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_5Ln_Op', 'aidge', (
        'log:s0_20_float16',)),
    ('Ln', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, Default, [(20, 20)]], [int64, Default, [(20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_5Ln_Op', 'aidge', (
        'log:s0_int6420_int64',)),
    ('LogSoftmax', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(5, 5)]], [float16, Default, [(5, 5)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_13LogSoftmax_Op', 'aidge', (
        'log_softmax:s0_5_0_float16',)),
    ('MatMul', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, Default, [(20, 20)], int64, Default, [(20, 20)]], [int64, Default, []]" for registrable object N5Aidge16OperatorImpl_cpuINS_9MatMul_Op', 'aidge', (
        'matmul:s0_int6420_int6420_int64',)),
    ('MatMul', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, Default, [(3, 3)], int64, Default, [(3, 3), (4, 4)]], [int64, Default, [(4, 4)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_9MatMul_Op', 'aidge', (
        'nn.functional.linear:s0_int643_int644x3_int644_int64',)),
    ('MatMul', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(20, 20)], float16, Default, [(20, 20)]], [float16, Default, []]" for registrable object N5Aidge16OperatorImpl_cpuINS_9MatMul_Op', 'aidge', (
        'matmul:s0_20_20_float16',)),
    ('MatMul', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(3, 3)], float16, Default, [(3, 3), (4, 4)]], [float16, Default, [(4, 4)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_9MatMul_Op', 'aidge', (
        'nn.functional.linear:s0_3_4x3_4_float16',)),
    ('Max', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(5, 5), (10, 10), (5, 5)], float16, NCW, [(5, 5), (10, 10), (5, 5)]], [float16, NCW, [(5, 5), (10, 10), (5, 5)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_6Max_Op', 'aidge', (
        'clamp:s0_5x10x5_5x10x5_5x10x5_float16',)),
    ('MaxPooling', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, NCHW, [(1, 1), (2, 2), (3, 3), (6, 6)]], [float16, NCHW, [(1, 1), (2, 2), (1, 1), (3, 3)], int64, NCHW, [(1, 1), (2, 2), (1, 1), (3, 3)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_13MaxPooling_Op', 'aidge', (
        'nn.functional.max_pool2d:s0_1x2x3x6_kernelsize3_stride2_ceilmodeTrue_padding0_dilat_f6d8ff02_float16',)),
    ('MaxPooling', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, NCHW, [(1, 1), (2, 2), (3, 3), (6, 6)]], [int64, NCHW, [(1, 1), (2, 2), (1, 1), (3, 3)], int64, NCHW, [(1, 1), (2, 2), (1, 1), (3, 3)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_13MaxPooling_Op', 'aidge', (
        'nn.functional.max_pool2d:s0_int641x2x3x6_kernelsize3_stride2_ceilmodeTrue_padding0__cd74e810_int64',)),
    ('MetaOperator', 'compile', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(20, 20)]], [float16, Default, [(20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_15MetaOperator_Op', 'aidge', (
        'nn.functional.softplus:s0_20_beta3_threshold0_2_float16',)),
    ('Mul', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, NCW, [(1, 1), (6, 6), (3, 3)], float16, Default, [(6, 6), (1, 1)]], [float16, NCW, [(1, 1), (6, 6), (3, 3)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_6Mul_Op', 'aidge', (
        'nn.functional.group_norm:s0_1x6x3_2_weight6_bias6_eps0_5_float16',)),
    ('Mul', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(20, 20)], float16, Default, [(20, 20)]], [float16, Default, [(20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_6Mul_Op', 'aidge', (
        'nn.functional.silu:s0_20_float16',)),
    ('Mul', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [], float16, Default, []], [float16, Default, []]" for registrable object N5Aidge16OperatorImpl_cpuINS_6Mul_Op', 'aidge', (
        'mul:s0_0d_0d_float16',)),
    ('Mul', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(10, 10), (10, 10)], float16, Default, [(10, 10), (10, 10)]], [float16, Default, [(10, 10), (10, 10)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_6Mul_Op', 'aidge', (
        'nn.functional.gelu:s0_10x10_approximatenone_float16', 'nn.functional.hardswish:s0_10x10_float16',)),
    ('Pow', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [], float16, Default, []], [float16, Default, []]" for registrable object N5Aidge16OperatorImpl_cpuINS_6Pow_Op', 'aidge', (
        'pow:s0_0d_0d_float16',)),
    ('ReLU', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, []], [float16, Default, []]" for registrable object N5Aidge16OperatorImpl_cpuINS_7ReLU_Op', 'aidge', (
        'nn.functional.relu:s0_0d_float16',)),
    ('ReLU', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, Default, []], [int64, Default, []]" for registrable object N5Aidge16OperatorImpl_cpuINS_7ReLU_Op', 'aidge', (
        'nn.functional.relu:s0_int640d_int64',)),
    ('Reciprocal', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(20, 20)]], [float16, Default, [(20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_13Reciprocal_Op', 'aidge', (
        'reciprocal:s0_20_float16',)),
    ('ReduceMax', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [], int64, Default, [(0, 0)]], [float16, Default, [(1, 1)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_12ReduceMax_Op', 'aidge', (
        'amax:s0_0d_float16',)),
    ('ReduceMax', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, Default, [], int64, Default, [(0, 0)]], [int64, Default, [(1, 1)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_12ReduceMax_Op', 'aidge', (
        'amax:s0_int640d_int64',)),
    ('ReduceMean', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [], any, Any, []], [float16, Default, [(1, 1)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_13ReduceMean_Op', 'aidge', (
        'mean:s0_0d_float16',)),
    ('ReduceMin', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, Default, [], int64, Default, [(0, 0)]], [int64, Default, [(1, 1)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_12ReduceMin_Op', 'aidge', (
        'amin:s0_int640d_int64',)),
    ('ReduceMin', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [], int64, Default, [(0, 0)]], [float16, Default, [(1, 1)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_12ReduceMin_Op', 'aidge', (
        'amin:s0_0d_float16',)),
    ('ReduceSum', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [], any, Any, []], [float16, Default, [(1, 1)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_12ReduceSum_Op', 'aidge', (
        'sum:s0_0d_float16',)),
    ('Sigmoid', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, Default, [(20, 20)]], [int64, Default, [(20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_10Sigmoid_Op', 'aidge', (
        'sigmoid:s0_int6420_int64',)),
    ('Sigmoid', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(20, 20)]], [float16, Default, [(20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_10Sigmoid_Op', 'aidge', (
        'sigmoid:s0_20_float16',)),
    ('Slice', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(5, 5), (5, 5), (5, 5)], int64, Default, [(1, 1)], int64, Default, [(1, 1)], int64, Default, [(1, 1)], any, Any, []], [float16, NCW, []]" for registrable object N5Aidge16OperatorImpl_cpuINS_8Slice_Op', 'aidge', (
        'narrow:s0_5x5x5_1_2_2_float16',)),
    ('Softmax', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(5, 5)]], [float16, Default, [(5, 5)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_10Softmax_Op', 'aidge', (
        'softmax:s0_5_0_float16',)),
    ('Sqrt', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(20, 20), (20, 20)]], [float16, Default, [(20, 20), (20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_7Sqrt_Op', 'aidge', (
        'sqrt:s0_20x20_float16',)),
    ('Sub', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [], float16, Default, []], [float16, Default, []]" for registrable object N5Aidge16OperatorImpl_cpuINS_6Sub_Op', 'aidge', (
        'sub:s0_0d_0d_float16',)),
    ('Tanh', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[float16, Default, [(20, 20), (20, 20)]], [float16, Default, [(20, 20), (20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_7Tanh_Op', 'aidge', (
        'tanh:s0_20x20_float16',)),
    ('Tanh', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[int64, Default, [(20, 20), (20, 20)]], [int64, Default, [(20, 20), (20, 20)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_7Tanh_Op', 'aidge', (
        'tanh:s0_int6420x20_int64',)),
    ('Where', 'forward', 'forward_not_implemented', 'missing or invalid registrar key: "[boolean, Default, [(10, 10), (10, 10)], float16, Default, [(10, 10), (10, 10)], float16, Default, [(10, 10), (10, 10)]], [float16, Default, [(10, 10), (10, 10)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_8Where_Op', 'aidge', (
        'where:s0_10x10_bool10x10_10x10_float16',)),
    ('exp', 'backward', 'gradients_differ', 'Tensors are not close at input grad [0]!', 'precision', (
        'exp:s0_20_float16',)),
    ('nn.functional.leaky_relu', 'backward', 'gradients_differ', 'Tensors are not close at input grad [0]!', 'aidge', (
        'nn.functional.leaky_relu:s0_10x10_float64',)),
    ('amax', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'amax:s0_0d_float64',)),
    ('amin', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'amin:s0_0d_float64',)),
    ('mean', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'mean:s0_0d_float64',)),
    ('sum', 'forward', 'output_shape_differs', 'Shapes do not match at output', 'aidge', (
        'sum:s0_0d_float64', 'sum:s0_int640d_int64',)),
    ('nn.functional.avg_pool2d', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'export', (
        'nn.functional.avg_pool2d:s0_1x3x9x9_3_1_1_True_False_2_float64',)),
    ('nn.functional.conv1d', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'aidge', (
        'nn.functional.conv1d:s0_1x3x4_3x3x3_3_stride2_padding2_groups1_float16',)),
    ('nn.functional.conv2d', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'aidge', (
        'nn.functional.conv2d:s0_1x3x4x4_3x3x3x3_3_stride22_padding2_groups1_float16',)),
    ('nn.functional.conv_transpose2d', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'export', (
        'nn.functional.conv_transpose2d:s0_1x3x4x4_3x3x3x3_3_stride22_padding2_outputpadding11_groups1_float16',)),
    ('nn.functional.softplus', 'forward', 'outputs_differ', 'Tensors are not close at output!', 'export', (
        'nn.functional.softplus:s0_20_beta3_threshold0_2_float64',)),
    ('Elu', 'import', 'unsupported_operator', '(ONNX op Elu)', 'aidge', (
        'nn.functional.elu:s0_20_float16', 'nn.functional.elu:s0_20_float64',)),
    ('LayerNormalization', 'import', 'unsupported_operator', '(ONNX op LayerNormalization)', 'aidge', (
        'nn.functional.layer_norm:s0_1x2x3_1_2_3_1x2x3_1x2x3_eps0_5_float16',
        'nn.functional.layer_norm:s0_1x2x3_1_2_3_1x2x3_1x2x3_eps0_5_float64',)),
)
