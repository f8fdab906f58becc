"""The code of :mod:`interop.check` (``python -m interop check``: every blocker of a model at
once), by what each part does: :mod:`.report` (the blockers and the report), :mod:`.words` (a
porter's words and values), :mod:`.inputs` (the model and its inputs), :mod:`.leaves` (the leaf
modules' calls, second verdicts and stand-ins), :mod:`.defect_ids` (a blocker's defect id) and
:mod:`.passes` (:func:`~interop.check.check` itself). Import :func:`~interop.check.check` from
:mod:`interop.check` (its documented path), every other name from the module that holds it.
"""
