"""No silent wrong answer (issue 26): each reproducer found on outside code is held here.

- a new batch size through a data-dependent Resize (Upsample): the sizes Aidge kept from the
  first call gave a batch-1 output for a batch-2 input, then heap corruption (run in a child);
- the shape guard: an Aidge output of another shape than torch's is an OutputShapeError;
- one AidgeModule called from two threads; six threads wrapping at once;
- one verdict per model (a wrapper in training mode around a network in eval mode);
- models with keyword arguments (Hugging Face) wrap directly;
- random callables are not comparable; weights are a copy, refreshed by ``reload_weights``;
  bfloat16 named; ``warnings.filters`` untouched by the first wrap; ``verify`` after torch
  used its thread pool.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import torch
from torch import nn

import interop
from interop.equivalence.isolation import run_isolated

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, env_drop=(), timeout=300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in env_drop and not k.startswith("PYTEST_")}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


# -- 1. a new batch size through Resize -------------------------------------------------------
def _upsample_calls(head: str, first: int, batches: list[int]):
    torch.manual_seed(0)
    layers = {"conv": [nn.Upsample(scale_factor=2, mode="bilinear"), nn.Conv2d(4, 2, 1)],
              "groupnorm": [nn.Upsample(scale_factor=2, mode="nearest"), nn.GroupNorm(2, 4)]}[head]
    m = nn.Sequential(*layers).eval()
    am = interop.wrap(m, (first, 4, 4, 4))
    rows = []
    for b in batches:
        x = torch.randn(b, 4, 4, 4)
        y = am(x)
        rows.append((tuple(y.shape), tuple(m(x).shape), float((y - m(x)).abs().max())))
    return rows


@pytest.mark.parametrize("head", ["conv", "groupnorm"])
@pytest.mark.parametrize("first, batches", [(1, [1, 2, 1, 3]), (2, [2, 1, 3, 2])])
def test_upsample_at_a_new_batch_size_is_right(head, first, batches):
    # before: (1, 4, 4, 4) then batch 2 gave torch.Size([1, 2, 8, 8]), then "corrupted
    # double-linked list" (SIGABRT); with GroupNorm a Reshape size error then a double free
    rows = run_isolated(_upsample_calls, head, first, batches, timeout=120)
    for got, want, err in rows:
        assert got == want
        assert err < 1e-5


def _guard_on_a_wrong_sized_output():
    m = nn.Sequential(nn.Upsample(scale_factor=2, mode="bilinear"), nn.Conv2d(4, 2, 1)).eval()
    am = interop.wrap(m, (2, 4, 4, 4))
    am(torch.randn(2, 4, 4, 4))
    runner = am._runner
    run = runner.run_forward

    def stale(tensors):  # what Aidge 0.10.1 did without mark_dynamic_dims: the first call's sizes
        run(tensors)
        runner.output_tensors[0].resize([2, 2, 8, 8])

    runner.run_forward = stale
    try:
        am(torch.randn(1, 4, 4, 4))
    except interop.errors.OutputShapeError as exc:
        return str(exc), exc.phase, exc.node
    return None


def test_the_shape_guard_stops_an_output_of_another_shape_than_torchs():
    from interop.categories import categorize

    text, phase, node = run_isolated(_guard_on_a_wrong_sized_output, timeout=120)
    assert "actual (2, 2, 8, 8) vs expected (1, 2, 8, 8)" in text and "[(1, 4, 4, 4)]" in text
    assert phase == "forward" and node == "data_1_Conv"
    assert categorize(text)[0] == "output_shape_differs"


def test_the_shape_guard_costs_nothing_at_the_wrapped_shapes():
    m = nn.Linear(4, 3).eval()
    am = interop.wrap(m, (2, 4))
    x = torch.randn(2, 4)
    assert torch.allclose(am(x), m(x), atol=1e-6)
    assert am._runner.expected_shapes == [(2, 3)]


# -- 2. concurrency ----------------------------------------------------------------------------
def _in_two_threads(check, calls: int) -> tuple[list[int], list[int], list[BaseException]]:
    """``check(k, gen)`` ``calls`` times in each of two threads (k = 0, 1; ``gen`` seeded per
    thread); returns (wrong answers, calls done, errors) per thread."""
    wrong, done, errors = [0, 0], [0, 0], []

    def work(k):
        gen = torch.Generator().manual_seed(10 + k)
        try:
            for _ in range(calls):
                wrong[k] += not check(k, gen)
                done[k] += 1
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return wrong, done, errors


def test_one_module_called_from_two_threads_gives_each_its_own_answer():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8)).eval()
    am = interop.wrap(m, (4, 16))

    def check(k, gen):
        x = torch.randn(4, 16, generator=gen) * (k + 1)
        return torch.allclose(am(x), m(x), rtol=1e-4, atol=1e-5)

    wrong, done, errors = _in_two_threads(check, 300)
    # before: 2-33 of 600 calls returned the other thread's output
    assert not errors and done == [300, 300] and wrong == [0, 0]


def test_forward_and_backward_from_two_threads_give_each_its_own_gradients():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    am = interop.wrap(m, (2, 8))

    def check(k, gen):
        x = torch.randn(2, 8, generator=gen) * (k + 1)
        xa, xt = x.clone().requires_grad_(), x.clone().requires_grad_()
        am(xa).sum().backward()
        m(xt).sum().backward()
        return torch.allclose(xa.grad, xt.grad, rtol=1e-4, atol=1e-5)

    wrong, done, errors = _in_two_threads(check, 60)
    assert not errors and done == [60, 60] and wrong == [0, 0]


def test_six_threads_wrapping_at_once_then_the_process_prints():
    done = _python("""
        import os, sys, threading, torch, interop
        errors = []
        def wrap_some():
            for _ in range(4):
                try:
                    interop.wrap(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()), (2, 8))
                except Exception as exc:
                    errors.append(repr(exc)[:200])
        stdout = sys.stdout
        threads = [threading.Thread(target=wrap_some) for _ in range(6)]
        [t.start() for t in threads]; [t.join() for t in threads]
        print("errors", len(errors), errors[:1], sys.stdout is stdout, flush=True)
        os.write(1, b"fd1 ok\\n")
    """)
    # before: 14-16 of 24 wraps raised ExportError and nothing could be printed afterwards
    assert done.returncode == 0, done.stderr[-2000:]
    assert "errors 0 [] True" in done.stdout and "fd1 ok" in done.stdout


# -- 3. one verdict per model ------------------------------------------------------------------
class _Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(torch.tanh(self.fc(x)))


class _Wrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x) * 2


def test_a_wrapper_in_training_mode_around_an_eval_network_is_computed_as_torch_runs_it():
    torch.manual_seed(0)
    inner = _Inner().eval()
    wrapper = _Wrapper(inner)  # train mode (as constructed); the network inside in eval mode
    x = torch.randn(3, 8)
    am = interop.wrap(wrapper, example_inputs=[x])
    # before: exported all in training mode (Dropout active): off by 2.2 on BERT
    assert torch.allclose(am(x), wrapper(x), atol=1e-6)
    assert wrapper.training and not inner.training and not inner.drop.training  # modes untouched


def test_verify_of_the_wrapper_and_of_the_network_agree():
    torch.manual_seed(0)
    inner = _Inner().eval()
    x = torch.randn(3, 8)
    a = interop.verify(_Wrapper(inner), x)
    b = interop.verify(inner, x)
    # before: the wrapper's verdict was fail / outputs_differ / export (verify put the whole
    # model in the wrapper's mode)
    assert a.outcome == b.outcome == "pass", (a.summary, b.summary)
    assert not inner.training


def test_a_random_callable_is_not_comparable():
    v = interop.verify(nn.Dropout(0.5).train(), torch.randn(4, 8))
    # before: outputs_differ attributed to the export
    assert v.outcome == "error" and v.category == "not_comparable (test strategy)"
    assert v.attribution == "unknown"


def test_attribution_feeds_onnxruntime_by_input_name():
    from interop.bridge.onnx_export import export_to_onnx
    from interop.bridge.onnx_export_graph import default_input_names
    from interop.oracle.onnxruntime import run_onnxruntime

    class IgnoresFirst(nn.Module):
        def forward(self, a, b):
            return torch.ones_like(a) + b * 2  # the export drops input_0 (only its shape is used)

    a, b = torch.randn(2, 3), torch.randn(2, 3)
    exported = export_to_onnx(IgnoresFirst(), [a, b])
    out = run_onnxruntime(exported.proto, [a, b], input_names=default_input_names(2))[0]
    assert torch.allclose(torch.from_numpy(out), 1 + b * 2)


# -- 4. models with keyword arguments ----------------------------------------------------------
class _Keywords(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x=None, mask=None, scale: float = 1.0, return_dict: bool = True, **kwargs):
        y = self.fc(x) * scale
        if mask is not None:
            y = y * mask
        return {"out": y} if return_dict else (y,)


def test_a_forward_with_keyword_arguments_wraps_and_is_called_by_name():
    torch.manual_seed(0)
    m = _Keywords().eval()
    x, mask = torch.randn(2, 6), (torch.rand(2, 4) > 0.5).float()
    am = interop.wrap(m, example_inputs=[x], example_kwargs={"mask": mask, "scale": 0.5})
    want = m(x, mask=mask, scale=0.5)["out"]
    assert torch.allclose(am(x, mask=mask, scale=0.5)["out"], want, atol=1e-6)
    assert torch.allclose(am(x=x, mask=mask, scale=0.5)["out"], want, atol=1e-6)
    assert [n for n, _ in am.named_parameters()] == ["fc.weight", "fc.bias"]
    with pytest.raises(TypeError, match="wrapped with 0.5 where this call gives 2.0"):
        am(x, mask=mask, scale=2.0)
    with pytest.raises(TypeError, match="calls of the form _Keywords"):
        am(x)


def test_optional_parameters_are_not_filled_positionally():
    m = _Keywords().eval()
    x = torch.randn(2, 6)
    am = interop.wrap(m, example_inputs=[x])
    assert torch.allclose(am(x)["out"], m(x)["out"], atol=1e-6)


def _transformers():
    return pytest.importorskip("transformers")  # requirements/test.txt installs it


def _tiny_bert():
    transformers = _transformers()
    torch.manual_seed(0)
    cfg = transformers.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                  vocab_size=100, max_position_embeddings=64)
    return transformers.BertModel(cfg).eval()


def test_bert_wraps_directly():
    bert = _tiny_bert()
    ids = torch.randint(0, 100, (1, 8), generator=torch.Generator().manual_seed(0))
    # before: ExportError "BertModel.forward() got multiple values for argument 'use_cache'"
    am = interop.wrap(bert, example_inputs=[ids])
    out, want = am(ids), bert(ids)
    assert torch.allclose(out.last_hidden_state, want.last_hidden_state, atol=1e-5)
    assert torch.allclose(am(input_ids=ids).pooler_output, want.pooler_output, atol=1e-5)


def test_bert_wrapper_verdicts_agree_and_blame_no_export():
    bert = _tiny_bert()

    class Embeds(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(inputs_embeds=x).last_hidden_state

    x = torch.randn(1, 8, 32, generator=torch.Generator().manual_seed(1))
    wrapped = Embeds(bert)  # training mode, BERT inside in eval mode
    am = interop.wrap(wrapped, example_inputs=[x])
    assert torch.allclose(am(x), wrapped(x), atol=1e-5)  # before: off by 1.9
    a = interop.verify(wrapped, x)
    b = interop.verify(bert, inputs_embeds=x)
    for v in (a, b):  # the forward matches; the backward stops at an operator Aidge lacks
        assert v.category == "backward_not_implemented" and v.attribution == "aidge", v.summary


def test_an_export_that_still_fails_says_what_the_caller_can_do():
    transformers = _transformers()
    torch.manual_seed(0)
    gpt = transformers.GPT2Model(transformers.GPT2Config(n_embd=32, n_layer=1, n_head=2, vocab_size=100,
                                                         n_positions=32)).eval()
    ids = torch.randint(0, 100, (1, 8))
    with pytest.raises(interop.errors.ExportError) as info:
        interop.wrap(gpt, example_inputs=[ids])
    note = "\n".join(getattr(info.value, "__notes__", []))
    assert "GPT2Model(input_ids=<tensor (1, 8)>)" in note and "use_cache=False" in note
    assert "failed for GPT2Model" in str(info.value)


# -- 5. the smaller ones -----------------------------------------------------------------------
def test_weights_are_a_copy_refreshed_by_reload_weights():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()).eval()
    am = interop.wrap(m, (1, 3, 8, 8))
    x = torch.randn(1, 3, 8, 8)
    with torch.no_grad():
        m[0].weight.mul_(10)
        m[1].running_mean.add_(1)
    assert not torch.allclose(am(x), m(x), atol=1e-3)  # the documented copy
    am.reload_weights(m)
    assert torch.allclose(am(x), m(x), atol=1e-4)
    with pytest.raises(KeyError, match="nope"):
        am.reload_weights({"nope": torch.zeros(1)})


def test_a_bfloat16_input_is_refused_by_name():
    with pytest.raises(TypeError, match=r"input 0 has dtype torch\.bfloat16"):
        interop.wrap(nn.ReLU(), example_inputs=[torch.randn(2, 3, dtype=torch.bfloat16)])


def test_the_first_wrap_leaves_the_warning_filters_as_they_were():
    done = _python("""
        import warnings
        import torch, interop
        before = list(warnings.filters)  # after the caller's own imports: what the library does
        interop.wrap(torch.nn.Linear(3, 2), (1, 3))
        interop.verify(torch.relu, torch.randn(2, 3))
        print("same", warnings.filters == before, len(before), len(warnings.filters))
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "same True" in done.stdout, done.stdout  # before: 5 filters added (requests, urllib3, protobuf)


