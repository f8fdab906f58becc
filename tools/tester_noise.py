"""How much ModelTester's Aidge/torch ratio moves from one test run to the next (a script, not
an asv module).

    python tools/tester_noise.py [--cases ID ...] [--repeats 8]

Runs ModelTester as the suites do (3 epochs, 2 of warm-up: one timed epoch),
``--repeats`` times per case on fresh models, alternating two settings in one
process: *one call* (``bench_max_samples=1``: the checked calls only, what ModelTester timed
before: one call per phase and timed epoch) and *repeated* (the defaults: repeated timed
calls up to 20 ms or 500 samples per phase and model). Prints per case and phase the ratio
(median2 / median1; one call: that call's) of every repeat, the spread max/min over the
repeats, and the calls per side behind each figure. One OpenMP thread, torch pinned to it.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_CASES = ("ReLU_rank_2", "Hardsigmoid_rank_4", "Add_broadcast_same_shape", "Conv2D_attributes_in_channels_8",
                 "LeNet_train")
SETTINGS = {"one call": {"bench_max_samples": 1}, "repeated": {}}


def _case_run(case_id: str):
    """(torch model, Aidge model, input size, output size, test_backward, epochs, tolerance), as the suites build them."""
    import interop
    from interop.cases import catalog
    from interop.cases.suite import OperatorCaseRun

    models = {c.id: c for c in catalog.model_cases(backend="cpu")}
    if case_id in models:
        case = models[case_id]
        model = case.build_model()
        aidge = interop.wrap(model, case.input_size, backend="cpu", training=case.training)
        return model, aidge, case.input_size, None, case.test_backward, 3, case.tolerance
    name = case_id.split("_", 1)[0]
    (case,) = [c for c in catalog.operator_cases([name], backend="cpu") if c.id == case_id]
    run = OperatorCaseRun(case, catalog.OPERATOR_CONFIGS[name], "cpu")
    return (run["torch_model"], run["aidge_model"], run["input_size"], run["output_size"], run["test_backward"], 3,
            case.tolerance)


def measure(case_id: str, setting: dict) -> dict:
    from interop import ModelTester

    model, aidge, size, out_size, backward, epochs, tolerance = _case_run(case_id)
    tester = ModelTester(model, aidge, name=case_id, test_backward=backward, epochs=epochs, max_slowdown_ratio=None,
                         bench_print=False, tolerance=tolerance, **setting)
    tester.BENCH_LOG_FILE = None
    tester.test_multiple_step(size, out_size)
    return tester.performance_stats()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", default=list(DEFAULT_CASES), metavar="ID")
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--blocks", type=int, help="interleaved blocks per model and timed epoch "
                        "(interop.equivalence.tester.REPEAT_BLOCKS) for the repeated setting")
    parser.add_argument("--min-total-ms", type=float, help="bench_min_total_ms of the repeated setting")
    args = parser.parse_args(argv)
    from interop.equivalence import tester as tester_module

    if args.blocks:
        tester_module.REPEAT_BLOCKS = args.blocks
    if args.min_total_ms:
        SETTINGS["repeated"] = {"bench_min_total_ms": args.min_total_ms}
    import torch

    from interop.equivalence.timing import thread_count

    torch.set_num_threads(thread_count())
    print(f"threads {torch.get_num_threads()}; torch {torch.__version__}; repeated: {tester_module.REPEAT_BLOCKS} "
          f"blocks, {SETTINGS['repeated']}; {args.repeats} repeats per case and setting, "
          f"alternating; ratio = Aidge scheduler / torch (median of the calls; 'one call': the single call)")
    header = f"{'case':<34}{'phase':<9}{'setting':<10}{'calls/side':>12}  {'spread':>7}  ratios"
    print(header)
    print("-" * len(header))
    started = time.perf_counter()
    for case_id in args.cases:
        figures = {name: [] for name in SETTINGS}
        for _ in range(args.repeats):
            for name, setting in SETTINGS.items():
                figures[name].append(measure(case_id, setting))
        for phase in ("forward", "backward"):
            for name in SETTINGS:
                stats = [f[phase] for f in figures[name] if f[phase]["ratio"] is not None]
                if not stats:
                    continue
                ratios = [s["ratio"] for s in stats]
                calls = f"{statistics.median(s['samples1'] for s in stats):.0f}/" \
                        f"{statistics.median(s['samples2'] for s in stats):.0f}"
                print(f"{case_id:<34}{phase:<9}{name:<10}{calls:>12}  {max(ratios) / min(ratios):>6.2f}x  "
                      + " ".join(f"{r:.3g}" for r in ratios))
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
