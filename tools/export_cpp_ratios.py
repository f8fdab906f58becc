"""Forward ratios of the model zoo, three backends in one process: torch, Aidge's CPU
scheduler (``cpu``) and Aidge's compiled C++ export (``export_cpp``), timed the way the
asv benchmarks time them (:mod:`benchmarks.harness`: Aidge's own call, inputs prepared
outside it), in interleaved blocks, one thread. Also the export's generation and compile
seconds per model (from the cache's record of the build).

    OMP_NUM_THREADS=1 python -m tools.export_cpp_ratios [--budget SECONDS] [--models LeNet,ResNet]

Prints one line per model; writes nothing.
"""
from __future__ import annotations

import argparse
import statistics
import sys

import torch

from interop.bridge import wrap
from interop.cases.catalog import model_cases
from interop.equivalence import timing
from interop.oracle.outputs import compare_outputs

from benchmarks import harness

BLOCKS = 8


def measure(case, budget_s: float) -> dict:
    model = case.build_model()
    model.requires_grad_(False)
    inputs = harness._seeded_inputs(case.id, case.input_sizes, tuple(case.input_ranges))
    calls = {"torch": lambda: model(*inputs)}
    out = {"case": case.id}
    for backend in ("cpu", "export_cpp"):
        try:
            am = wrap(model, case.input_sizes, backend=backend, training=False)
        except Exception as exc:  # noqa: BLE001  (reported, the other backend still measured)
            out[backend] = f"{type(exc).__name__}: {str(exc)[:120]}"
            continue
        am.requires_grad_(False)
        with torch.no_grad():
            bad = compare_outputs(am(*inputs), model(*inputs), rtol=1.3e-6, atol=1e-5, name="output")
        out[f"{backend}_matches"] = not bad
        calls[backend] = harness.raw_aidge_call(am, inputs, "forward")
        if backend == "export_cpp":
            out["generation_s"], out["compile_s"] = am.compiled.generation_s, am.compiled.compile_s
    samples = {name: [] for name in calls}
    with torch.no_grad():
        for name, call in calls.items():
            timing.measure(call, warmup=2, repeat=0)
        counts = {name: max(1, min(200, int(budget_s / BLOCKS / max(timing.timed(call)[1], 1e-7))))
                  for name, call in calls.items()}
        for _ in range(BLOCKS):
            for name, call in calls.items():
                samples[name] += timing.measure(call, warmup=0, repeat=counts[name])
    medians = {name: statistics.median(s) for name, s in samples.items()}
    out["torch_us"] = medians["torch"] * 1e6
    for backend in ("cpu", "export_cpp"):
        if backend in medians:
            out[f"{backend}_us"] = medians[backend] * 1e6
            out[f"{backend}_ratio"] = timing.round_sig(medians[backend] / medians["torch"], 3)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=1.0, help="seconds of timed calls per model and side")
    parser.add_argument("--models", default="", help="comma-separated model names (default: every one)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    wanted = {m for m in args.models.split(",") if m}
    for case in model_cases(backend="export_cpp"):
        if case.skip_reason or (wanted and case.operator not in wanted):  # _train: not applicable
            continue
        r = measure(case, args.budget)
        print(" | ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
