"""Issue 42: a bundle stops where the bridge stops. The bridge refuses a graph at compile when Aidge
cannot compute a node's output dims and only logs it (interop.bridge.graph.check_dims_forwarded);
run anyway, the graph writes outside its undefined output. The generated repro.py makes the same
check and says so with Aidge's words, instead of running the forward (which hung or died by
SIGABRT, "free(): invalid next size", on the channel-multiplier depthwise convolution of Aidge's
benchmark configurations: `ConvDepthwise2D_attr_channel_multiplier_2` and its `_no_bias` twin)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from interop import wrap

from bundle_case import captured_case, fresh_repro

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _channel_multiplier_2():
    torch.manual_seed(0)
    wrap(torch.nn.Conv2d(3, 6, 3, groups=3).eval(), [(2, 3, 8, 8)])


def test_the_script_refuses_at_compile_what_the_bridge_refuses_with_aidge_s_words(tmp_path):
    folder = tmp_path / "dw"
    meta, failure = captured_case(tmp_path, "dw", _channel_multiplier_2, timeout=180)
    assert "cannot compute the output dims" in str(failure), failure  # the bridge's refusal
    assert meta["repro"]["exit"] == 1, meta["repro"]
    line = meta["repro"]["line"]
    assert line.startswith("DEFECT PRESENT: compile: Aidge cannot compute the output dims of node"), line
    assert "Wrong input size ([2, 3, 8, 8]) for ConvDepthWise operator. Expected dims are [x, 6, x, x]" in line
    # as an Aidge developer runs it: a new interpreter where torch and this suite cannot be imported
    done = fresh_repro(folder, timeout=60)
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

    meta, _ = captured_case(tmp_path, "dw1", fine_but_compared, timeout=180)
    assert meta["repro"]["exit"] == 0 and meta["repro"]["line"].startswith("FIXED"), meta["repro"]


def test_the_script_s_check_skips_the_nodes_the_bridge_s_skips():
    """repro.py cannot import this suite, so its copy of the bridge's check
    (interop/reproducers/body.py) keeps its own list of the node types whose output dims come
    from their first input's values: it must stay the bridge's list."""
    from interop.bridge import graph
    from interop.reproducers import body as repro_body

    assert repro_body._DIMS_FROM_INPUT_0_VALUES == graph._DIMS_FROM_INPUT_0_VALUES
