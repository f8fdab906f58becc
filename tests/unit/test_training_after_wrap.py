"""Training after ``wrap``, as the README shows it. A user read "backward in Aidge, gradients back
in torch" in the README's API block and stepped ``torch.optim.SGD(model.parameters())`` on the
torch model: no torch parameter got a ``.grad`` (the gradients are on the AidgeModule's
parameters, wrap() copies the weights), and the loss stayed the same for 3 steps, silently.

Now the block trains ``aidge_model.parameters()`` and its loss falls (run as a script, read from
README.md), and an optimiser stepping the wrapped torch model's parameters after an Aidge
backward warns ``WrappedParametersWarning``, naming the parameters and the fix. Before the change
the torch-parameters test failed (no warning) and the README block printed no loss."""
from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

from interop import wrap

pytest.importorskip("aidge_core")

from interop.bridge.module import WrappedParametersWarning  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _block(text: str, heading: str) -> str:
    """The first ```python block after ``heading``, as the file has it."""
    part = text[text.index(heading):]
    start = part.index("```python") + len("```python")
    return part[start:part.index("```", start)]


def _run_block(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8",
           "PYTHONPATH": str(ROOT)}
    # -W error::UserWarning: a WrappedParametersWarning (or any other) fails the block
    return subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", code], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _losses(stdout: str) -> list[float]:
    return [float(v) for v in re.findall(r"loss ([0-9.]+)", stdout)]


def test_the_readme_api_block_trains_the_wrapped_model(tmp_path):
    code = _block((ROOT / "README.md").read_text(encoding="utf-8"), "## The API in a page")
    assert "aidge_model.parameters()" in code and "model.parameters()" not in code.replace("aidge_model.", "")
    code += "\nassert torch.allclose(model(x), aidge_model(x), atol=1e-5)  # the weights copied back\n"
    done = _run_block(code, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    losses = _losses(done.stdout)
    assert len(losses) >= 3, done.stdout
    assert all(b < a for a, b in zip(losses, losses[1:])), losses  # falls at every step
    assert losses[-1] < 0.97 * losses[0], losses


def test_the_library_doc_block_trains_the_wrapped_model(tmp_path):
    code = _block((ROOT / "docs" / "library.md").read_text(encoding="utf-8"), "## Using the library")
    code += "\nprint(f'loss {loss.item():.6f}')\nfirst = torch.nn.functional.mse_loss(torch.nn.Linear(16, 4)(x), target)\n"
    code = code.replace("for step in range(5):\n", "losses = []\nfor step in range(5):\n")
    code = code.replace("    opt.step()", "    losses.append(loss.item())\n    opt.step()", 1)
    code += "assert all(b < a for a, b in zip(losses, losses[1:])), losses\n"
    done = _run_block(code, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]


def _model():
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))


def _data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(32, 16, generator=g), torch.randn(32, 4, generator=g)


def _step(opt, aidge_model, x, target) -> float:
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(aidge_model(x), target)
    loss.backward()
    opt.step()
    return loss.item()


def test_optimising_the_torch_models_parameters_is_named_not_silent(capsys):
    model = _model()
    aidge_model = wrap(model, (1, 16))
    x, target = _data()
    warm = torch.nn.Parameter(torch.ones(1))  # torch's first step imports modules that add their own filters
    warm.grad = torch.ones(1)
    torch.optim.SGD([warm], lr=0.1).step()
    filters = list(warnings.filters)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.warns(WrappedParametersWarning) as caught:
        first = _step(opt, aidge_model, x, target)
    assert list(warnings.filters) == filters  # the library changes no warning filter
    message = str(caught[0].message)
    for name in ("0.weight", "0.bias", "2.weight", "2.bias"):
        assert name in message
    assert "aidge_model.parameters()" in message and "changes nothing" in message
    assert caught[0].filename == __file__  # points at the caller's opt.step(), not at torch or interop
    assert all(p.grad is None for p in model.parameters())
    assert all(p.grad is not None for p in aidge_model.parameters())

    # the fix the warning names: the loss falls, and the weights go back into the torch model
    opt = torch.optim.SGD(aidge_model.parameters(), lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        losses = [_step(opt, aidge_model, x, target) for _ in range(3)]
    assert abs(losses[0] - first) < 1e-6  # the torch-parameters step changed nothing
    assert losses[2] < losses[1] < losses[0], losses
    model.load_state_dict(aidge_model.state_dict())
    with torch.no_grad():
        assert torch.allclose(model(x), aidge_model(x), atol=1e-5)
    out = capsys.readouterr()
    assert (out.out, out.err) == ("", "")  # warned, never printed


def test_aidges_own_optimiser_and_torch_trainings_are_not_warned():
    model = _model()
    aidge_model = wrap(model, (1, 16))
    x, target = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # a torch training of the torch model beside an Aidge backward (ModelTester's pattern)
        opt1 = torch.optim.SGD(model.parameters(), lr=0.1)
        opt1.zero_grad()
        torch.nn.functional.mse_loss(model(x), target).backward()
        torch.nn.functional.mse_loss(aidge_model(x), target).backward()
        opt1.step()
        # one optimiser over both parameter sets
        both = torch.optim.SGD(list(model.parameters()) + list(aidge_model.parameters()), lr=0.1)
        both.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(aidge_model(x), target).backward()
        both.step()
        # Aidge's own SGD
        aidge_model.attach_optimizer(lr=0.1)
        aidge_model.optimizer.zero_grad()
        before = torch.nn.functional.mse_loss(aidge_model(x), target)
        before.backward()
        aidge_model.optimizer_step()
        assert torch.nn.functional.mse_loss(aidge_model(x), target).item() < before.item()
        # a step over the torch model with no Aidge gradient waiting changes nothing either way: no warning
        aidge_model.zero_grad(set_to_none=True)
        opt1.zero_grad(set_to_none=True)
        opt1.step()


def test_the_watch_keeps_nothing_alive():
    model = _model()
    aidge_model = wrap(model, (1, 16))
    x, target = _data()
    torch.nn.functional.mse_loss(aidge_model(x), target).backward()
    import weakref
    ref = weakref.ref(aidge_model)
    del aidge_model
    gc.collect()
    assert ref() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.optim.SGD(model.parameters(), lr=0.1).step()  # its AidgeModule is gone: nothing to say
