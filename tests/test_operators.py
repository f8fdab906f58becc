"""The operator equivalence suite: every operator of :mod:`interop.catalog`, case by case,
PyTorch against Aidge through :class:`interop.ModelTester` (forward; loss, backward,
gradients and an SGD step when the case trains; over several epochs so that state carried
from one call to the next is tested too).

One fixture and one small test per operator; test ids read ``<Op>_<case path>``
(``Conv2D_attributes_kernel_square``, ``ReduceMean_axes_1_dim``), so ``-k Conv2D`` selects an
operator. Each case runs in a forked child (a crash inside Aidge fails that case with
category ``crash``), first checks that the imported Aidge graph really holds the operator
under test, and expected failures come from :mod:`interop.expected_failures` (strict).
"""
from __future__ import annotations

from interop.catalog import OPERATOR_CONFIGS
from interop.operator_suite import OperatorCaseRun, assert_operator_in_graph, make_operator_fixture, run_operator_case

#: several epochs, so state carried between calls (weights after a step, buffers) is tested
EPOCHS = 3


def check_equivalence(case: OperatorCaseRun) -> None:
    """The body of every operator test; runs in the isolated child process."""
    from interop import ModelTester

    assert_operator_in_graph(case["aidge_model"], case["aidge_types"], operator=case["config"].name)
    ModelTester(case["torch_model"], case["aidge_model"], name=case["name"], test_backward=case["test_backward"],
                epochs=EPOCHS, max_slowdown_ratio=None).test_multiple_step(case["input_size"], case["output_size"])


maxpool2d_case = make_operator_fixture(OPERATOR_CONFIGS["MaxPool2D"])


def test_MaxPool2D_interop(maxpool2d_case):
    run_operator_case(maxpool2d_case, check_equivalence)


avgpool2d_case = make_operator_fixture(OPERATOR_CONFIGS["AvgPool2D"])


def test_AvgPool2D_interop(avgpool2d_case):
    run_operator_case(avgpool2d_case, check_equivalence)


globalaveragepool_case = make_operator_fixture(OPERATOR_CONFIGS["GlobalAveragePool"])


def test_GlobalAveragePool_interop(globalaveragepool_case):
    run_operator_case(globalaveragepool_case, check_equivalence)


relu_case = make_operator_fixture(OPERATOR_CONFIGS["ReLU"])


def test_ReLU_interop(relu_case):
    run_operator_case(relu_case, check_equivalence)


leakyrelu_case = make_operator_fixture(OPERATOR_CONFIGS["LeakyReLU"])


def test_LeakyReLU_interop(leakyrelu_case):
    run_operator_case(leakyrelu_case, check_equivalence)


sigmoid_case = make_operator_fixture(OPERATOR_CONFIGS["Sigmoid"])


def test_Sigmoid_interop(sigmoid_case):
    run_operator_case(sigmoid_case, check_equivalence)


tanh_case = make_operator_fixture(OPERATOR_CONFIGS["Tanh"])


def test_Tanh_interop(tanh_case):
    run_operator_case(tanh_case, check_equivalence)


gelu_case = make_operator_fixture(OPERATOR_CONFIGS["GELU"])


def test_GELU_interop(gelu_case):
    run_operator_case(gelu_case, check_equivalence)


silu_case = make_operator_fixture(OPERATOR_CONFIGS["SiLU"])


def test_SiLU_interop(silu_case):
    run_operator_case(silu_case, check_equivalence)


softmax_case = make_operator_fixture(OPERATOR_CONFIGS["Softmax"])


def test_Softmax_interop(softmax_case):
    run_operator_case(softmax_case, check_equivalence)


logsoftmax_case = make_operator_fixture(OPERATOR_CONFIGS["LogSoftmax"])


def test_LogSoftmax_interop(logsoftmax_case):
    run_operator_case(logsoftmax_case, check_equivalence)


hardswish_case = make_operator_fixture(OPERATOR_CONFIGS["Hardswish"])


def test_Hardswish_interop(hardswish_case):
    run_operator_case(hardswish_case, check_equivalence)


hardsigmoid_case = make_operator_fixture(OPERATOR_CONFIGS["Hardsigmoid"])


