"""The three passes of :func:`check` (described in :mod:`interop.check`'s docstring): the whole
model, each leaf module alone, the whole model again with its blocked leaves replaced by torch's
values; then each blocker's defect id, one blocker per defect."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from .defect_ids import _ledger_id, ledger_titles, _verdict_id
from .inputs import check_timeout, make_inputs
from .leaves import (_leaf_calls_isolated, _on_cloned_inputs, _signature, _with_stand_ins, _writes_in_place_isolated,
                     backward_verdict)
from .report import CheckReport, _blockers_of, _merge
from .words import _call_of, porter_words, values_of


def check(model, *inputs, backward: bool = True, modules: bool = True, ledger: str | Path | None = None,
          max_modules: int = 64, timeout: float | None = 120.0, seed: int = 0,
          dtypes: Sequence[Any] | None = None, ledger_ids: bool = True) -> CheckReport:
    """Every blocker of ``model`` in Aidge (see the module's docstring). ``inputs``: tensors, or
    shapes (tuples of ints: seeded inputs, :func:`make_inputs`; ``dtypes``: their dtypes, one for
    all or one per input, default float32, int64 indices when the model starts with an embedding).
    ``backward``: check input gradients too; a leaf whose forward differs gets a second verdict,
    whether Aidge's backward runs on it (:func:`backward_verdict`). ``modules``: passes 2 and 3
    (False: the whole model only, as :func:`verify`). ``ledger``: a ``defects.json`` whose titles
    the blockers quote. ``max_modules``: at most this many distinct leaves are checked alone (the
    rest are listed with outcome None). A difference verify attributes to float32 rounding
    (``precision``) is a note of the report, not a blocker. ``ledger_ids``: each Aidge blocker's
    defect id is the ledger's, from the record a findings run writes for that failure
    (:func:`ledger_record`: the check run again in a child under the reproducer capture, into a
    temporary folder removed afterwards; seconds per blocker); False, or a crash (whose record
    the run finishes from the dead process's pending bundle): the id of the verdict's fields
    alone, which may differ from the ledger's (``Blocker.defect_id_how`` says which)."""
    import torch

    from ..equivalence.verdict import verify

    timeout = check_timeout(timeout)
    tensors = make_inputs(model, inputs, dtypes, seed)
    name = type(model).__name__
    whole = verify(model, *tensors, backward=backward, timeout=timeout)
    found = _blockers_of(whole, "model")
    sources: dict[int, tuple] = {id(b): ("verify", model, tensors) for b in found}  # what each blocker's record reruns
    leaves: list[dict[str, Any]] = []
    replaced = None
    if modules:
        seen: dict[tuple, dict[str, Any]] = {}
        blocked_paths: list[str] = []
        outputs: dict[str, Any] = {}
        for call in _leaf_calls_isolated(model, tensors, timeout):
            sig = _signature(call)
            entry = {"path": call["path"], "type": type(call["module"]).__name__,
                     "input_shapes": [list(a.shape) for a in call["args"] if isinstance(a, torch.Tensor)],
                     "outcome": None, "summary": ""}
            leaves.append(entry)
            if sig in seen:
                entry.update(outcome=seen[sig]["outcome"], summary=f"as {seen[sig]['path']}")
                for b in seen[sig]["blockers"]:  # the same leaf elsewhere: one more place it shows
                    here = f"{call['path']} ({entry['type']})"
                    b.where.append(here)
                    if b.values_at:  # checked once, on the first one's inputs: those values are not this one's
                        b.words_at[here] = f"as {b.where[0]} (the same type, attributes and input shapes: " \
                                           "checked once, on its inputs)"
                if seen[sig]["blocked"] and call["output"] is not None and call["count"] == 1:
                    blocked_paths.append(call["path"])
                    outputs[call["path"]] = call["output"]
                continue
            if not any(isinstance(a, torch.Tensor) for a in call["args"]) or len(seen) >= max_modules:
                continue
            seen[sig] = entry
            leaf = call["module"]
            if _writes_in_place_isolated(leaf, call["args"], timeout):
                entry["in_place"] = True  # compared on clones of its inputs: torch's write cannot spoil them
                leaf = _on_cloned_inputs(leaf)
            where = f"{call['path']} ({entry['type']})"
            v = verify(leaf, *call["args"], backward=backward, timeout=timeout)
            entry.update(outcome=v.outcome, summary=porter_words(v.summary))
            values = values_of(v.mismatch, _call_of(v))
            if values:  # the leaf's own torch and Aidge values where they differ
                entry["values"] = values
            mine = _blockers_of(v, where, entry["type"])
            sources.update({id(b): ("verify", leaf, call["args"]) for b in mine})
            if backward and v.outcome == "fail" and v.phase == "forward":
                # the forward differs, so verify stopped before the backward: whether the leaf's
                # backward runs in Aidge is a second verdict, so a blocker behind it still shows
                second = backward_verdict(leaf, *call["args"], timeout=timeout)
                entry["backward"] = {"outcome": second.outcome, "summary": porter_words(second.summary)}
                behind = _blockers_of(second, where, entry["type"])
                sources.update({id(b): ("backward", leaf, call["args"]) for b in behind})
                mine += behind
            entry["blockers"] = mine
            entry["blocked"] = any(b.attribution != "precision" for b in mine)
            found += mine
            # a leaf called more than once (a shared ReLU) cannot stand for one value: kept as it is
            if entry["blocked"] and call["output"] is not None and call["count"] == 1:
                blocked_paths.append(call["path"])
                outputs[call["path"]] = call["output"]
        for entry in leaves:
            entry.pop("blockers", None)
            entry.pop("blocked", None)
        if whole.outcome != "pass" and blocked_paths:
            try:
                stand_in, fed = _with_stand_ins(model, blocked_paths, tensors, [outputs[p] for p in blocked_paths])
            except Exception as exc:  # noqa: BLE001 - torch refuses the model with stand-ins: said, not raised
                why = f"{type(exc).__name__}: {exc}"
                replaced = {"replaced": blocked_paths, "outcome": None,
                            "summary": f"not run: torch's forward with the stand-ins failed: {why}"}
            else:
                v = verify(stand_in, *fed, backward=backward, timeout=timeout)
                where = "model with " + ", ".join(blocked_paths) + " replaced by torch's values"
                replaced = {"replaced": blocked_paths, "outcome": v.outcome, "summary": porter_words(v.summary)}
                past = _blockers_of(v, where)
                sources.update({id(b): ("verify", stand_in, fed) for b in past})
                found += past
    titles = ledger_titles(ledger)
    for b in found:
        if b.attribution == "precision":
            b.defect_id_how = "float32 rounding: no Aidge defect"
        elif ledger_ids and b.category not in ("crash", "hang", "killed"):
            b.defect_id, b.defect_id_how = _ledger_id(b, sources.get(id(b)), backward, timeout)
        else:
            b.defect_id = _verdict_id(b)
            b.defect_id_how = ("from the verdict alone (no reproducer read: may differ from the ledger's)"
                               if b.defect_id else "no Aidge finding")
        b.known = (titles.get(b.defect_id) or b.known) if b.defect_id else None
    notes = _merge([b for b in found if b.attribution == "precision"])
    merged = _merge([b for b in found if b.attribution != "precision"])
    shapes = [tuple(t.shape) for t in tensors]
    return CheckReport(name, shapes, whole, leaves, replaced, merged, notes)
