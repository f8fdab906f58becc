"""Records: one JSON record per test, written by the process that ran it, the spine of the
reports (:mod:`interop.reporting`).

- :mod:`~interop.records.classify`: a failure's fields, read from its typed exception
- :mod:`~interop.records.store`: part files, :func:`~interop.records.store.combine` into
  ``records.jsonl`` + ``session.json``, :func:`~interop.records.store.load_run`
- :mod:`~interop.records.plugin`: the pytest side (registered by :mod:`interop.pytest_plugin`)
- :mod:`~interop.records.shard`: ``INTEROP_SHARD=K/N``
- ``python -m interop.records check DIR``: the records against pytest's own summary

Nothing here is imported by ``import interop`` (the plugin imports it when a session has a
records directory).
"""
