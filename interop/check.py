"""A porter's check: every blocker of a model at once (issue 49).

``check(model, *inputs)`` (or ``python -m interop check module:factory --input-shape 1,3,32,32``)
answers "what stops this model in Aidge?" with every blocker it can find in one call, where
:func:`interop.verify` stops at the first. Three passes, each a :func:`~interop.verify` verdict
(forked child, attribution, crash as a verdict):

1. **the whole model**: export, import, compile, forward on two calls, input gradients. An
   import that leaves nodes without an Aidge operator gives one blocker per such node;
2. **each leaf module alone** (a module without children: ``Conv2d``, ``PReLU``, ``Upsample``...),
   on the very inputs it receives in the model's forward (captured with forward hooks on a
   torch run; captured before the call, and a leaf that writes its input in place is compared on
   clones of it), so a blocker behind the first one still shows: the Upsample's missing backward
   behind a PReLU that does not import. A leaf whose forward differs gets a second verdict, whether
   Aidge's backward runs on it (:func:`backward_verdict`): a train-mode BatchNorm's mismatch does
   not hide its missing backward. Leaves with the same type, attributes and input shapes are
   checked once;
3. **the whole model again, each blocked leaf replaced by torch's value** (its output on the
   captured inputs, fed as an input of the graph: data, not a constant, so gradients flow into
   it; the model's own inputs become constants; a leaf called more than once is kept), when the
   first pass failed and the second found blocked leaves: what the rest of the model,
   functional calls included, does past them.

Each :class:`Blocker` names its phase, Aidge's operator (the ONNX op for an import gap), the
node, Aidge's own words, where it showed (``model``, a leaf's path) and, for a finding
attributed to Aidge, the defect's id and title as the ledger gives them
(:func:`interop.registry.identify.identify`: the registry's entry, else the proposed one) for the
record a findings run writes for that failure (:func:`ledger_record`: the check run again under
the reproducer capture, the failure's fields and the reproducer's, the first diverging node
included); a ledger file given, its title for that id. A difference verify attributes to float32 rounding (``precision``) is a note, not a blocker.

Words are a porter's: torch and Aidge, never the suite's "model1 (...) and model2 (...)" (the
messages of verify and ModelTester keep it, other code parses them: :func:`porter_words` says them
again here). Values that differ are quoted where they differ: each place a blocker shows (the
whole model, a leaf alone) says its own torch and Aidge values (``Blocker.words_at``,
``Blocker.values_at``; :func:`mismatch_words`, :func:`values_of`), a leaf's are in its entry of
``modules`` (``values``); a leaf checked once for an identical one elsewhere says so ("as ...")
rather than quote values that are not its own. Words are cut at a word boundary, never inside a
word (:data:`WORDS_LIMIT` each place), and the operator is named (the verdict's, else the leaf
type's, else "operator unknown"), never ``?``.

What it does not see: a blocker inside a functional call (``torch.cat``, ``F.interpolate`` in a
``forward``) hidden behind an earlier failure of the whole model that pass 3 cannot remove;
the gradients of a leaf whose forward differs (its backward is run, not compared).

The model's own code runs in forked children under the timeout as well: the torch forward that
captures the leaves' inputs (a forward that raises, dies or does not finish is a
:class:`ModelError`, the model's error, no blocker), and for the CLI the factory
(:func:`load_model`) and one torch forward before any verdict (:func:`probe_forward`). Shapes are
positive integers within :func:`input_bytes_limit` (:func:`check_input_size`), a timeout finite
and > 0 (:func:`check_timeout`). Nothing is
printed; nothing is written but the reproducer bundles of the ids' records, in a temporary folder
removed afterwards: the CLI (:mod:`interop.__main__`) prints the report.

:func:`check` is imported from here (the documented path); the code, and every other name, lives in
the package :mod:`interop.checking`, by what each part does: :mod:`~interop.checking.report`
(:class:`Blocker`, :class:`CheckReport`, the blockers a verdict gives, one per defect),
:mod:`~interop.checking.words` (a porter's words and values), :mod:`~interop.checking.inputs` (the
model and its inputs: the factory, the probe forward, shapes, dtypes, size and timeout),
:mod:`~interop.checking.leaves` (the leaves' calls, a leaf's second verdict, the stand-ins),
:mod:`~interop.checking.defect_ids` (a blocker's defect id: the run's record) and
:mod:`~interop.checking.passes` (:func:`check`: the three passes). A package beside this module,
not ``interop/check/`` (a package of that name would replace this file, ``interop.check`` kept only
through its ``__init__``) nor ``interop/check_*.py`` siblings (each top-level module is a package
of its own to the layering rules, ``tests/unit/test_layout.py``, and the private helpers the parts
share could not cross between them). Import each name but :func:`check` from the module that holds it.
"""
from __future__ import annotations

from .checking.passes import check

__all__ = ["check"]
