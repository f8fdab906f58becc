"""Every operator case of :mod:`interop.cases.catalog`, forward and backward, torch and Aidge side
by side (see :mod:`benchmarks.harness`). Select one case with
``asv run --bench "operators.Forward.*Conv2D_attributes_kernel_square"``."""
from . import harness, ort_column

Forward = ort_column.with_ort(harness.benchmark_class("operator", "forward", "Forward"))  # + time_ort, track_aidge_ort_ratio
Backward = harness.benchmark_class("operator", "backward", "Backward")
