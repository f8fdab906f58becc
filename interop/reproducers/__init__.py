"""A standalone reproducer for a failing case: the bundle an Aidge developer runs without this suite.

:func:`.bundle.write_bundle` is the writer :mod:`interop.bridge.capture` hands a failing case to, in
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

Before anything is blamed on Aidge the export is checked (:func:`.bundle.export_check`): the full
``onnx.checker`` check, an onnxruntime session on the same file, and onnxruntime's outputs
against torch's. Each ``repro.py`` is then run in a fresh interpreter (``python -I``, with
``torch`` and ``interop`` made unimportable) and its exit status kept: a bundle *reproduces*
when that run exits 1 (or dies by a signal: a crash).

Reduction (:func:`.reduce.reduce_bundle`): for an error, the node Aidge named; for a value mismatch,
the first node whose Aidge output differs from onnxruntime's on the same graph (every
intermediate exposed on both sides, compared in topological order). That node alone is
extracted with the values it really received (onnxruntime's intermediates; inputs computed
from constants only stay constants, so that Aidge can forward dims as it did) and kept only if
its own ``repro.py`` reproduces in a fresh interpreter. Why our own code and not polygraphy's
``debug reduce``: that tool bisects against a check *command* (minutes per model here), and we
already hold every intermediate value; onnx's ``Extractor`` keeps the producing subgraph, not
the node alone.

The package's modules, by what each part is for (a name is imported from the module that
defines it; this ``__init__`` imports nothing, so that importing ``interop.reproducers`` loads
no torch): :mod:`.script` (the generated ``repro.py``'s text; its bodies, :mod:`.body` and, for
one Aidge node built from its factory, :mod:`.factory_body`, are never imported), :mod:`.run`
(running it fresh, the fork server), :mod:`.layout` (a bundle's files), :mod:`.bundle` (writing a
failing case's bundle, the export check, the bundle of a case whose process died), :mod:`.aidge`
(the graph in Aidge, the backward walk), :mod:`.reduce` (the reduction), :mod:`.fields` (reading a
bundle into a record), :mod:`.check` (``nox -s repro-check``: do a run's bundles work where an
Aidge developer runs them) and :mod:`.default_export` (the graph a user's default
``torch.onnx.export`` gives, beside the bridge's, in Aidge).
"""
from __future__ import annotations
