"""Every model case of :mod:`interop.cases.catalog` (``<Name>_eval`` / ``<Name>_train``), forward
and backward (``_train`` cases), torch and Aidge side by side (see :mod:`benchmarks.harness`)."""
from . import harness

Forward = harness.benchmark_class("model", "forward", "Forward")
Backward = harness.benchmark_class("model", "backward", "Backward")
ExportBuild = harness.export_build_class("model", "ExportBuild")  # backend export_cpp only
