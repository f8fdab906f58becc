"""Every operator case of :mod:`interop.cases.catalog`, forward and backward, torch and Aidge side
by side (see :mod:`benchmarks.harness`). Select one case with
``asv run --bench "operators.Forward.*Conv2D_attributes_kernel_square"``."""
from . import harness

Forward = harness.benchmark_class("operator", "forward", "Forward")
Backward = harness.benchmark_class("operator", "backward", "Backward")
