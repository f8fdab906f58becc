"""Scripts around the asv benchmarks and the suite (tools/README.md): run as ``python tools/X.py``
(or ``python -m tools.X``), none of them a benchmark. asv's benchmarks are in ``benchmarks/``."""
