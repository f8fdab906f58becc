"""A standalone reproducer for a failing case: the bundle an Aidge developer runs without this suite.

:func:`write_bundle` is the writer :mod:`interop.bridge.capture` hands a failing case to, in
the process that saw the failure (the forked case child). It writes, into the case's folder::

    model.onnx                      exactly the graph Aidge was given
    test_data_set_0/input_K.pb      the inputs of the call the case failed on (its first call's when
                                    they hold the same values; ONNX backend-test layout)
    test_data_set_0/output_K.pb     torch's outputs on them (the expected values)
    test_data_set_0/grad_*.pb       backward: the output gradient, torch's input and parameter gradients
    aidge.log                       Aidge's own log lines for this case (Notice and above)
    repro.py                        numpy + onnx + Aidge only: exit 1 while the defect is there, 0 once fixed
    reduced/                        the same layout for the smallest graph found that still fails
    meta.json                       what was written and checked (read into the case's record)

Before anything is blamed on Aidge the export is checked (:func:`export_check`): the full
``onnx.checker`` check, an onnxruntime session on the same file, and onnxruntime's outputs
against torch's. Each ``repro.py`` is then run in a fresh interpreter (``python -I``, with
``torch`` and ``interop`` made unimportable) and its exit status kept: a bundle *reproduces*
when that run exits 1 (or dies by a signal: a crash).

Reduction (:func:`reduce_bundle`): for an error, the node Aidge named; for a value mismatch,
the first node whose Aidge output differs from onnxruntime's on the same graph (every
intermediate exposed on both sides, compared in topological order). That node alone is
extracted with the values it really received (onnxruntime's intermediates; inputs computed
from constants only stay constants, so that Aidge can forward dims as it did) and kept only if
its own ``repro.py`` reproduces in a fresh interpreter. Why our own code and not polygraphy's
``debug reduce``: that tool bisects against a check *command* (minutes per model here), and we
already hold every intermediate value; onnx's ``Extractor`` keeps the producing subgraph, not
the node alone.

This module is where these names are imported from (the suite's plugin, the tests, callers outside
the package); the code lives in the modules it re-exports, by what each part is for:
:mod:`.repro_script` (the generated ``repro.py``'s text), :mod:`.repro_run` (running it fresh, the
fork server), :mod:`.repro_layout` (a bundle's files), :mod:`.repro_bundle` (writing a failing
case's bundle, the export check, the bundle of a case whose process died), :mod:`.repro_aidge`
(the graph in Aidge, the backward walk), :mod:`.repro_reduce` (the reduction) and
:mod:`.repro_fields` (reading a bundle into a record).
"""
from __future__ import annotations

from .repro_script import (BODY_PATH, FACTORY_BODY_PATH, ONNX_TEST_EXPECTED, repro_script, script_literal,
                           script_settings)  # noqa: F401
from .repro_run import (FreshServer, REPRO_TIMEOUT_S, phase_of, run_fresh, run_repro, start_fresh_server,
                        stop_fresh_server, verdict_of)  # noqa: F401
from .repro_layout import DEFAULT_MAX_MB, MAX_MB_ENV, _write_layout, bundle_folder, max_bundle_bytes  # noqa: F401
from .repro_aidge import (AidgeRefused, _aidge_names, _aidge_values, _backward_node, backward_divergence,
                          load_in_aidge)  # noqa: F401
from .repro_reduce import (CRASH_REDUCE_MAX_NODES, REFERENCE_MAX_NODES, _ort_feeds, _ort_values, _reference_values,
                           _single_node_model, first_diverging_node, reduce_bundle, reduce_crash)  # noqa: F401
from .repro_bundle import (MAX_CALLS, PENDING, aidge_said, complete_pending, export_check, export_valid,
                           import_kind, write_bundle, write_factory_bundle, write_onnx_bundle, write_pending)  # noqa: F401
from .repro_fields import bundle_aidge_types, bundle_facts, record_fields  # noqa: F401

__all__ = ["write_bundle", "write_onnx_bundle", "ONNX_TEST_EXPECTED", "export_check", "run_repro", "reduce_bundle", "BODY_PATH", "max_bundle_bytes",
           "repro_script", "script_literal", "script_settings", "bundle_folder", "record_fields", "first_diverging_node", "FreshServer",
           "start_fresh_server", "stop_fresh_server", "bundle_facts", "run_fresh", "write_pending", "complete_pending", "PENDING", "verdict_of",
           "phase_of", "load_in_aidge", "AidgeRefused", "reduce_crash", "bundle_aidge_types", "backward_divergence"]
