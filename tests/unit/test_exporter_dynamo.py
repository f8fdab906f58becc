"""Issue 45: the dynamo route at its reach. The dynamo export now runs onnxscript's optimiser
with the model's parameters and buffers held as named graph inputs (the mapping back to torch
holds, nothing is fused into a convolution), and ``exporter="auto"`` moves on to the next route
when Aidge refuses a route's graph, recording each route's outcome.
Modules the project did not test this way: ``nn.TransformerEncoderLayer(16, 2, 32)`` and a
one-layer GPT-2 (random weights, offline). Before (4e189b7): the encoder layer's dynamo graph
held an empty Slice Aidge refuses (``Start (3) < End (2)``) and ``auto`` stopped at TorchScript's
graph, which Aidge refuses at its first forward (Reshape); GPT-2's dynamo graph held
SplitToSequence."""
from __future__ import annotations

import pytest
import torch

from interop import wrap
from interop.bridge.onnx_export import export_to_onnx
from interop.exporters import export_routes

pytest.importorskip("aidge_core")
pytest.importorskip("onnxscript")


def _encoder_layer():
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return (torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True).eval(),
                torch.randn(2, 5, 16))


def test_transformer_encoder_layer_runs_through_dynamo():
    model, x = _encoder_layer()
    am = wrap(model, example_inputs=[x], exporter="dynamo")
    assert not any(n.op_type in ("SplitToSequence",) for n in am.onnx_model.graph.node)
    with torch.no_grad():
        torch.testing.assert_close(am(x), model(x), rtol=1e-5, atol=1e-5)
    mapped = set(am._exported.initializer_to_state.values())
    assert {"self_attn.in_proj_weight", "linear1.weight", "norm1.weight"} <= mapped


def test_auto_moves_on_when_aidge_refuses_a_routes_graph():
    model, x = _encoder_layer()
    with export_routes() as routes:
        am = wrap(model, example_inputs=[x], exporter="auto")
    assert am.exporter == "dynamo"
    said = am._exported.failed_routes["torchscript"]
    assert said.startswith("Aidge refused the route's graph") and "Reshape" in said
    assert routes[0][0] == "dynamo" and "torchscript" in routes[0][1]
    with torch.no_grad():
        torch.testing.assert_close(am(x), model(x), rtol=1e-5, atol=1e-5)


def test_batchnorm_keeps_its_parameters_and_train_mode_on_the_optimised_dynamo_route():
    with torch.random.fork_rng():
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU())
    for mode in (True, False):
        net.train(mode)
        exported = export_to_onnx(net, [torch.randn(2, 3, 8, 8)], exporter="dynamo")
        ops = [n.op_type for n in exported.proto.graph.node]
        assert "BatchNormalization" in ops and "Conv" in ops, ops  # not fused into the convolution
        assert {"0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var"} <= set(
            exported.initializer_to_state.values())
        assert net.training is mode


def test_gpt2_dynamo_graph_reaches_aidge():
    gpt2 = pytest.importorskip("transformers.models.gpt2")
    config = gpt2.GPT2Config(n_embd=16, n_layer=1, n_head=2, n_positions=16, vocab_size=50, bos_token_id=0,
                             eos_token_id=0)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = gpt2.GPT2Model(config).eval()
    ids = torch.randint(0, 50, (1, 6), generator=torch.Generator().manual_seed(1))
    with pytest.raises(Exception) as info:  # noqa: PT011 - whatever Aidge says, it must be Aidge's import
        wrap(model, example_inputs=[ids], example_kwargs={"use_cache": False, "return_dict": False},
             exporter="dynamo")
    from interop.bridge.binding import BoundModule, CallBinding

    exported = export_to_onnx(BoundModule(model, CallBinding(model, [ids], {"use_cache": False,
                                                                            "return_dict": False})),
                              [ids], exporter="dynamo")
    ops = {n.op_type for n in exported.proto.graph.node}
    assert "SplitToSequence" not in ops
    # the graph reached Aidge's import; what stops it is an operator Aidge 0.10.1 lacks (IsNaN), a
    # finding of its own, not the export
    assert "Aidge import failed" in str(info.value) and "SplitToSequence" not in str(info.value)
    # verify's wrapper exports on the dynamo route as wrap does, and stops where wrap stops
    import interop

    verdict = interop.verify(model, ids, use_cache=False, return_dict=False, exporter="dynamo", isolate=False)
    assert verdict.outcome == "error" and verdict.phase == "import", verdict
    assert "Aidge import failed" in verdict.message and "SplitToSequence" not in verdict.message


def test_zoo_resnet_in_train_mode_is_exported_in_train_mode_on_the_dynamo_route():
    """Zoo ResNet's train mode on the dynamo route: torchlib (onnxscript 0.7.2) wrote every
    BatchNorm as an inference one (onnxruntime on that graph 0.93 off torch, as Aidge): the route
    now writes ``training_mode=1`` and onnxruntime on its graph computes what torch computes. Aidge
    0.10.1's BatchNorm2D ignores ``training_mode`` (the table's D-c80900db, as on the TorchScript
    route): ``wrap`` refuses the value at the first call, naming BatchNorm2D, and returns nothing."""
    from interop.oracle.onnxruntime import ort_session
    from interop.bridge.value_check import ValueMismatchError
    from interop.zoo.models import model_case

    case = model_case("ResNet")
    model = case["model"]().train()
    x = torch.randn(*case["input_size"], generator=torch.Generator().manual_seed(3))
    am = wrap(model, example_inputs=[x], exporter="dynamo")
    norms = [n for n in am.onnx_model.graph.node if n.op_type == "BatchNormalization"]
    assert norms and all(any(a.name == "training_mode" and a.i == 1 for a in n.attribute) for n in norms)
    session = ort_session(am.onnx_model)
    (ort_out,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    with torch.no_grad():
        expected = model(x)
    torch.testing.assert_close(torch.from_numpy(ort_out), expected, rtol=1e-4, atol=1e-4)
    assert model.training
    with pytest.raises(ValueMismatchError) as info, torch.no_grad():
        am(x)
    # the oracle's one attribution rule (its words: "onnxruntime on the same ONNX model agrees with torch")
    assert "BatchNorm2D" in str(info.value) and info.value.attribution == "aidge"
    assert "onnxruntime on the same ONNX model agrees with torch" in str(info.value)
    # the model's own mode is untouched; eval mode on the same route still matches
    assert model.training
    am_eval = wrap(model.eval(), example_inputs=[x], exporter="dynamo")
    with torch.no_grad():
        torch.testing.assert_close(am_eval(x), model(x), rtol=1e-4, atol=1e-4)
