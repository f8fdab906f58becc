"""Every model case of :mod:`interop.cases.catalog` (``<Name>_eval`` / ``<Name>_train``), forward
and backward (``_train`` cases), torch and Aidge side by side (see :mod:`benchmarks.harness`), onnxruntime
as a third column of the forward (:mod:`benchmarks.ort_column`)."""
from . import harness, ort_column

Forward = ort_column.with_ort(harness.benchmark_class("model", "forward", "Forward"))  # + time_ort, track_aidge_ort_ratio
Backward = harness.benchmark_class("model", "backward", "Backward")
ExportBuild = harness.export_build_class("model", "ExportBuild")  # backend export_cpp only
