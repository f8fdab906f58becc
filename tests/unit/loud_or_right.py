"""The contract issue 45's tests hold ``wrap`` to, *loud or right*, as helpers: seeded inputs and
models, a call that either raises the error that names the class or returns (the caller then
compares with torch), and the parameter gradients of an AidgeModule against its torch model's.
Used by tests/unit/test_wrap_loud_or_right.py and test_bridge_value_check.py."""
from __future__ import annotations

from typing import Any, Callable

import torch


def seeded(factory: Callable[[], Any], seed: int = 0) -> Any:
    """``factory()`` under torch's generator seeded with ``seed``, the caller's generator state kept."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return factory()


def loud_or_right(call: Callable[[], Any], error: type[BaseException]) -> tuple[Any, BaseException | None]:
    """``(call(), None)`` when the call returns: the caller compares the value with torch's; ``(None,
    the error)`` when it raises ``error``: the caller checks the error names the class (phase,
    blame). Any other exception is not caught: the test fails on it."""
    try:
        return call(), None
    except error as exc:
        return None, exc


def assert_same_parameter_gradients(wrapped: torch.nn.Module, model: torch.nn.Module, scale: float = 1) -> None:
    """Each of ``model``'s parameters' ``.grad`` times ``scale`` is the AidgeModule's of that name."""
    grads = dict(wrapped.named_parameters())
    for name, p in model.named_parameters():
        torch.testing.assert_close(grads[name].grad, scale * p.grad if scale != 1 else p.grad,
                                   msg=lambda m, name=name: f"grad of {name}: {m}")
