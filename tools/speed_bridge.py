"""Side-by-side speed figures of the bridge itself (not an asv module: run it directly).

    python tools/speed_bridge.py [--threads N] [--samples N] [--upstream DIR]

Prints, in one process with torch and Aidge pinned to the same thread count:

1. ``wrap()`` time of a LeNet-5 (median of 5), and, with ``--upstream DIR`` (a folder where
   aidge-interop-torch 0.10.1 and onnxsim were installed with
   ``pip install --no-deps --target DIR aidge-interop-torch==0.10.1 onnxsim``), the upstream
   ``aidge_interop_torch.wrap`` on the same model, run in a temporary directory because it
   writes ONNX files into the current one.
2. Forward and backward, per model (``ReLU`` on (1,), (2, 3, 8, 8), (8, 64, 32, 32); LeNet-5
   on (4, 1, 32, 32)), four columns timed interleaved (every block of calls of one column is
   followed by a block of each other column, so machine noise hits them alike):

   - ``torch``: the torch module call (forward) / ``torch.autograd.backward`` (backward);
   - ``raw``: what the asv benchmarks now call Aidge's time: ``SequentialScheduler.forward(
     False, [t])`` on inputs already in Aidge tensors / ``SequentialScheduler.backward()`` with
     the output gradients already set; nothing else;
   - ``aidge``: Aidge's own per-node times, from the scheduler's recorded scheduling
     (``save_scheduling_diagram``, 1 us resolution), summed over the nodes: a check that
     ``raw`` is the scheduler's work and not ours;
   - ``module``: the full ``AidgeModule`` call, what a user of ``wrap`` pays: forward under
     ``torch.no_grad()``; backward = ``torch.autograd.backward`` through the AidgeModule's
     autograd node (output gradients written into Aidge, input and parameter gradients
     handed back to torch).

   ``module - raw`` is the bridge's overhead. Forward figures are medians over ``--samples``
   blocks (a block is as many calls as last about 200 us, so the timer's cost is
   negligible); backward figures are medians over 5x ``--samples`` single calls, each after
   its own untimed fresh forward (a training step's pattern: Aidge resets its intermediate
   gradients only in a forward). Microseconds per call.

``--openmp-scope`` prints only the cost of the library's OpenMP default around each Aidge call
(:func:`_print_openmp_scope`), in a process where that default is in force: no ``OMP_*``
variable set (``--threads`` is not applied), torch imported before interop.

Targets (issue 10): forward ``module - raw`` <= 5 us at operator scale, ``module / raw`` <=
1.02 on LeNet-5; backward overhead measured and reported the same way.
Beyond the public API (``wrap``, ``AidgeModule.graph``) only the raw scheduler is reached for
(``AidgeModule._runner.scheduler`` where ``scheduler`` is an invalidating handle), so the script
also measures an older checkout: ``PYTHONPATH=<old checkout> python tools/speed_bridge.py``.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "1")))
    parser.add_argument("--upstream", help="folder holding aidge_interop_torch 0.10.1 (+ onnxsim)")
    parser.add_argument("--samples", type=int, default=200, help="timed blocks per column")
    parser.add_argument("--only", help="regex on the row label (e.g. LeNet)")
    parser.add_argument("--openmp-scope", action="store_true",
                        help="only the cost of threads_policy.aidge_dynamic_teams per Aidge call, policy on vs keep")
    parser.add_argument("--rounds", type=int, default=30, help="--openmp-scope: alternated rounds")
    parser.add_argument("--calls", type=int, default=2000, help="--openmp-scope: calls per round and side")
    args = parser.parse_args()
    if args.threads < 1 or args.samples < 1:
        parser.error("--threads and --samples must be positive")
    return args


def main() -> None:
    args = _parse()
    if args.openmp_scope:
        _print_openmp_scope(args.rounds, args.calls)
        return
    # OpenMP reads its thread count when the runtime loads: set it before torch/Aidge load.
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import torch

    import interop
    from interop import wrap
    from interop.zoo.models.lenet_model import LeNet

    torch.set_num_threads(args.threads)
    print(f"threads: torch={torch.get_num_threads()} OMP_NUM_THREADS={args.threads}; torch {torch.__version__}; "
          f"interop from {Path(interop.__file__).parent.parent}")
    torch.manual_seed(0)
    lenet = LeNet().eval()
    if not args.only:
        wrap_times = []
        for _ in range(5):
            start = time.perf_counter()
            wrap(lenet, (4, 1, 32, 32))
            wrap_times.append(time.perf_counter() - start)
        ours = statistics.median(wrap_times)
        print(f"wrap(LeNet-5): median {ours * 1e3:.1f} ms over {len(wrap_times)} (min {min(wrap_times) * 1e3:.1f} ms)")
        if args.upstream:
            upstream = _upstream_wrap_time(args.upstream, lenet)
            print(f"upstream aidge_interop_torch.wrap(LeNet-5): {upstream * 1e3:.1f} ms  ->  "
                  f"ours is {upstream / ours:.1f}x faster")

    rows = [("ReLU (1,)", torch.nn.ReLU(), (1,)),
            ("ReLU (2, 3, 8, 8)", torch.nn.ReLU(), (2, 3, 8, 8)),
            ("ReLU (8, 64, 32, 32)", torch.nn.ReLU(), (8, 64, 32, 32)),
            ("LeNet-5 (4, 1, 32, 32)", lenet, (4, 1, 32, 32))]
    if args.only:
        rows = [r for r in rows if re.search(args.only, r[0])]
    print(f"\nmicroseconds per call, median of {args.samples} interleaved blocks; "
          "module - raw = the bridge's overhead")
    header = f"{'model':<24} {'phase':<8} {'torch':>9} {'raw':>9} {'aidge':>7} {'module':>9} {'module-raw':>11} {'module/raw':>11}"
    print(header)
    print("-" * len(header))
    for label, model, shape in rows:
        for phase, figures in _measure(model, shape, args.samples).items():
            t, raw, aidge, module = (figures[k] for k in ("torch", "raw", "aidge", "module"))
            aidge_txt = f"{aidge:7.0f}" if aidge is not None else f"{'n/a':>7}"
            print(f"{label:<24} {phase:<8} {t:9.1f} {raw:9.1f} {aidge_txt} {module:9.1f} "
                  f"{module - raw:11.1f} {module / raw:11.3f}")
    if not args.only or re.search(args.only, "pieces"):
        _print_pieces(args.samples)


def _print_pieces(samples: int) -> None:
    """The floor of each piece of an AidgeModule forward (``torch.no_grad()``, ReLU on (1,) and
    on (8, 64, 32, 32)), each timed alone, interleaved like the columns above: what the
    bridge's overhead is made of, and what is left of it. The floor module runs the pieces no
    bridge can drop from Python and nothing else (at (8, 64, 32, 32) it copies the input the
    bridge shares, so it is no floor there). Then LeNet-5 (:func:`_print_lenet_cpu`)."""
    import torch

    from interop import wrap
    from interop.bridge.runner import read_tensor

    import numpy as np

    class Empty(torch.nn.Module):
        def forward(self, x):
            return x

    class Floor(torch.nn.Module):
        """What a bridge with no glue at all would run: the copy in, the log-level guard, the
        scheduler and the copy out, nothing else (no lock, no check, no bookkeeping)."""

        def __init__(self, view, quiet, scheduler, tensors, out):
            super().__init__()
            self.parts = (view, quiet, scheduler, tensors, out)

        def forward(self, x):
            view, quiet, scheduler, tensors, out = self.parts
            view.copy_(x)
            with quiet:
                scheduler.forward(False, tensors)
            return torch.from_numpy(np.array(out, copy=True))

    print(f"\nthe pieces of one AidgeModule forward under torch.no_grad(), microseconds of thread CPU time per "
          f"call (each in a loop of its own, {samples} blocks in 10 rounds taking turns; load average "
          f"{os.getloadavg()[0]:.1f})")
    header = f"{'piece':<62} {'(1,)':>9} {'(8, 64, 32, 32)':>16}"
    print(header)
    print("-" * len(header))
    columns = []
    for shape in ((1,), (8, 64, 32, 32)):
        am = wrap(torch.nn.ReLU(), shape)
        x = torch.randn(shape)
        runner = am._runner
        empty = Empty()
        with torch.no_grad():
            am(x)
        tensors = runner.load_inputs([x], share=True)
        out = runner.output_tensors[0]
        view = runner._in_views[0]
        expected = runner.expected_shapes
        outs = [read_tensor(out)]
        signature = runner._signature

        def whole():
            with torch.no_grad():
                am(x)

        def guard():
            with runner._quiet:
                pass

        def dispatch():
            with torch.no_grad():
                empty(x)

        last_checked = am._last_checked
        floor = Floor(view, runner._quiet, runner.scheduler, runner._in_tensors, out)
        with torch.no_grad():
            if not torch.equal(floor(x), am(x)):
                raise SystemExit("the floor module's output differs from the AidgeModule's: "
                                 "figures would be meaningless")

        def floor_call():
            with torch.no_grad():
                floor(x)

        def check_fast_path():
            return [(t.shape, t.dtype) for t in [x]] != last_checked

        pieces = {
            "the whole call: with torch.no_grad(): am(x)": whole,
            "torch.no_grad() + nn.Module call of an empty forward": dispatch,
            "signature check ([(shape, dtype)] == the compiled one's)": lambda: [(t.shape, t.dtype) for t in [x]] == signature,
            "copy in (one copy_ into Aidge's input buffer)": lambda: view.copy_(x),
            "load_inputs: signature + copy in (large input: shared)": lambda: runner.load_inputs([x], share=True),
            "Aidge log-level guard (quiet_aidge enter + exit)": guard,
            "scheduler.forward(False, inputs) from Python": lambda: runner.scheduler.forward(False, tensors),
            "copy out (read_tensor: numpy copy + from_numpy)": lambda: read_tensor(out),
            "shape guard (output sizes == torch's)": lambda: [o.shape for o in outs] != expected,
            "value check's fast path (signature == the last checked)": check_fast_path,
            "floor: no_grad + module of copy in, guard, scheduler, copy out": floor_call,
        }
        # each piece in a loop of its own, the rounds interleaved (machine drift hits all alike); the
        # whole call is timed so too, and beside the raw scheduler only (as the columns above): a call
        # interleaved with eight other code paths at ~200 us a block runs cold (issue 47 item 4)
        alone = _alone_rounds(pieces, samples)
        alone["the whole call, alternated with the raw scheduler only"] = _interleaved(
            {"whole": whole, "raw": lambda: runner.scheduler.forward(False, tensors)}, samples,
            clock=time.thread_time)["whole"]
        alone["the whole call, interleaved with every piece (the old table's figure)"] = _interleaved(
            pieces, samples, clock=time.thread_time)["the whole call: with torch.no_grad(): am(x)"]
        with torch.no_grad():  # grad mode off for the whole loop: the caller's no_grad not counted
            off = _alone_rounds({"whole": lambda: am(x), "floor": lambda: floor(x)}, samples)
        alone["grad mode off around the loop: am(x)"] = off["whole"]
        alone["grad mode off around the loop: the floor module"] = off["floor"]
        columns.append(alone)
    for name in columns[0]:
        small, large = columns[0][name], columns[1][name]
        print(f"{name:<62} {small:9.2f} {large:16.2f}")
    parts = [n for n in columns[0]
             if not n.startswith(("the whole call", "signature check", "copy in", "floor", "grad mode off"))]
    for k, shape in enumerate(("(1,)", "(8, 64, 32, 32)")):
        col = columns[k]
        total = sum(col[n] for n in parts)
        whole_alone = col["the whole call: with torch.no_grad(): am(x)"]
        raw = col["scheduler.forward(False, inputs) from Python"]
        floor_us = col["floor: no_grad + module of copy in, guard, scheduler, copy out"]
        print(f"{shape}: the pieces of the call add up to {total:.2f} us, the call in a loop of its own "
              f"{whole_alone:.2f} us (unaccounted {whole_alone - total:+.2f} us); over the raw scheduler: "
              f"{whole_alone - raw:.2f} us, module/raw {whole_alone / raw:.3f}; the floor module over the raw "
              f"scheduler {floor_us - raw:.2f} us (the bridge's glue beyond it: {whole_alone - floor_us:.2f} us); "
              f"grad mode off around the loop: am(x) over raw {col['grad mode off around the loop: am(x)'] - raw:.2f} "
              f"us, the floor module {col['grad mode off around the loop: the floor module'] - raw:.2f} us")
    _print_lenet_cpu(samples)


def _print_lenet_cpu(samples: int) -> None:
    """LeNet-5 (the zoo's, (4, 1, 32, 32)) forward on the thread's CPU time (a preempted block does
    not count the wait), grad mode off around the loop, four calls alternated block by block on the
    same graph and the same input: the AidgeModule call, the floor module (copy in, log-level guard,
    scheduler, copy out), the same without the guard, and the raw scheduler. Then the cost of a
    torch ``copy_`` of the input and of the output's numpy copy right after Aidge's forward against
    the same operations repeated: what the operations after a millisecond of Aidge work pay."""
    import numpy as np
    import torch

    from interop import wrap
    from interop.zoo.models.lenet_model import LeNet

    torch.manual_seed(0)
    am = wrap(LeNet().eval(), (4, 1, 32, 32))
    x = torch.randn(4, 1, 32, 32)
    runner = am._runner
    with torch.no_grad():
        am(x)
    tensors = runner.load_inputs([x], share=True)
    view, out, quiet, scheduler = runner._in_views[0], runner.output_tensors[0], runner._quiet, runner.scheduler

    def floor():
        view.copy_(x)
        with quiet:
            scheduler.forward(False, tensors)
        return torch.from_numpy(np.array(out, copy=True))

    def bare():
        view.copy_(x)
        scheduler.forward(False, tensors)
        return torch.from_numpy(np.array(out, copy=True))

    fns = {"module": lambda: am(x), "floor": floor, "floor without the guard": bare,
           "raw": lambda: scheduler.forward(False, tensors)}
    rounds = max(10, samples // 4)
    per_call: dict[str, list[float]] = {name: [] for name in fns}
    with torch.no_grad():
        if not torch.equal(floor(), am(x)):
            raise SystemExit("the floor module's output differs from the AidgeModule's: figures would be meaningless")
        for _ in range(rounds):  # one block of 10 calls each, alternated
            for name, fn in fns.items():
                fn()  # the first call after a switch is not kept
                start = time.thread_time()
                for _ in range(10):
                    fn()
                per_call[name].append((time.thread_time() - start) / 10)
    raw_us = statistics.median(per_call["raw"]) * 1e6
    print(f"\nLeNet-5 (4, 1, 32, 32) forward, thread CPU time, grad mode off, {rounds} alternated blocks of 10 "
          f"calls (load average {os.getloadavg()[0]:.1f}); goal: module/raw <= 1.02")
    for name, v in per_call.items():
        q = statistics.quantiles(v, n=4)
        med = statistics.median(v) * 1e6
        print(f"  {name:<26} {med:9.1f} us (IQR {q[0] * 1e6:.1f}-{q[2] * 1e6:.1f})  - raw {med - raw_us:7.1f} us  "
              f"/raw {med / raw_us:.4f}")
    first, second, out_copy = [], [], []
    clock = time.thread_time_ns
    for _ in range(rounds * 5):
        scheduler.forward(False, tensors)
        start = clock()
        view.copy_(x)
        first.append(clock() - start)
        start = clock()
        view.copy_(x)
        second.append(clock() - start)
        start = clock()
        np.array(out, copy=True)
        out_copy.append(clock() - start)
    print(f"  right after Aidge's forward: the input copy_ {statistics.median(first) / 1e3:.2f} us, the same copy_ "
          f"again {statistics.median(second) / 1e3:.2f} us, then the output's numpy copy "
          f"{statistics.median(out_copy) / 1e3:.2f} us (medians of {rounds * 5})")


def _print_openmp_scope(rounds: int, calls: int) -> None:
    """What ``threads_policy.aidge_dynamic_teams`` (dynamic teams switched on around each of Aidge's
    scheduler calls and set back after, through ctypes on every loaded OpenMP runtime) costs per
    call, in-process A/B: the library's default in force against ``INTEROP_OPENMP_POLICY=keep``,
    switched through the public ``apply_default`` (with torch imported first the two differ in
    that scope only). ``rounds`` rounds, each side ``calls`` calls per round, the sides alternated
    round by round (the order flipped every other round), thread CPU time; medians over rounds
    and their IQR. Rows: the context manager alone (and the bare loop it runs in), a wrapped ReLU
    (1,)'s forward with grad mode off around the loop, the same model's forward + backward (two
    Aidge calls), and LeNet-5's forward (4, 1, 32, 32) (calls // 20 a round)."""
    chosen = [k for k in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_DYNAMIC",
                          "INTEROP_OPENMP_POLICY") if os.environ.get(k, "").strip()]
    if chosen:
        raise SystemExit(f"--openmp-scope measures the library's default, which {', '.join(chosen)} turns off: "
                         "unset it")
    import torch

    import interop
    from interop import threads_policy, wrap
    from interop.zoo.models.lenet_model import LeNet

    def policy(on: bool) -> None:
        threads_policy.apply_default(None if on else {"INTEROP_OPENMP_POLICY": "keep"})

    policy(True)
    torch.manual_seed(0)
    relu = wrap(torch.nn.ReLU(), (1,))
    lenet = wrap(LeNet().eval(), (4, 1, 32, 32))
    x, xl = torch.randn(1), torch.randn(4, 1, 32, 32)
    with torch.no_grad():
        relu(x), lenet(xl)
    with threads_policy.aidge_dynamic_teams():
        inside = threads_policy.openmp_state()["dynamic"]
    if not (threads_policy.APPLIED.startswith("dynamic teams") and inside
            and threads_policy.openmp_state()["dynamic"] is False):
        raise SystemExit(f"the default is not in force here ({threads_policy.APPLIED}; dyn-var inside "
                         f"{inside}): figures would be meaningless")
    scope = threads_policy.aidge_dynamic_teams
    xg = torch.randn(1, requires_grad=True)

    def loop(n):
        for _ in range(n):
            pass

    def cm(n):
        for _ in range(n):
            with scope():
                pass

    def forward(n):
        with torch.no_grad():
            for _ in range(n):
                relu(x)

    def step(n):
        for _ in range(n):
            relu(xg).backward()

    def lenet_forward(n):
        with torch.no_grad():
            for _ in range(n):
                lenet(xl)

    rows = [("loop only (no with statement)", loop, calls, False),
            ("with aidge_dynamic_teams(): pass", cm, calls, True),
            ("ReLU (1,) forward, grad mode off", forward, calls, True),
            ("ReLU (1,) forward + backward", step, max(1, calls // 4), True),
            ("LeNet-5 (4, 1, 32, 32) forward, grad mode off", lenet_forward, max(1, calls // 20), True)]
    clock = time.thread_time_ns
    runtimes = [os.path.basename(p) for p in threads_policy.loaded_openmp_runtimes()]
    load = [os.getloadavg()[0]]
    print(f"threads_policy.aidge_dynamic_teams per call: policy on (the default) vs INTEROP_OPENMP_POLICY=keep, "
          f"{rounds} alternated rounds, thread CPU time, ns per call, median over rounds (IQR); "
          f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), OpenMP runtimes {runtimes}, "
          f"interop from {Path(interop.__file__).parent.parent}")
    header = f"{'row':<48} {'calls':>6} {'on':>22} {'keep':>22} {'on - keep':>10} {'on/keep':>8}"
    print(header)
    print("-" * len(header))
    for label, fn, n, toggled in rows:
        figures: dict[bool, list[float]] = {True: [], False: []}
        for side in (True, False):  # warm, each side
            policy(side)
            fn(n)
        for r in range(rounds):
            for side in ((True, False) if r % 2 == 0 else (False, True)):
                policy(side)
                start = clock()
                fn(n)
                figures[side].append((clock() - start) / n)
        load.append(os.getloadavg()[0])
        med = {k: statistics.median(v) for k, v in figures.items()}
        iqr = {k: statistics.quantiles(v, n=4) for k, v in figures.items()}
        cols = "  ".join(f"{med[k]:8.0f} ({iqr[k][0]:.0f}-{iqr[k][2]:.0f})".rjust(22) for k in (True, False))
        ratio = med[True] / med[False]
        print(f"{label:<48} {n:6d} {cols} {med[True] - med[False]:10.0f} {ratio:8.3f}"
              + ("" if toggled else "  (nothing toggled: the noise floor)"))
    policy(True)
    print(f"load average (1 min) {min(load):.1f}-{max(load):.1f}; {os.cpu_count()} core(s)")


def _measure(model, shape, samples: int) -> dict[str, dict[str, float | None]]:
    import numpy as np
    import torch

    from interop import wrap

    am = wrap(model, shape)
    x = torch.randn(shape)
    # the raw scheduler (newer checkouts hand out an invalidating handle as am.scheduler)
    scheduler = am._runner.scheduler if hasattr(am, "invalidate") else am.scheduler
    out_node, out_idx = am.graph.get_ordered_outputs()[0]
    out_tensor = out_node.get_operator().get_output(out_idx)
    import aidge_core

    raw_input = aidge_core.Tensor(x.numpy())
    scheduler.forward(True, [raw_input])
    ref = model(x).detach()
    if not np.allclose(np.array(out_tensor), ref.numpy(), atol=1e-5):
        raise SystemExit("raw scheduler output differs from torch: figures would be meaningless")
    with torch.no_grad():
        if not torch.allclose(am(x), ref, atol=1e-5):
            raise SystemExit("AidgeModule output differs from torch: figures would be meaningless")

    # forward columns
    def torch_fwd():
        with torch.no_grad():
            model(x)

    def raw_fwd():
        scheduler.forward(False, [raw_input])

    def module_fwd():
        with torch.no_grad():
            am(x)

    forward = _interleaved({"torch": torch_fwd, "raw": raw_fwd, "module": module_fwd}, samples)
    forward["aidge"] = _aidge_recorded(scheduler, "forward", lambda: scheduler.forward(False, [raw_input]))

    # backward columns: every timed backward follows its own fresh forward (untimed), as in a
    # training step. (Aidge accumulates into intermediate gradients until a forward resets
    # them, so the bridge recomputes the forward of a second backward through one graph.)
    grad = torch.randn(ref.shape)
    g = out_tensor.grad
    state = {}

    def torch_prep():
        state["t"] = model(x.clone().requires_grad_(True))

    def torch_bwd():
        torch.autograd.backward([state["t"]], [grad])

    def raw_prep():
        scheduler.forward(False, [raw_input])
        if list(g.dims) != list(out_tensor.dims):
            g.resize(list(out_tensor.dims))
        np.asarray(g)[...] = grad.numpy()

    def raw_bwd():
        scheduler.backward()

    def module_prep():
        state["a"] = am(x.clone().requires_grad_(True))

    def module_bwd():
        torch.autograd.backward([state["a"]], [grad])

    backward = _interleaved({"torch": (torch_prep, torch_bwd), "raw": (raw_prep, raw_bwd),
                             "module": (module_prep, module_bwd)}, samples * 5)
    backward["aidge"] = _aidge_recorded(scheduler, "backward", lambda: (raw_prep(), raw_bwd()))
    return {"forward": forward, "backward": backward}


def _interleaved(fns, samples: int, clock=time.perf_counter) -> dict[str, float]:
    """Median microseconds per call of each function, sampled in interleaved blocks; a
    ``(prep, call)`` pair is sampled one call at a time, ``prep`` (untimed) before each."""
    if all(isinstance(f, tuple) for f in fns.values()):
        return _interleaved_prepared(fns, samples)
    for fn in fns.values():  # warm-up
        for _ in range(20):
            fn()
    blocks = {}
    for name, fn in fns.items():
        start = time.perf_counter()
        for _ in range(20):
            fn()
        once = (time.perf_counter() - start) / 20
        blocks[name] = max(1, min(1000, int(200e-6 / max(once, 1e-9))))
    per_call: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(samples):
        for name, fn in fns.items():
            n = blocks[name]
            start = clock()
            for _ in range(n):
                fn()
            per_call[name].append((clock() - start) / n)
    return {name: statistics.median(v) * 1e6 for name, v in per_call.items()}


def _alone_rounds(fns, samples: int, rounds: int = 10, clock=time.thread_time) -> dict[str, float]:
    """Median microseconds per call of each function in a loop of its own (``samples`` // ``rounds``
    blocks of ~0.5 ms per round, warm), the functions taking turns round by round, on the thread's
    CPU time (a block preempted on a loaded machine does not count the wait)."""
    blocks = {}
    for name, fn in fns.items():
        for _ in range(20):
            fn()
        start = time.perf_counter()
        for _ in range(20):
            fn()
        blocks[name] = max(1, int(0.5e-3 / max((time.perf_counter() - start) / 20, 1e-9)))
    per_call: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            n = blocks[name]
            for _ in range(n):  # warm: the first block after another function is not kept
                fn()
            for _ in range(max(1, samples // rounds)):
                start = clock()
                for _ in range(n):
                    fn()
                per_call[name].append((clock() - start) / n)
    return {name: statistics.median(v) * 1e6 for name, v in per_call.items()}


def _interleaved_prepared(fns, samples: int) -> dict[str, float]:
    for prep, fn in fns.values():  # warm-up
        for _ in range(5):
            prep()
            fn()
    per_call: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(samples):
        for name, (prep, fn) in fns.items():
            prep()
            start = time.perf_counter()
            fn()
            per_call[name].append(time.perf_counter() - start)
    return {name: statistics.median(v) * 1e6 for name, v in per_call.items()}


_GANTT_LINE = re.compile(r":\s*(?P<start>\d+)\s*,\s*(?P<end>\d+)\s*$")


def _aidge_recorded(scheduler, phase: str, run) -> float | None:
    """Median over 50 runs of the sum of Aidge's own per-node times of one ``phase`` run, as the
    scheduler records them (its mermaid scheduling diagram, microseconds), or None."""
    totals = []
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "s")
        for _ in range(50):
            for _ in range(5):  # the diagram holds the last run: a warm one
                run()
            try:
                scheduler.save_scheduling_diagram(base)
                text = Path(f"{base}_{phase}.mmd").read_text()
            except Exception:  # noqa: BLE001  (no recorded scheduling in this Aidge)
                return None
            spans = [(int(m["start"]), int(m["end"])) for m in map(_GANTT_LINE.search, text.splitlines()) if m]
            if not spans:
                return None
            totals.append(sum(end - start for start, end in spans))
    return statistics.median(totals)


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
