"""Issue 47 item 4, the bridge's own floor: what was made cheaper keeps its promise.

``torch_tensor_to_aidge`` shares a contiguous CPU tensor with Aidge and keeps the torch
memory alive exactly as long as the Python Aidge tensor lives, through a weak reference
with a callback (it was a ``weakref.finalize``; the speed is measured in
tools/speed_bridge.py, never asserted here)."""
from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest
import torch

pytest.importorskip("aidge_core")
pytest.importorskip("aidge_backend_cpu")

from interop.bridge import tensors  # noqa: E402


def test_shared_memory_lives_as_long_as_each_aidge_tensor_and_no_longer():
    before = len(tensors._HELD)
    sources = [torch.arange(6, dtype=torch.float32).reshape(2, 3) + k for k in range(50)]
    watches = [weakref.ref(x) for x in sources]
    shared = [tensors.torch_tensor_to_aidge(x) for x in sources]
    del sources
    gc.collect()
    assert all(w() is not None for w in watches)  # held by the Aidge tensors alone
    for k, a in enumerate(shared):
        np.testing.assert_array_equal(np.asarray(a), np.arange(6, dtype=np.float32).reshape(2, 3) + k)
    del a, shared[::2]  # every other one released, the rest still held
    gc.collect()
    assert [w() is None for w in watches] == [k % 2 == 0 for k in range(50)]
    del shared
    gc.collect()
    assert all(w() is None for w in watches)
    assert len(tensors._HELD) == before  # nothing kept behind


def test_shared_memory_bookkeeping_from_many_threads():
    before = len(tensors._HELD)
    errors = []

    def work(seed: int) -> None:
        try:
            for k in range(200):
                x = torch.full((3, 4), float(seed * 1000 + k))
                a = tensors.torch_tensor_to_aidge(x)
                del x
                if float(np.asarray(a)[2, 3]) != float(seed * 1000 + k):
                    errors.append((seed, k))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gc.collect()
    assert errors == []
    assert len(tensors._HELD) == before
