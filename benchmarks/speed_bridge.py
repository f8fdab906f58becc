"""Side-by-side speed figures of the bridge itself (not an asv module: run it directly).

    OMP_NUM_THREADS=1 python benchmarks/speed_bridge.py [--threads N] [--upstream DIR]

Prints, in one run with torch and Aidge pinned to the same thread count:
  1. wrap() time of a LeNet-5 (median of several), and, with --upstream DIR (a folder where
     aidge-interop-torch 0.10.1 and onnxsim were installed with
     ``pip install --no-deps --target DIR aidge-interop-torch==0.10.1 onnxsim``), the
     upstream ``aidge_interop_torch.wrap`` on the same model, run inside a temporary
     directory because it writes ONNX files into the current one;
  2. AidgeModule forward vs the raw ``SequentialScheduler.forward`` on the same compiled
     graph (LeNet-5, batch 4), interleaved so that machine noise hits both alike.
Targets (issue 2): wrap >= 10x faster than upstream; forward <= 1.05x the raw scheduler.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "1")))
    parser.add_argument("--upstream", help="folder holding aidge_interop_torch 0.10.1 (+ onnxsim)")
    parser.add_argument("--repeat", type=int, default=2000, help="forward samples per side")
    return parser.parse_args()


def main() -> None:
    args = _parse()
    # OpenMP reads its thread count when the runtime loads: set it before torch/Aidge load.
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import numpy as np
    import torch

    import aidge_core
    from interop import wrap
    from interop.timing import pinned_threads
    from interop.zoo.models.lenet_model import LeNet

    with pinned_threads(args.threads) as threads:
        torch.manual_seed(0)
        model = LeNet().eval()
        print(f"threads: torch={torch.get_num_threads()} OMP_NUM_THREADS={threads}; "
              f"torch {torch.__version__}, aidge_core {aidge_core.__version__ if hasattr(aidge_core, '__version__') else '0.10.1'}")

        wrap_times = []
        for _ in range(5):
            start = time.perf_counter()
            am = wrap(model, (4, 1, 32, 32))
            wrap_times.append(time.perf_counter() - start)
        ours = statistics.median(wrap_times)
        print(f"wrap(LeNet-5): median {ours * 1e3:.1f} ms over {len(wrap_times)} "
              f"(min {min(wrap_times) * 1e3:.1f} ms)")
        if args.upstream:
            upstream = _upstream_wrap_time(args.upstream, model)
            print(f"upstream aidge_interop_torch.wrap(LeNet-5): {upstream * 1e3:.1f} ms  ->  "
                  f"ours is {upstream / ours:.1f}x faster (target >= 10x)")

        x = torch.randn(4, 1, 32, 32)
        raw_input = aidge_core.Tensor(x.numpy())
        scheduler = am.scheduler
        out_node, out_idx = am.graph.get_ordered_outputs()[0]

        def raw():
            scheduler.forward(True, [raw_input])
            return out_node.get_operator().get_output(out_idx)

        def raw_static():
            scheduler.forward(False, [raw_input])
            return out_node.get_operator().get_output(out_idx)

        def bridge():
            with torch.no_grad():
                return am(x)

        def bridge_grad():
            return am(x)

        ref = model(x).detach()
        assert np.allclose(np.array(raw()), ref.numpy(), atol=1e-5)
        assert torch.allclose(bridge(), ref, atol=1e-5)
        fns = {"raw": raw, "raw_static": raw_static, "bridge": bridge, "bridge_grad": bridge_grad}
        samples = {name: [] for name in fns}
        for _ in range(50):  # warm-up
            for fn in fns.values():
                fn()
        for _ in range(args.repeat):  # interleaved: noise hits all sides alike
            for name, fn in fns.items():
                start = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - start)
        med = {k: statistics.median(v) for k, v in samples.items()}
        print(f"forward LeNet-5 batch 4 (median of {args.repeat}, interleaved):")
        print(f"  raw SequentialScheduler.forward(True, [tensor]) : {med['raw'] * 1e6:8.1f} us")
        print(f"  raw SequentialScheduler.forward(False, [tensor]): {med['raw_static'] * 1e6:8.1f} us")
        best_raw = min(med["raw"], med["raw_static"])
        for key, label in (("bridge", "AidgeModule forward, no_grad"), ("bridge_grad", "AidgeModule forward, autograd")):
            print(f"  {label:<47}: {med[key] * 1e6:8.1f} us  -> {med[key] / med['raw']:.3f}x raw(True), "
                  f"{med[key] / best_raw:.3f}x the fastest raw (target <= 1.05x)")
        with torch.no_grad():
            torch_fwd = statistics.median(_time(lambda: model(x), 500))
        print(f"  torch forward, no_grad (reference)             : {torch_fwd * 1e6:8.1f} us")


def _time(fn, n):
    out = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def _upstream_wrap_time(folder: str, model) -> float:
    import copy

    sys.path.insert(0, folder)
    import aidge_interop_torch

    model = copy.deepcopy(model)  # upstream switches the model to train mode
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                start = time.perf_counter()
                aidge_interop_torch.wrap(model, (4, 1, 32, 32))
                return time.perf_counter() - start
        finally:
            os.chdir(cwd)


if __name__ == "__main__":
    main()