def test_Hardsigmoid_interop(hardsigmoid_case):
    run_operator_case(hardsigmoid_case, check_equivalence)


softplus_case = make_operator_fixture(OPERATOR_CONFIGS["Softplus"])


def test_Softplus_interop(softplus_case):
    run_operator_case(softplus_case, check_equivalence)


elu_case = make_operator_fixture(OPERATOR_CONFIGS["ELU"])


def test_ELU_interop(elu_case):
    run_operator_case(elu_case, check_equivalence)


clip_case = make_operator_fixture(OPERATOR_CONFIGS["Clip"])


def test_Clip_interop(clip_case):
    run_operator_case(clip_case, check_equivalence)


conv1d_case = make_operator_fixture(OPERATOR_CONFIGS["Conv1D"])


def test_Conv1D_interop(conv1d_case):
    run_operator_case(conv1d_case, check_equivalence)


conv2d_case = make_operator_fixture(OPERATOR_CONFIGS["Conv2D"])


def test_Conv2D_interop(conv2d_case):
    run_operator_case(conv2d_case, check_equivalence)


convdepthwise2d_case = make_operator_fixture(OPERATOR_CONFIGS["ConvDepthwise2D"])


def test_ConvDepthwise2D_interop(convdepthwise2d_case):
    run_operator_case(convdepthwise2d_case, check_equivalence)


convtranspose2d_case = make_operator_fixture(OPERATOR_CONFIGS["ConvTranspose2D"])


def test_ConvTranspose2D_interop(convtranspose2d_case):
    run_operator_case(convtranspose2d_case, check_equivalence)


fc_case = make_operator_fixture(OPERATOR_CONFIGS["FC"])


def test_FC_interop(fc_case):
    run_operator_case(fc_case, check_equivalence)


reducemean_case = make_operator_fixture(OPERATOR_CONFIGS["ReduceMean"])


def test_ReduceMean_interop(reducemean_case):
    run_operator_case(reducemean_case, check_equivalence)


reducesum_case = make_operator_fixture(OPERATOR_CONFIGS["ReduceSum"])


def test_ReduceSum_interop(reducesum_case):
    run_operator_case(reducesum_case, check_equivalence)


reducemax_case = make_operator_fixture(OPERATOR_CONFIGS["ReduceMax"])


def test_ReduceMax_interop(reducemax_case):
    run_operator_case(reducemax_case, check_equivalence)


reducemin_case = make_operator_fixture(OPERATOR_CONFIGS["ReduceMin"])


def test_ReduceMin_interop(reducemin_case):
    run_operator_case(reducemin_case, check_equivalence)


add_case = make_operator_fixture(OPERATOR_CONFIGS["Add"])


def test_Add_interop(add_case):
    run_operator_case(add_case, check_equivalence)


sub_case = make_operator_fixture(OPERATOR_CONFIGS["Sub"])


def test_Sub_interop(sub_case):
    run_operator_case(sub_case, check_equivalence)


mul_case = make_operator_fixture(OPERATOR_CONFIGS["Mul"])


def test_Mul_interop(mul_case):
    run_operator_case(mul_case, check_equivalence)


div_case = make_operator_fixture(OPERATOR_CONFIGS["Div"])


def test_Div_interop(div_case):
    run_operator_case(div_case, check_equivalence)


pow_case = make_operator_fixture(OPERATOR_CONFIGS["Pow"])


def test_Pow_interop(pow_case):
    run_operator_case(pow_case, check_equivalence)


sqrt_case = make_operator_fixture(OPERATOR_CONFIGS["Sqrt"])


def test_Sqrt_interop(sqrt_case):
    run_operator_case(sqrt_case, check_equivalence)


exp_case = make_operator_fixture(OPERATOR_CONFIGS["Exp"])


def test_Exp_interop(exp_case):
    run_operator_case(exp_case, check_equivalence)


log_case = make_operator_fixture(OPERATOR_CONFIGS["Log"])


def test_Log_interop(log_case):
    run_operator_case(log_case, check_equivalence)


abs_case = make_operator_fixture(OPERATOR_CONFIGS["Abs"])


