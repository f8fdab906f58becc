"""Every architecture case (:mod:`interop.zoo.architectures`: MONAI and Hugging Face networks at
tiny configurations, ``arch_<name>_<eval|train>``), forward and backward, torch and Aidge side
by side (see :mod:`benchmarks.harness`). A case is timed only where Aidge matches torch (the
harness's precheck: outputs, then input and parameter gradients); the others are skipped with
the expected failure or Aidge's error as the reason."""
from . import harness, ort_column

Forward = ort_column.with_ort(harness.benchmark_class("architecture", "forward", "Forward"))  # + time_ort, track_aidge_ort_ratio
Backward = harness.benchmark_class("architecture", "backward", "Backward")
