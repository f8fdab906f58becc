"""Issue 42: a bundle stops where the bridge stops. The bridge refuses a graph at compile when Aidge
cannot compute a node's output dims and only logs it (interop.bridge.graph.check_dims_forwarded);
run anyway, the graph writes outside its undefined output. The generated repro.py makes the same
check and says so with Aidge's words, instead of running the forward (which hung or died by
SIGABRT, "free(): invalid next size", on the channel-multiplier depthwise convolution of Aidge's
benchmark configurations: `ConvDepthwise2D_attr_channel_multiplier_2` and its `_no_bias` twin)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from interop import wrap
from interop.bridge import capture
from interop.diagnostics import reproducer
from interop.equivalence.isolation import run_isolated

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _channel_multiplier_2():
    torch.manual_seed(0)
    wrap(torch.nn.Conv2d(3, 6, 3, groups=3).eval(), [(2, 3, 8, 8)])


def test_the_script_refuses_at_compile_what_the_bridge_refuses_with_aidge_s_words(tmp_path):
    folder = tmp_path / "dw"
    capture.start(folder, "dw", reproducer.write_bundle, tmp_path / "dw.log")
    try:
        with pytest.raises(Exception) as info:
            run_isolated(_channel_multiplier_2, timeout=180)
    finally:
        capture.stop()
    assert "cannot compute the output dims" in str(info.value), info.value  # the bridge's refusal
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["repro"]["exit"] == 1, meta["repro"]
    line = meta["repro"]["line"]
    assert line.startswith("DEFECT PRESENT: compile: Aidge cannot compute the output dims of node"), line
    assert "Wrong input size ([2, 3, 8, 8]) for ConvDepthWise operator. Expected dims are [x, 6, x, x]" in line
    # as an Aidge developer runs it: a new interpreter where torch and this suite cannot be imported
    code = ("import runpy, sys\nsys.modules['torch'] = None\nsys.modules['interop'] = None\n"
            "sys.argv = ['repro.py']\nrunpy.run_path('repro.py', run_name='__main__')\n")
    done = subprocess.run([sys.executable, "-I", "-c", code], cwd=folder, capture_output=True, text=True, timeout=60,
                          env={"PATH": os.environ.get("PATH", ""), "OMP_NUM_THREADS": "1"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DEFECT PRESENT: compile:" in done.stdout and "Expected dims are [x, 6, x, x]" in done.stdout
    assert not list(Path(folder).glob("aidge-*.log"))  # the script's temporary log is not left behind


def test_a_graph_whose_dims_compile_computes_is_still_run(tmp_path):
    """The check refuses nothing Aidge can run: a plain depthwise convolution (multiplier 1) in the
    same script runs to its comparison (a bundle written by hand from the same steps)."""
    from interop.bridge.value_check import checks_deferred

    def fine_but_compared():
        from interop.equivalence.tester import EquivalenceError

        torch.manual_seed(0)
        model = torch.nn.Conv2d(3, 3, 3, groups=3).eval()
        with checks_deferred():
            am = wrap(model, [(2, 3, 8, 8)])
            am(torch.randn(2, 3, 8, 8))
        raise EquivalenceError("forced", test="dw1", epoch=1, what="output", seed=0)

    folder = tmp_path / "dw1"
    capture.start(folder, "dw1", reproducer.write_bundle, tmp_path / "dw1.log")
    try:
        with pytest.raises(Exception):
            run_isolated(fine_but_compared, timeout=180)
    finally:
        capture.stop()
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["repro"]["exit"] == 0 and meta["repro"]["line"].startswith("FIXED"), meta["repro"]
