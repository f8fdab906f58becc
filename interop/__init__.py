"""interop: PyTorch <-> Eclipse Aidge equivalence and benchmark suite."""
