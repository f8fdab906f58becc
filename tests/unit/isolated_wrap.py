"""One helper for the tests that kill a case child inside the bridge: wrap a module in a forked
child (``run_isolated``) and return the :class:`~interop.errors.AidgeCrash` it ended with."""
from __future__ import annotations

import pytest
import torch

from interop.equivalence.isolation import run_isolated
from interop.errors import AidgeCrash


def _wrap(module_type: type, input_size: tuple) -> None:
    from interop import wrap

    wrap(module_type(), input_size)


def crash_of_wrapping(module_type: type[torch.nn.Module], timeout: float, input_size: tuple = (1, 2)) -> AidgeCrash:
    """The crash of ``wrap(module_type(), input_size)`` run in a forked child with ``timeout``."""
    with pytest.raises(AidgeCrash) as caught:
        run_isolated(_wrap, module_type, input_size, timeout=timeout)
    return caught.value
