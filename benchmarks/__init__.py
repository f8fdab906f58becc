"""asv benchmarks of the interop suite (``asv.conf.json`` at the repository root: its
``benchmark_dir``).

asv imports every module of this package, so it holds asv's benchmarks only: ``operators``,
``models`` and ``architectures`` hold the timing benchmarks (generated from
:mod:`interop.cases.catalog`), ``threads`` and ``not_timed`` a ``track_`` figure each (``not_timed``
is also run as a script: ``nox -s bench-quick`` and ``nox -s compare`` print its list), ``harness``
the shared machinery and ``ort_column`` the onnxruntime column the forward benchmarks add. The
scripts around the benchmarks (the release matrix, the noise floor, the site's pages...) are in
``tools/`` (tools/README.md); tests/unit/test_layout.py keeps them out of here.
"""
