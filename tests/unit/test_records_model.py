"""Issue 46 item 2, one typed record (:mod:`interop.records.model`): every field listed with its
type once, the plugin builds each record through it (the outcome said once, a strict XPASS
included), the store validates each line read through it and names the file, the line and the
key of a wrong field; the JSON on disk is unchanged (a key the model does not list is kept)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from interop.records import model, store
from interop.records.model import FIELDS, Record, checked, written

ROOT = Path(__file__).resolve().parents[2]
NODE = "tests/test_operators.py::test_op[Abs_a]"


def test_every_documented_key_is_a_field_of_the_model():
    text = (ROOT / "docs" / "records.md").read_text(encoding="utf-8")
    table = text.split("## One record", 1)[1].split("\n## ", 1)[0]
    documented = {key for line in table.splitlines() if line.startswith("| `")
                  for key in re.findall(r"`([a-z_]+)`", line.split("|")[1])}
    assert len(documented) > 30
    assert sorted(documented - set(FIELDS)) == []


def test_the_fields_the_writers_build_are_fields_of_the_model():
    from interop.records.classify import finding_of
    from interop.records.plugin_fields import route_fields

    class Entry:
        operator, phase, category, error, attribution, note, defect = "Abs", "forward", "aidge_error", "q", None, "", ""

    class Expected(Exception):
        entry = Entry()

    written_keys = (set(finding_of(ValueError("x"))) | set(finding_of(Expected("y")))
                    | set(route_fields([("torchscript", {"dynamo": "boom"}, 3)], "auto"))
                    | set(store._lost(NODE, {"worker": "gw0", "pid": 1, "time": store.now(), "dtype": "float32"})))
    assert sorted(written_keys - set(FIELDS)) == []


@pytest.mark.parametrize("line, problem", [
    ({"nodeid": NODE, "seed": "7"}, "key 'seed': an integer, got str"),
    ({"nodeid": NODE, "duration_s": True}, "key 'duration_s': a number, got bool"),
    ({"nodeid": NODE, "xpass_strict": 1}, "key 'xpass_strict': true or false, got int"),
    ({"nodeid": NODE, "reports": [1]}, "key 'reports.0': an object, got int"),
    ({"nodeid": NODE, "aidge_types": ["Abs", 2]}, "key 'aidge_types.1': a string, got int"),
    ({"nodeid": NODE, "schema": "1"}, "key 'schema': an integer, got str"),
    ({"nodeid": NODE, "mismatch": [1]}, "key 'mismatch': an object, got list"),
    ({"nodeid": NODE, "export_failed_routes": {"dynamo": 1}}, "key 'export_failed_routes.dynamo': a string, got int"),
    ({"nodeid": 3}, "not a record (a JSON object with a 'nodeid' string)"),
    ([NODE], "not a record (a JSON object), got list"),
])
def test_a_wrong_field_is_named_with_file_line_and_key_and_costs_only_its_line(tmp_path, line, problem):
    good = {"nodeid": "tests/x.py::test_ok", "outcome": "passed", "reports": [], "duration_s": 1}
    (tmp_path / "records.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(line) + "\n")
    (tmp_path / "session.json").write_text(json.dumps({"complete": True}))
    run = store.load_run(tmp_path)
    assert run.records == [good]  # the integer duration stays an integer: the JSON is not rewritten
    assert f"{tmp_path / 'records.jsonl'}:2: {problem}: skipped" in run.problems, run.problems


def test_the_outcome_is_said_once_when_written_and_when_read():
    strict = {"nodeid": NODE, "outcome": "failed", "xpass_strict": True}
    assert written(strict)["outcome"] == "xpassed" and strict["outcome"] == "failed"  # a new dict, not changed
    assert checked(strict)["outcome"] == "xpassed" and Record.model_validate(strict).outcome == "xpassed"
    plain = {"nodeid": NODE, "outcome": "failed", "xpass_strict": False}
    assert written(plain) is plain and checked(plain) is plain  # nothing to say: the same object
    assert "outcome" not in checked({"nodeid": NODE}) and "outcome" not in written({"nodeid": NODE})  # absent stays absent


def test_a_key_the_model_does_not_list_is_kept_and_absent_keys_stay_absent():
    line = {"nodeid": NODE, "outcome": "passed", "a_newer_writers_key": {"x": [1]}}
    assert checked(line) == line and set(written(line)) == set(line)


def test_the_writer_refuses_a_wrong_field_by_name():
    with pytest.raises(ValueError, match=r"key 'dtype': a string, got dtype"):
        import torch

        written({"nodeid": NODE, "outcome": "passed", "dtype": torch.float32})


def test_the_plugin_writes_a_wrong_record_as_its_statuses_and_the_reason(tmp_path):
    from interop.records.plugin import RecordsPlugin
    from interop.records.store import PartWriter

    plugin = RecordsPlugin.__new__(RecordsPlugin)
    plugin.directory, plugin.write_error, plugin.worker, plugin.session_id = tmp_path, None, "main", "s"
    plugin.writes = True  # the session's main process: the one that writes (a worker's records travel in its reports)
    plugin._writer = PartWriter(tmp_path, "main", "s")
    reports = [{"when": "call", "status": "failed", "duration": 0.5}]
    plugin._write_record(plugin._base(NODE, outcome="failed", reports=reports, seed="not a seed", case="Abs_a"))
    plugin._write_record(plugin._base(NODE + "x", outcome="failed", xpass_strict=True, reports=reports))
    strict = [dict(reports[0], xpass_strict=True)]
    plugin._write_record(plugin._base(NODE + "y", outcome="failed", xpass_strict=True, reports=strict, seed=[1]))
    plugin._writer.close()
    lines = [json.loads(x) for x in plugin._writer.path.read_text().splitlines()]
    assert lines[0]["outcome"] == "failed" and lines[0]["reports"] == reports and "case" not in lines[0]
    assert lines[0]["record_error"] == "the record could not be written: key 'seed': an integer, got str"
    assert lines[1]["outcome"] == "xpassed"  # said by the model, as it was written
    assert lines[2]["outcome"] == "xpassed" and "key 'seed'" in lines[2]["record_error"]  # its fallback too


def test_the_hand_written_type_table_is_gone():
    assert not hasattr(store, "RECORD_TYPES")
    assert store.record_problem is model.problem_of
