"""The pytest side of the records: one JSON record per test, written by the process that ran it.

Registered by :mod:`interop.pytest_plugin` when the session has a records directory:
``--records DIR``, else ``$INTEROP_RECORDS_DIR``, else ``$INTEROP_RESULTS_DIR`` (the run
directory of ``nox -s report``, the staging directory ``tests/conftest.py`` gives a plain
session). A session started from inside another session's test (pytester) writes none unless
given ``--records``: one run never touches another's files.

- The process that runs a test builds its record and hands it to pytest's own report channel:
  the teardown report's ``user_properties`` carries the record (one JSON line), the setup
  report's the case's fields (issue 46). One process writes: the session's main process (a plain
  session, or the xdist controller, which receives every worker's reports) appends each line to
  the session's one file (:class:`~interop.records.store.PartWriter`, one ``O_APPEND`` write a
  line) as the report arrives, and takes both entries out of ``user_properties`` before any other
  plugin reads them (``--junitxml`` would write them as properties). A ``start`` line when a test
  starts (with the case's fields: in a plain session at once; under xdist when the setup report
  brings them), its record when it ends: id, source, case, the torch operator as the user wrote it, the Aidge node
  types declared, the configuration file and case key, backend, dtype, phases, pytest's outcome
  and per-phase statuses (``pytest_report_teststatus``, exactly what pytest's summary counts),
  duration, and for a failure or an expected failure what :func:`~interop.records.classify.finding_of`
  reads from the typed exception (category, phase, Aidge operator and node, attribution, the
  full error, the comparator's figures, seed, signal), the skip reason, the replay command.
- The xdist controller records the test of a worker that died (xdist's crash report, its public
  ``"???"`` report), with the worker's signal: SIGKILL / SIGTERM from outside is category
  ``killed``, never an Aidge crash. No public hook of xdist gives that signal: :func:`_signal_of`
  reads it from the gateway's process (``tests/unit/test_records_transport.py`` fails when xdist
  changes it). A worker that dies during a test's setup never sent its case's fields: that
  record names the test by its id alone.
- The main process combines the parts when the session ends (:func:`~interop.records.store.combine`)
  with pytest's own counts (the terminal reporter's), the exit status and whether the session ran
  to its end; a session killed before that is combined by whoever reads it next, as incomplete.
- ``--shard K/N`` (or ``INTEROP_SHARD=K/N`` for a top-level session: an inner session a test
  starts runs what it is given) deselects the tests of the other shards (:mod:`interop.records.shard`).

The plugin (:class:`RecordsPlugin`, its hooks) lives here; the rest, by what each part does, in
:mod:`.plugin_session` (the session's settings: its records
folder, its shard, nested or not, reproducers on or not, the keys carried to xdist's workers) and
:mod:`.plugin_fields` (what is read of one test: its case's fields, its export routes, its outcome).
"""
from __future__ import annotations

import importlib.metadata as md
import json
import os
import platform
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ..bridge import capture  # light: no torch, no Aidge
from ..case_notes import case_notes
from ..env import given, read as read_env, settings as env_settings
from ..errors import EXTERNAL_SIGNALS
from ..exporters import export_routes
from ..reproducers.run import start_fresh_server
from . import shard as _shard
from ..reading import UnsafeInputError, confined
from .classify import MESSAGE_LIMIT, finding_of
from .model import checked, written
from .progress import file_of  # the reader's own key for a test's file
from .store import PARTS_DIR, SCHEMA, PartWriter, combine, line_of, now
from .plugin_session import (COUNTED, FIELDS_PROPERTY, RECORD_PROPERTY, SESSION_ENV, _DURATIONS_KEY, _SESSION_KEY,
                             _SHARD_KEY, _WORKER_KEY, _records_error, config_backend, nested, reproducers_on)
from .plugin_fields import (_case_of, _fields_or_error, _new_state, _outcome, _signal_of, _skip_reason, _statuses,
                            route_fields)

__all__ = ["RecordsPlugin"]


