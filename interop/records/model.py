"""One record, typed once: :class:`Record` lists every field a record (and a part file's
``start`` / ``collected`` line) can hold, with its type.

The records plugin builds each record through it when writing (:func:`written`), and the store
validates each line it reads through it (:func:`problem_of`, :func:`checked`): a field of the
wrong type is named (``key 'aidge_types.1': a string, got int``: the words of
:func:`interop.reading.validation_problem`, the pages' too), and the outcome is said
once, by :func:`interop.records.outcome.outcome_of` (a strict XPASS is ``xpassed``), applied by
the model's validator whichever way a record comes in. The JSON on disk is unchanged
(``docs/records.md``): a record is still a JSON object of these keys, absent keys stay absent,
and a key the model does not list (a newer writer's) is kept, not checked.

pydantic, not msgspec (measured 2026-12-04, docs/layout.md "The typed record"): pydantic is
already installed with every CPU and CUDA environment (aidge-learning 0.10.1 requires it),
keeps the keys it does not list (msgspec's ``Struct`` drops them), and validating a run's
4,109 records took a fraction of the time reading them takes.
"""
from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, InstanceOf, ValidationError, model_validator

from ..reading import validation_problem
from .outcome import outcome_of

__all__ = ["Record", "written", "checked", "problem_of", "FIELDS", "ValidationError"]

_S = Optional[str]
#: an object of any content: checked to be an object, not copied (a third faster than
#: ``dict[str, Any]`` on a run's records, which pydantic copies key by key)
_Obj = InstanceOf[dict]


class Record(BaseModel):
    """A record's fields and their types (``None``: null, or absent). ``strict``: no coercion
    (``"1"`` is not an integer, ``true`` is not a number); ``extra="allow"``: a key not listed
    here is kept as it is."""

    model_config = ConfigDict(strict=True, extra="allow", populate_by_name=True)

    # -- what the line is, who wrote it --------------------------------------------------------
    nodeid: _S = None  #: pytest's id (every record and start line has one; a collected line none)
    schema_: Optional[int] = Field(None, alias="schema")  #: the format's version (records.store.SCHEMA)
    event: _S = None  #: "record", "start" or "collected"
    time: _S = None
    worker: _S = None
    pid: Optional[int] = None
    reported: Optional[bool] = None  #: False: pytest never reported the test (its process was killed)
    # -- the case (records.plugin.case_fields: read from the Case, never parsed from the id) ---
    case: _S = None
    source: _S = None
    kind: _S = None
    operator: _S = None
    torch_op: _S = None
    label: _S = None
    aidge_types: Optional[list[str]] = None
    config_file: _S = None
    case_key: _S = None
    backend: _S = None
    dtype: _S = None
    phases: Optional[list[str]] = None
    expected: Optional[_Obj] = None  #: the table row that decided the case (classify.entry_fields)
    fields_error: _S = None  #: why the case's fields could not be read
    # -- the export ----------------------------------------------------------------------------
    exporter: _S = None
    export_route: _S = None
    onnx_nodes: Optional[int] = None
    export_failed_routes: Optional[dict[str, str]] = None
    # -- pytest's outcome ------------------------------------------------------------------------
    outcome: _S = None  #: said once: a strict XPASS is "xpassed" (records.outcome)
    reports: Optional[list[_Obj]] = None  #: per phase: when, status, duration, reasons
    xpass_strict: Optional[bool] = None
    duration_s: Optional[int | float] = None
    skip_reason: _S = None
    when: _S = None  #: a collection error's "collect"
    # -- what the failure is (records.classify.finding_of) ---------------------------------------
    category: _S = None
    decided: _S = None
    phase: _S = None
    aidge_operator: _S = None
    aidge_node: _S = None
    attribution: _S = None
    attribution_reason: _S = None
    precision: Optional[list[str]] = None  #: what differed by float32 rounding only (interop.case_notes)
    error: _S = None
    message: _S = None
    exc_type: _S = None
    mismatch: Optional[_Obj] = None
    seed: Optional[int] = None
    epoch: Optional[int] = None
    signal: _S = None
    timed_out: Optional[bool] = None
    replay: _S = None
    record_error: _S = None  #: why the record could not be built whole
    # -- diagnostics joined to it --------------------------------------------------------------------
    reproducer: Optional[_Obj] = None
    first_diverging: Optional[_Obj] = None
    timings: Optional[list[_Obj]] = None  #: ModelTester's, from benchmarks.jsonl (at combine)
    # -- a part file's collected line ----------------------------------------------------------------
    count: Optional[int] = None
    files: Optional[dict[str, int]] = None

    @model_validator(mode="after")
    def _one_outcome(self) -> "Record":
        said = outcome_of({"xpass_strict": self.xpass_strict, "outcome": self.outcome})
        if said != str(self.outcome):  # a strict XPASS: "xpassed" (None stays None)
            self.outcome = said
        return self


#: the fields :class:`Record` lists, by their JSON key
FIELDS: dict[str, Any] = {(f.alias or name): f.annotation for name, f in Record.model_fields.items()}


def problem_of(obj: Any, need_nodeid: bool = True) -> str | None:
    """Why ``obj`` is not a record the tools can use (not an object, a field of the wrong type), or None."""
    try:
        checked(obj, need_nodeid)
    except _NotARecord as exc:
        return str(exc)
    return None


class _NotARecord(ValueError):
    pass


def checked(obj: Any, need_nodeid: bool = True) -> dict[str, Any]:
    """``obj`` (a JSON line read back) validated through :class:`Record`: itself, or a copy with
    its outcome said once; a ValueError in the words of :func:`problem_of` otherwise."""
    if not isinstance(obj, dict):
        raise _NotARecord(f"not a record (a JSON object), got {type(obj).__name__}")
    if need_nodeid and not isinstance(obj.get("nodeid"), str):
        raise _NotARecord("not a record (a JSON object with a 'nodeid' string)")
    try:
        rec = Record.model_validate(obj)
    except ValidationError as exc:
        raise _NotARecord(validation_problem(exc, obj)) from None
    return obj if rec.outcome == obj.get("outcome") else {**obj, "outcome": rec.outcome}


def written(fields: dict[str, Any], need_nodeid: bool = True) -> dict[str, Any]:
    """A record (or a part file's line) as the plugin writes it: ``fields`` validated through
    :class:`Record` (a field of the wrong type is a ValueError naming it, before anything is
    written), its outcome said once; the keys given and no other: the reader's own check, :func:`checked`."""
    return checked(fields, need_nodeid)