def test_Abs_interop(abs_case):
    run_operator_case(abs_case, check_equivalence)


neg_case = make_operator_fixture(OPERATOR_CONFIGS["Neg"])


def test_Neg_interop(neg_case):
    run_operator_case(neg_case, check_equivalence)


erf_case = make_operator_fixture(OPERATOR_CONFIGS["Erf"])


def test_Erf_interop(erf_case):
    run_operator_case(erf_case, check_equivalence)


reciprocal_case = make_operator_fixture(OPERATOR_CONFIGS["Reciprocal"])


def test_Reciprocal_interop(reciprocal_case):
    run_operator_case(reciprocal_case, check_equivalence)


matmul_case = make_operator_fixture(OPERATOR_CONFIGS["MatMul"])


def test_MatMul_interop(matmul_case):
    run_operator_case(matmul_case, check_equivalence)


batchnorm2d_case = make_operator_fixture(OPERATOR_CONFIGS["BatchNorm2D"])


def test_BatchNorm2D_interop(batchnorm2d_case):
    run_operator_case(batchnorm2d_case, check_equivalence)


layernorm_case = make_operator_fixture(OPERATOR_CONFIGS["LayerNorm"])


def test_LayerNorm_interop(layernorm_case):
    run_operator_case(layernorm_case, check_equivalence)


instancenorm_case = make_operator_fixture(OPERATOR_CONFIGS["InstanceNorm"])


def test_InstanceNorm_interop(instancenorm_case):
    run_operator_case(instancenorm_case, check_equivalence)


groupnorm_case = make_operator_fixture(OPERATOR_CONFIGS["GroupNorm"])


def test_GroupNorm_interop(groupnorm_case):
    run_operator_case(groupnorm_case, check_equivalence)


pad_case = make_operator_fixture(OPERATOR_CONFIGS["Pad"])


def test_Pad_interop(pad_case):
    run_operator_case(pad_case, check_equivalence)


concat_case = make_operator_fixture(OPERATOR_CONFIGS["Concat"])


def test_Concat_interop(concat_case):
    run_operator_case(concat_case, check_equivalence)


split_case = make_operator_fixture(OPERATOR_CONFIGS["Split"])


def test_Split_interop(split_case):
    run_operator_case(split_case, check_equivalence)


slice_case = make_operator_fixture(OPERATOR_CONFIGS["Slice"])


def test_Slice_interop(slice_case):
    run_operator_case(slice_case, check_equivalence)


transpose_case = make_operator_fixture(OPERATOR_CONFIGS["Transpose"])


def test_Transpose_interop(transpose_case):
    run_operator_case(transpose_case, check_equivalence)


reshape_case = make_operator_fixture(OPERATOR_CONFIGS["Reshape"])


def test_Reshape_interop(reshape_case):
    run_operator_case(reshape_case, check_equivalence)


flatten_case = make_operator_fixture(OPERATOR_CONFIGS["Flatten"])


def test_Flatten_interop(flatten_case):
    run_operator_case(flatten_case, check_equivalence)


resize_case = make_operator_fixture(OPERATOR_CONFIGS["Resize"])


def test_Resize_interop(resize_case):
    run_operator_case(resize_case, check_equivalence)


gather_case = make_operator_fixture(OPERATOR_CONFIGS["Gather"])


def test_Gather_interop(gather_case):
    run_operator_case(gather_case, check_equivalence)


embedding_case = make_operator_fixture(OPERATOR_CONFIGS["Embedding"])


def test_Embedding_interop(embedding_case):
    run_operator_case(embedding_case, check_equivalence)


where_case = make_operator_fixture(OPERATOR_CONFIGS["Where"])


def test_Where_interop(where_case):
    run_operator_case(where_case, check_equivalence)


shiftgelu_case = make_operator_fixture(OPERATOR_CONFIGS["ShiftGELU"])


def test_ShiftGELU_interop(shiftgelu_case):
    run_operator_case(shiftgelu_case, check_equivalence)


shiftmax_case = make_operator_fixture(OPERATOR_CONFIGS["ShiftMax"])


def test_ShiftMax_interop(shiftmax_case):
    run_operator_case(shiftmax_case, check_equivalence)
