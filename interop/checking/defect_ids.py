"""A blocker's defect id, as the ledger gives it: the record a findings run writes for the failure
(:func:`ledger_record`, built again in a child under the reproducer capture), else the record of
the verdict's fields alone (:func:`_verdict_id`); the titles of a ledger file
(:func:`ledger_titles`)."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ..bridge import capture
from ..reading import UnsafeInputError, read_user_json
from ..records.classify import finding_of
from ..registry.identify import identify, signature_of
from ..reporting.models import page_entries
from .leaves import _backward_runs
from .report import Blocker, import_gaps
from .words import _shorten

#: the test id a check's record goes by (the ledger counts no record of ``tests/unit/``)
NODEID = "interop-check::{where}"


def ledger_record(fn, args, directory: str | Path, nodeid: str, *, backward: bool = True,
                  backward_only: bool = False) -> dict[str, Any] | None:
    """The record a findings run writes for the failure of ``fn(*args)``, built the way the run
    builds it (in this process: run it in a child): Aidge's run under the reproducer capture
    (:mod:`interop.bridge.capture`, :func:`interop.reproducers.bundle.write_bundle` into
    ``directory``), the failure's fields (:func:`interop.records.classify.finding_of`) and the
    reproducer's (:func:`interop.reproducers.fields.record_fields`: the first diverging node,
    the one-node graph's op, an export the checker refuses). None when it does not fail. The
    check is :func:`~interop.equivalence.verdict.check_callable` (verify's), or with
    ``backward_only`` :func:`_backward_runs` (the second verdict of a leaf)."""
    from ..reproducers.bundle import write_bundle
    from ..reproducers.fields import record_fields
    from ..reproducers.layout import bundle_folder
    from ..equivalence.callable_check import check_callable

    directory = Path(directory)
    capture.start(bundle_folder(directory, nodeid), nodeid, write_bundle, directory / "aidge.log")
    try:
        if backward_only:
            _backward_runs(fn, args)
        else:
            check_callable(fn, args, {}, backward=backward)
    except Exception as exc:  # noqa: BLE001 - the failure is what this builds the record of
        capture.failed(exc)
        record = {"nodeid": nodeid, "outcome": "failed", "backend": "cpu", **finding_of(exc)}
        record.update(record_fields(directory, nodeid, record, capture.aidge_log_text(capture.current())))
        return record
    finally:
        capture.stop()
    return None


def _ledger_id(b: Blocker, source: tuple | None, backward: bool, timeout: float | None) -> tuple[str | None, str]:
    """``(id, how)``: the ledger's defect id of ``b`` (None: no Aidge finding, or none could be
    computed: ``how`` says why). An import gap's record is one per node (the ledger names a gap by
    its ONNX op and reads nothing else of it); any other blocker's record is the one a run writes
    (:func:`ledger_record`, run again in a child on ``source``: ``(kind, fn, args)``)."""
    from ..equivalence.isolation import run_isolated
    from ..reporting.ledger import is_aidge_finding

    if b.attribution not in (None, "aidge", "unknown") or not b.category:
        return None, f"attributed to {b.attribution}: no Aidge defect"
    if b.category == "unsupported_operator" and import_gaps(b.message):
        record = {"category": b.category, "error": b.message, "phase": b.phase, "backend": "cpu",
                  "outcome": "failed", "attribution": b.attribution}
        return (_named(b, identify(record)), "the import gap's record") if is_aidge_finding(record) else \
            (None, "no Aidge finding")
    if source is None:
        return None, "no check to build the run's record from"
    kind, fn, args = source
    with tempfile.TemporaryDirectory(prefix="interop-check-") as directory:
        try:
            record = run_isolated(ledger_record, fn, args, directory, NODEID.format(where=b.where[0]),
                                  backward=backward, backward_only=kind == "backward", timeout=timeout)
        except Exception as exc:  # noqa: BLE001 - the run died (a crash): the id is the crash's, unknown here
            return None, f"the run's record could not be built: {type(exc).__name__}: {_shorten(str(exc), 200)}"
    if record is None:
        return None, "the check passed when run again: no record"
    if (record.get("category"), record.get("phase")) != (b.category, b.phase):
        return None, (f"run again, the check failed otherwise ({record.get('category')} in {record.get('phase')}): "
                      "no id")
    if not is_aidge_finding(record):
        return None, f"the run's record is no Aidge finding (attributed to {record.get('attribution')})"
    signature = signature_of(record)
    if not b.operator and signature["operator"] != "?":  # the run's record names it (its first diverging node)
        b.operator, b.operator_from = signature["operator"], "the run's record"
    return _named(b, identify(record, signature=signature)), "the run's record"


def _named(b: Blocker, ident: dict) -> str:
    """The id of the ledger's answer (:func:`interop.registry.identify.identify`), its title kept."""
    b.known = ident["title"]
    return ident["id"]


def _verdict_id(b: Blocker) -> str | None:
    """The id of the record the verdict alone gives (category, message, phase, operator): no
    reproducer, so it may differ from the ledger's where the ledger reads the reproducer (a
    value mismatch's first diverging node)."""
    from ..reporting.ledger import is_aidge_finding

    record = {"category": b.category, "error": b.message, "phase": b.phase, "backend": "cpu",
              "aidge_operator": b.operator if b.operator_from == "verdict" else None, "outcome": "failed",
              "attribution": b.attribution}
    return _named(b, identify(record)) if is_aidge_finding(record) else None


def ledger_titles(ledger: str | Path | None) -> dict[str, str]:
    """``{defect id: title}`` of a ``defects.json`` (none: {}; a file that cannot be read or is not
    JSON: {}); a wrong entry is a :class:`~interop.reporting.models.PageFileError` naming the file,
    its id and the key."""
    if not ledger:
        return {}

    try:  # the suite's reading policy: a regular file, bounded, no link out, no FIFO to hang on
        data = read_user_json(ledger)
    except (OSError, ValueError, UnsafeInputError):
        return {}
    # each entry typed (reporting.models.DefectEntry): a wrong one is a ValueError naming the file, its id and the key
    return {e["id"]: e.get("title", "") for e in page_entries(data, ledger, page="defects.json")}
