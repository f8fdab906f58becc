"""The library never prints: an export that fails on every route raises its ExportError and
writes nothing on stdout or stderr (before 2026-12-06: 38 lines of torch's fake_tensor traceback,
logged by the dynamo route, on stderr)."""
from __future__ import annotations

import pytest
import torch

from interop import wrap
from interop.errors import ExportError


def test_an_export_that_fails_on_every_route_prints_nothing(capfd):
    with pytest.raises(ExportError) as info:
        wrap(torch.nn.Linear(16, 4), (1, 3))  # the input does not fit the layer
    out, err = capfd.readouterr()
    assert (out, err) == ("", ""), err[:500]
    assert "mat1 and mat2 shapes cannot be multiplied" in str(info.value)  # the reason is in the error, not on stderr