def test_verify_after_torch_used_its_thread_pool_does_not_hang():
    done = _python("""
        import torch, interop
        torch.set_num_threads(2)
        m = torch.nn.Linear(256, 256)
        x = torch.randn(64, 256)
        for _ in range(3):
            m(x) @ torch.randn(256, 1024)
        v = interop.verify(m, x, timeout=60)
        print(v.outcome, torch.get_num_threads())
    """, env_drop=("OMP_NUM_THREADS",))
    # before: every verify in such a process was "crash hang" after its 120 s timeout
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[:2] == ["pass", "2"], done.stdout


# -- the sweep: a new batch size on every zoo model and decoder graph --------------------------
def _sweep_cases():
    from interop.diagnostics.batch_sweep import decoder_graphs, zoo_graphs

    return zoo_graphs() + decoder_graphs()


@pytest.mark.parametrize("name, factory, size", _sweep_cases(), ids=[c[0] for c in _sweep_cases()])
def test_batch_sweep_has_no_silent_wrong_answer_and_no_crash(name, factory, size):
    from interop.diagnostics.batch_sweep import MATCH, sweep_isolated

    row = sweep_isolated(name, factory, size)
    assert not row.silent and not row.crashed, row.calls
    assert row.calls[0][1] in (MATCH, "error")


def _unbuildable():
    raise ValueError("num_channels (4) must be divisible by num_groups (8)")


def test_a_model_that_cannot_be_built_is_a_loud_row_not_a_crash():
    from interop.diagnostics.batch_sweep import CRASH, LOUD, sweep_isolated

    row = sweep_isolated("unbuildable", _unbuildable, (2, 3))
    assert not row.crashed and row.calls[0][1] == LOUD and "divisible" in row.calls[0][3]
    assert CRASH not in {row.calls[0][1], row.calls[0][2]}