class RecordsPlugin:
    def __init__(self, config: pytest.Config, directory: Path | None, shard: tuple[int, int] | None = None):
        self.config = config
        self.directory = directory
        workerinput = getattr(config, "workerinput", None)
        self.worker = workerinput.get("workerid", "gw?") if workerinput is not None else "main"
        self.session_id = (workerinput.get(_SESSION_KEY) if workerinput is not None else None) \
            or f"{os.getpid()}-{now().replace(':', '').replace('+', '_')}"
        self._marked = False
        self.shard = shard
        self.shard_text = f"{shard[0]}/{shard[1]}" if shard else None
        #: $INTEROP_SHARD_DURATIONS of a top-level session: its shards balanced by duration (records.shard)
        self.shard_durations = (workerinput.get(_DURATIONS_KEY) if workerinput is not None
                                else None if nested() else str(read_env(_shard.DURATIONS_ENV) or "")) or None
        try:  # read here, in pytest_configure: a bad file is one usage error, not an INTERNALERROR per worker
            self.shard_rule = _shard.shard_rule(shard[1], self.shard_durations) if shard else None
        except ValueError as exc:
            raise pytest.UsageError(f"{_shard.DURATIONS_ENV}: {exc}") from None
        if workerinput is None and directory is not None and not given(SESSION_ENV):
            os.environ[SESSION_ENV] = self.session_id  # what this session starts is nested
            self._marked = True
        self.is_controller = False
        #: the one process of the session that writes its records (a plain session's, the xdist
        #: controller); a worker hands its records over in its reports' ``user_properties``
        self.writes = workerinput is None
        self._writer: PartWriter | None = None
        #: why this process's records could not be written (None: they were)
        self.write_error: str | None = None
        self._state: dict[str, dict[str, Any]] = {}
        #: nodeid -> the case fields its ``start`` line carries (written before the test runs: a
        #: test whose process dies keeps its case's fields, issue 46)
        self._start_fields: dict[str, dict[str, Any]] = {}
        #: the controller's: the tests whose setup report brought their case's fields
        self._fields_seen: set[str] = set()
        self.started = now()

    # -- writing --------------------------------------------------------------------------
    def _base(self, nodeid: str, **fields: Any) -> dict[str, Any]:
        """What every record of this process holds, then ``fields``."""
        return {"schema": SCHEMA, "event": "record", "nodeid": nodeid, "reported": True, "time": now(),
                "worker": self.worker, "pid": os.getpid(), **fields}

    def _write(self, obj: dict[str, Any] | str) -> None:
        """One line (an object, or a line a worker made, :func:`~interop.records.store.line_of`)
        into the session's part file, by the process that writes (:attr:`writes`). A part file that cannot be made or written (the
        folder a link out, refused by :func:`interop.reading.confined`; a full or read-only disk)
        is said once, by name, and the session goes on without records: it ends incomplete
        (:meth:`pytest_sessionfinish`), never in a traceback per test."""
        if self.directory is None or self.write_error is not None:  # registered for the shard alone / broken
            return
        if not self.writes:  # a worker's lines travel in its reports (pytest_runtest_makereport)
            raise RuntimeError("interop records: an xdist worker writes no records file")
        try:
            if self._writer is None:
                self._writer = PartWriter(self.directory, self.worker, self.session_id)
            self._writer.write(obj)
        except (UnsafeInputError, OSError) as exc:
            self.write_error = _records_error(self.directory, exc)
            self._say(self.write_error)

    def _say(self, text: str) -> None:
        """An error of the records on the terminal (pytest's reporter; stderr for an xdist worker)."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and getattr(self.config, "workerinput", None) is None:
            reporter.write_line(f"ERROR: {text}", red=True, bold=True)
        else:
            sys.stderr.write(f"ERROR: {text}\n")
            sys.stderr.flush()

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # xdist's controller (DSession, registered at configure) runs no test itself
        self.is_controller = self.config.pluginmanager.has_plugin("dsession")
        if self.directory is None or getattr(self.config, "workerinput", None) is not None:
            return
        # the records folder checked before any test runs: one clear error (exit 4), never a
        # traceback inside a hook (INTERNALERROR) nor a folder made through a link
        try:
            confined(self.directory / PARTS_DIR, self.directory, kind="dir", missing_ok=True)
            self._writer = PartWriter(self.directory, self.worker, self.session_id)
        except (UnsafeInputError, OSError) as exc:
            raise pytest.UsageError(_records_error(self.directory, exc)) from None

    # -- xdist: the controller hands the directory to its workers ---------------------------
    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        node.workerinput[_WORKER_KEY] = str(self.directory) if self.directory is not None else ""
        node.workerinput[_SESSION_KEY] = self.session_id
        node.workerinput[_SHARD_KEY] = self.shard_text or ""
        node.workerinput[_DURATIONS_KEY] = self.shard_durations or ""

    # -- collection: shards -----------------------------------------------------------------
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list) -> None:
        if self.shard is None:
            return
        k, rule = self.shard[0], self.shard_rule
        keep, dropped = [], []
        for item in items:
            (keep if rule(item.nodeid) == k else dropped).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep

    def _collected(self, nodeids: list[str], worker: str, pid: int | None) -> None:
        """The ``collected`` line the progress line counts against (:mod:`interop.records.progress`):
        how many tests, and how many of each file (its ETA weights them by the last run)."""
        files = dict(Counter(file_of(nodeid) for nodeid in nodeids))
        self._write(written({"event": "collected", "count": len(nodeids), "time": now(),
                             "worker": worker, "pid": pid, "files": files}, need_nodeid=False))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.writes and not self.is_controller:  # a plain session (the controller collects nothing)
            self._collected([item.nodeid for item in session.items], self.worker, os.getpid())

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        """xdist's public hook: a worker collected ``ids`` (each worker collects them all)."""
        if self.writes:
            self._collected(list(ids), getattr(getattr(node, "gateway", None), "id", None) or "gw?", None)

    def pytest_collectreport(self, report) -> None:
        # the session's own collection, or (under xdist) a worker's failed one, which xdist hands
        # to the controller once
        if report.failed and self.writes:
            status = self.config.hook.pytest_report_teststatus(report=report, config=self.config)[0]
            text = str(report.longrepr or "")
            self._write_record(self._base(
                report.nodeid, case=report.nodeid, source="collection", outcome=status or "error", when="collect",
                reports=[{"when": "collect", "status": status or "error", "duration": 0.0}], category="unknown",
                decided="text", error=text.strip().splitlines()[-1][:300] if text.strip() else "collection failed",
                message=text[:MESSAGE_LIMIT]))

    # -- running ----------------------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem):
        if not self.is_controller:
            self._start_fields[item.nodeid] = _fields_or_error(item)
        capturing = self._start_capture(item)
        with export_routes() as routes, case_notes() as notes:
            self._routes, self._notes = routes, notes
            try:
                yield
            finally:
                self._routes = self._notes = None
                if capturing:
                    self._stop_capture()

    # -- reproducers (interop.reproducers) -----------------------------------------
    def _start_capture(self, item: pytest.Item) -> bool:
        """Capture what this test's reproducer needs, when the session writes reproducers
        (``$INTEROP_REPRODUCERS``, on under ``nox -s report``) and records."""
        if self.is_controller or self.directory is None or not reproducers_on():
            return False
        from ..reproducers.bundle import write_bundle, write_pending
        from ..reproducers.layout import bundle_folder

        start_fresh_server()
        case, _ = _case_of(item)
        self._log = self.directory / "reproducers" / ".logs" / f"{self.worker or 'main'}-{os.getpid()}.log"
        self._bundle = bundle_folder(self.directory, item.nodeid)
        capture.start(self._bundle, item.nodeid, write_bundle, self._log, getattr(case, "tolerance", None),
                      pending=write_pending)
        return True

    def _stop_capture(self) -> None:
        from ..reproducers.bundle import PENDING

        capture.stop()
        try:
            self._log.unlink(missing_ok=True)
        except OSError:
            pass
        # what a dying case would have needed: not needed (the record is written by now)
        shutil.rmtree(self._bundle / PENDING, ignore_errors=True)
        try:
            self._bundle.rmdir()  # the folder of a case that left no bundle
        except OSError:
            pass

    def pytest_runtest_logstart(self, nodeid: str, location) -> None:
        line = {"event": "start", "nodeid": nodeid, "time": now()}
        if self.is_controller:  # xdist forwards each worker's: the case's fields come with its setup report
            self._write(written(line))
            return
        self._state[nodeid] = state = _new_state()
        state["start"] = self._start_line({**line, "worker": self.worker, "pid": os.getpid()},
                                          self._start_fields.pop(nodeid, {}))
        if self.writes:  # a plain session: the start line with the case's fields, before the test runs
            self._write(state["start"])

    @staticmethod
    def _start_line(line: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
        try:
            return written({**line, **fields})
        except ValueError as exc:  # a case field of the wrong type: the start line without them, saying so
            return written({**line, "fields_error": f"the case's fields could not be written: {exc}"})

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call):
        # tryfirst: the outermost wrapper, so the report is the one pytest's own wrappers
        # (skipping's xfail, the expected-failure guard) made final
        outcome = yield
        if self.is_controller:
            return
        report = outcome.get_result()
        state = self._state.setdefault(item.nodeid, _new_state())
        if not state["fields"] or call.when == "call":
            state["fields"] = _fields_or_error(item)
        state["routes"] = list(getattr(self, "_routes", None) or [])
        state["notes"] = {k: list(v) for k, v in (getattr(self, "_notes", None) or {}).items()}
        if call.excinfo is not None and not report.passed and state["exc"] is None \
                and not isinstance(call.excinfo.value, pytest.skip.Exception):
            state["exc"] = call.excinfo.value
            capture.failed(call.excinfo.value)  # a case captured in this process: its reproducer here
        state["reports"].append(self._status_entry(report))
        if self.directory is None:
            return
        # the records travel in the reports (issue 46): the process that writes takes them out
        # (pytest_runtest_logreport); xdist carries a worker's to its controller
        if call.when == "setup" and not self.writes and state.get("start") is not None:
            report.user_properties.append((FIELDS_PROPERTY, line_of(state["start"])))
        elif call.when == "teardown":
            report.user_properties.append((RECORD_PROPERTY, line_of(self._finished(item.nodeid, state))))

    def _status_entry(self, report) -> dict[str, Any]:
        """One phase's entry of the record's ``reports``: its status as pytest's summary counts it
        (``pytest_report_teststatus``), duration, and the skip, xfail and strict-XPASS reasons."""
        status = self.config.hook.pytest_report_teststatus(report=report, config=self.config)[0]
        entry = {"when": report.when, "status": status, "duration": round(report.duration, 6)}
        if report.skipped and not hasattr(report, "wasxfail"):
            entry["skip_reason"] = _skip_reason(report)
        if getattr(report, "wasxfail", None):
            entry["xfail_reason"] = report.wasxfail
        if report.failed and str(report.longrepr or "").startswith("[XPASS(strict)]"):
            entry["xpass_strict"] = True
            entry["xfail_reason"] = str(report.longrepr)[len("[XPASS(strict)]"):].strip() or None
        return entry

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report) -> None:
        if not self.writes:
            return
        if report.when == "???":  # xdist: the worker running this test died
            self._lost_to_dead_worker(report)
            return
        if self.directory is None:  # the process that ran the test carried nothing
            return
        # a plain session wrote the start line itself: only a worker's setup report carries one
        key = {"setup": FIELDS_PROPERTY if self.is_controller else None, "teardown": RECORD_PROPERTY}.get(report.when)
        props = list(getattr(report, "user_properties", None) or [])
        if key is not None and props:
            # ours is the setup or teardown report's last entry of its key (appended by the outermost
            # makereport wrapper, after the item's own properties): an entry a test made with
            # record_property, in any report, stays where it is
            at = next((i for i in range(len(props) - 1, -1, -1) if isinstance(props[i], (tuple, list))
                       and len(props[i]) == 2 and props[i][0] == key), None)
            if at is None:
                return
            line = props.pop(at)[1]
            # out before any other plugin reads them (--junitxml writes every property)
            report.user_properties = props
            self._write_carried(report, key, line)

    def _write_carried(self, report, key: str, line: Any) -> None:
        """A line a report carried, checked before it is written (a JSON object of the test's own
        id, through the typed record); one that is not is said in the test's record, never written."""
        event = "start" if key == FIELDS_PROPERTY else "record"
        try:
            obj = checked(json.loads(line)) if isinstance(line, str) else None
            if obj is None or obj.get("nodeid") != report.nodeid or obj.get("event") != event:
                raise ValueError(f"not a {event} line of {report.nodeid!r}")
        except (ValueError, RecursionError) as exc:
            if key == RECORD_PROPERTY:
                self._write_record(self._base(
                    report.nodeid, outcome="error", reports=[], category="unknown", decided="none",
                    record_error=f"the record its report carried could not be read: {str(exc)[:300]}"))
            return
        if key == FIELDS_PROPERTY:
            self._fields_seen.add(report.nodeid)
        self._write(line)

    def pytest_runtest_logfinish(self, nodeid: str, location) -> None:
        self._state.pop(nodeid, None)
        self._start_fields.pop(nodeid, None)

    def _finished(self, nodeid: str, state: dict[str, Any]) -> dict[str, Any]:
        """The test's record (:meth:`_record`), through :meth:`_checked`; one whose building raised
        is its case's fields, outcome and per-phase statuses with the error."""
        try:
            record = self._record(nodeid, state)
        except Exception as exc:  # a record that says what went wrong, never a session that dies
            record = self._base(nodeid, **state.get("fields", {}), outcome=_outcome(state["reports"]),
                                reports=state["reports"], record_error=f"{type(exc).__name__}: {exc}")
        return self._checked(record)

    def _checked(self, record: dict[str, Any]) -> dict[str, Any]:
        """``record`` built through the typed record (:func:`interop.records.model.written`: its
        types checked, its outcome said once); one that cannot be (a field of the wrong type,
        named) is its id, outcome and per-phase statuses with the reason."""
        try:
            return written(record)
        except (TypeError, ValueError) as exc:
            reports = record.get("reports") if _statuses(record.get("reports")) else []
            return written(self._base(
                str(record.get("nodeid")), outcome=_outcome(reports), reports=reports,
                xpass_strict=any(r.get("xpass_strict") is True for r in reports),
                record_error=f"the record could not be written: {exc}"))

    def _write_record(self, record: dict[str, Any]) -> None:
        """A record the writing process makes itself (a collection error, a dead worker's test)."""
        self._write(self._checked(record))

    def _record(self, nodeid: str, state: dict[str, Any]) -> dict[str, Any]:
        from ..equivalence.tester_replay import replay_command

        reports = state["reports"]
        outcome = _outcome(reports)
        rec = self._base(nodeid, **state["fields"], outcome=outcome, reports=reports,
                         duration_s=round(sum(r["duration"] for r in reports), 6),
                         xpass_strict=any(r.get("xpass_strict") for r in reports))
        rec.setdefault("backend", config_backend(self.config))
        rec.update(route_fields(state.get("routes") or [], self.config.getoption("--exporter", default="auto")))
        if (state.get("notes") or {}).get("precision"):
            rec["precision"] = state["notes"]["precision"]
        skip = next((r["skip_reason"] for r in reports if r.get("skip_reason")), None)
        if skip:
            rec["skip_reason"] = skip
        if outcome in ("failed", "error", "xfailed") and state["exc"] is not None:
            rec.update(finding_of(state["exc"]))
        elif rec["xpass_strict"] or outcome == "xpassed":
            expected = rec.get("expected") or {}
            reason = next((r.get("xfail_reason") for r in reports if r.get("xfail_reason")), None)
            rec.update(category=expected.get("category", "unknown"), decided="table" if expected else "none",
                       phase=expected.get("phase"), aidge_operator=expected.get("operator"),
                       error=expected.get("quote") or reason or "expected to fail, passed",
                       attribution=expected.get("attribution"))
        elif outcome in ("failed", "error"):
            rec.update(category="unknown", decided="none", error="failed without an exception (see pytest's output)")
        if outcome in ("failed", "error", "xfailed", "xpassed") or rec["xpass_strict"]:
            rec["replay"] = replay_command(rec.get("seed"), nodeid)
        if outcome in ("failed", "error", "xfailed") and self.directory is not None and reproducers_on():
            from ..reproducers.fields import record_fields

            state = capture.current()
            log = capture.aidge_log_text(state) if state is not None else ""
            rec.update(record_fields(self.directory, nodeid, rec, log))
        return rec

    def _lost_to_dead_worker(self, report) -> None:
        worker = getattr(report, "node", None)
        signal = _signal_of(worker)
        external = signal in EXTERNAL_SIGNALS
        name = getattr(getattr(worker, "gateway", None), "id", "?")
        how = f"killed by {signal}" if signal else "died (xdist gives no signal)"
        # its case's fields come with its setup report (at combine, from that start line)
        unsent = {} if report.nodeid in self._fields_seen else {
            "fields_error": "the xdist worker died before the test's setup report, which carries its case's fields"}
        self._write_record(self._base(
            # the case's fields come from the worker's start line of the test, at combine (store)
            report.nodeid, outcome="failed",
            reports=[{"when": "???", "status": "failed", "duration": 0.0}],
            category="killed" if external else "crash", decided="run", phase=None,
            attribution=None if external else "unknown", signal=signal,
            error=f"the pytest-xdist worker {name} running the test {how}", message=str(report.longrepr or ""),
            worker=name, pid=None, **unsent))

    # -- the end ----------------------------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus) -> None:
        if self._writer is not None:
            self._writer.close()
        if "interop.reproducers.run" in sys.modules:  # its fork server, if this process started one
            sys.modules["interop.reproducers.run"].stop_fresh_server()
        if self._marked and given(SESSION_ENV) == self.session_id:
            del os.environ[SESSION_ENV]
        if getattr(self.config, "workerinput", None) is not None or self.directory is None:
            return  # a worker: the controller combines
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        stats = getattr(reporter, "stats", {}) or {}
        # what pytest's summary line counts (terminal.py: count_towards_summary)
        counts = {key: sum(1 for r in stats.get(key, []) if getattr(r, "count_towards_summary", True))
                  for key in COUNTED}
        code = int(exitstatus)
        interrupted = code == int(pytest.ExitCode.INTERRUPTED)
        stopped = bool(session.shouldstop) or bool(session.shouldfail)
        complete = code in (0, 1, 5) and not interrupted and not stopped
        why = None
        if interrupted:
            why = "interrupted (KeyboardInterrupt or a signal): the records are partial"
        elif stopped:
            why = f"stopped early ({session.shouldstop or session.shouldfail}): the records are partial"
        elif code not in (0, 1, 5):
            why = f"pytest exit status {code} ({pytest.ExitCode(code).name}): the records may be partial"
        versions = {}
        for dist in ("torch", "aidge_core", "aidge_backend_cpu", "aidge_onnx", "onnxruntime"):
            try:
                versions[dist] = md.version(dist)
            except md.PackageNotFoundError:
                pass
        if self.write_error is not None:
            complete = False
            why = f"{why + '; ' if why else ''}the records could not be written: {self.write_error}"
        try:
            combine(self.directory, session_id=self.session_id, session={
                "schema": SCHEMA, "started": self.started, "finished": now(), "exitstatus": code,
                "interrupted": interrupted, "complete": complete, "ended": why or "ran to its end",
                "pytest_counts": counts, "collected": getattr(session, "testscollected", None),
                "backend": config_backend(self.config),
                "shard": self.shard_text, "args": list(self.config.invocation_params.args),
                "settings": env_settings(),
                "versions": versions, "python": platform.python_version(), "platform": sys.platform})
        except (UnsafeInputError, OSError) as exc:
            self.write_error = self.write_error or _records_error(self.directory, exc)
            self._say(f"{_records_error(self.directory, exc)} (the records were not combined: "
                      "the next reader of the run combines what is left, as incomplete)")
        if self.write_error is not None and session.exitstatus in (0, 1, 5):
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR  # the run's records are not whole
