"""asv benchmarks of the interop suite (``asv.conf.json`` at the repository root).

asv imports every module of this package: ``operators`` and ``models`` hold the benchmarks
(generated from :mod:`interop.cases.catalog`), ``harness`` the shared machinery. The other
modules are scripts (``speed_bridge.py``, ``publish_offline.py``, ``case_index.py``,
``aidge_matrix.py``, ``noise_floor.py``, ``tester_noise.py``) that define no benchmark.
"""
