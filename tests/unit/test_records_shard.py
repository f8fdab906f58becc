"""A test's shard (:mod:`interop.records.shard`).

- One shard decision (issue 46): ``INTEROP_SHARD`` (every source, by node id) and
  ``INTEROP_OPINFO_SHARD`` (the OpInfo cases before they are built, by case id, with the CRC-32 its
  table rows were triaged on) are both computed by :func:`interop.records.shard.shard_of`; set
  together, or ``INTEROP_OPINFO_SHARD`` beside ``--shard``, they are refused naming both, never an
  empty run. The two never mean the same thing (another key, another hash): what is checked is that
  each selects exactly what the one function says, and that the OpInfo shard is the one its rows were
  made on (``zlib.crc32(case id) % N == K - 1``).
- Shards balanced by duration (issue 48, pytest-split's idea): ``INTEROP_SHARD_DURATIONS`` names the
  durations a run's records hold; every test of that file goes to exactly one shard (longest first, to
  the shard with the least seconds), every other test keeps its hash shard; the plan is the same on
  every machine, from the file alone; a bad file is one clear error naming it."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import types
import zlib
from pathlib import Path

import pytest

from interop.records import shard

ROOT = Path(__file__).resolve().parents[2]

def test_both_variables_compute_membership_through_the_one_function(monkeypatch):
    from interop.cases import opinfo

    calls = []
    real = shard.shard_of

    def spy(key, n, hash="sha256"):
        calls.append((key, n, hash))
        return real(key, n, hash)

    monkeypatch.setattr(shard, "shard_of", spy)
    assert opinfo.in_shard("opinfo_abs_s0", (1, 15)) in (True, False)
    rule = shard.shard_rule(4)  # what the records plugin deselects by (INTEROP_SHARD / --shard)
    rule("tests/test_operators.py::test_x[a]")
    assert calls == [("opinfo_abs_s0", 15, "crc32"), ("tests/test_operators.py::test_x[a]", 4, "sha256")]


def test_the_opinfo_shard_is_the_one_its_table_rows_were_made_on():
    ids = [f"opinfo_nn.functional.conv2d_s{i}_{i % 7}x3" for i in range(3000)] + ["opinfo_abs_s0", "opinfo_sum_s1_float16"]
    for n in (1, 2, 7, 15):
        for k in range(1, n + 1):
            assert [i for i in ids if shard.in_shard(i, (k, n), "crc32")] == \
                [i for i in ids if zlib.crc32(i.encode()) % n == k - 1]
        # every id in exactly one shard
        assert sorted(sum(([i for i in ids if shard.in_shard(i, (k, n), "crc32")] for k in range(1, n + 1)), [])) \
            == sorted(ids)
    assert shard.shard_of("tests/a.py::t", 6) == \
        int.from_bytes(__import__("hashlib").sha256(b"tests/a.py::t").digest()[:8], "big") % 6 + 1


def test_the_opinfo_source_keeps_exactly_its_shard_of_the_default_cases(monkeypatch):
    from interop.cases import opinfo

    try:
        opinfo.op_db()
    except opinfo.OpInfoUnavailable as exc:
        pytest.skip(str(exc))
    names = ["abs", "add", "sum", "nn.functional.relu", "mul", "exp", "sigmoid", "tanh"]
    for var in ("INTEROP_SHARD", "INTEROP_OPINFO_SHARD"):
        monkeypatch.delenv(var, raising=False)
    every = [c.id for c in opinfo.opinfo_cases(names)]
    assert len(every) >= 8
    got = []
    for k in (1, 2, 3):
        monkeypatch.setenv("INTEROP_OPINFO_SHARD", f"{k}/3")
        ids = [c.id for c in opinfo.opinfo_cases(names)]
        assert ids == [i for i in every if zlib.crc32(i.encode()) % 3 == k - 1]
        got += ids
    assert sorted(got) == sorted(every)  # the three shards: the whole, each case once


def _config(option: str | None):
    return types.SimpleNamespace(getoption=lambda name, default=None: option if name == "--shard" else default)


def test_opinfo_shard_beside_the_shard_option_is_refused_naming_both(monkeypatch):
    from interop.records import plugin_session

    for var in ("INTEROP_SHARD", "INTEROP_OPINFO_SHARD", "PYTEST_CURRENT_TEST", plugin_session.SESSION_ENV):
        monkeypatch.delenv(var, raising=False)
    assert plugin_session.session_shard(_config("1/2")) == (1, 2)
    monkeypatch.setenv("INTEROP_OPINFO_SHARD", "1/15")
    with pytest.raises(ValueError, match=r"INTEROP_OPINFO_SHARD='1/15' and option --shard='1/2' are both set"):
        plugin_session.session_shard(_config("1/2"))
    assert plugin_session.session_shard(_config(None)) is None  # the OpInfo shard alone: the source's business
    monkeypatch.setenv("INTEROP_SHARD", "2/2")
    with pytest.raises(ValueError, match=r"INTEROP_OPINFO_SHARD='1/15' and INTEROP_SHARD='2/2' are both set"):
        shard.opinfo_shard()


def test_an_inner_session_is_not_refused_for_its_outer_sessions_opinfo_shard(monkeypatch):
    from interop.records import plugin_session

    monkeypatch.delenv("INTEROP_SHARD", raising=False)
    monkeypatch.setenv("INTEROP_OPINFO_SHARD", "1/15")
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/unit/x.py::t (call)")
    assert plugin_session.session_shard(_config("1/2")) == (1, 2)


def _durations(n: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    # the suite's mix: many cheap operator cases, a few architectures a hundred times longer
    return {f"tests/test_x.py::test_case[{i}]": (rng.uniform(60, 240) if i % 97 == 0 else rng.uniform(0.05, 2.0))
            for i in range(n)}


@pytest.mark.parametrize("n", [1, 2, 3, 6, 8])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_balanced_plan_is_disjoint_complete_and_balanced(n, seed):
    durations = _durations(700, seed)
    plan = shard.balanced_plan(durations, n)
    assert set(plan) == set(durations) and set(plan.values()) <= set(range(1, n + 1))  # complete, each in one
    rule = shard.shard_rule(n)  # every id to exactly one shard: the K-th shard's ids over K are a partition
    totals = shard.plan_totals(durations, n)
    assert sum(totals) == pytest.approx(sum(durations.values()))
    # longest-first greedy: no shard holds more than the lightest one plus the longest test
    assert max(totals) - min(totals) <= max(durations.values()) + 1e-9
    hashed = [0.0] * n
    for nodeid, seconds in durations.items():
        hashed[rule(nodeid) - 1] += seconds
    assert max(totals) <= max(hashed) + 1e-9  # never worse than the hash rule on the same tests


def test_the_plan_depends_on_the_durations_alone_not_their_order():
    durations = _durations(300, 5)
    shuffled = dict(sorted(durations.items(), key=lambda item: random.Random(9).random()))
    assert shard.balanced_plan(durations, 4) == shard.balanced_plan(shuffled, 4)


def test_an_id_the_durations_lack_keeps_its_hash_shard(tmp_path):
    path = tmp_path / "durations.json"
    path.write_text(json.dumps({"a::t[1]": 10.0, "a::t[2]": 1.0}))
    rule = shard.shard_rule(3, path)
    assert rule("a::t[1]") == 1 and rule("a::t[2]") == 2
    assert rule("a::new_test") == shard.shard_of("a::new_test", 3)


def test_durations_from_a_runs_records_and_the_cli_that_writes_them(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    recs = [{"schema": 1, "event": "record", "nodeid": "t.py::a", "outcome": "passed", "duration_s": 3.5,
             "backend": "cpu"},
            {"schema": 1, "event": "record", "nodeid": "t.py::a", "outcome": "passed", "duration_s": 5.0,
             "backend": "cuda"},
            {"schema": 1, "event": "record", "nodeid": "t.py::b", "outcome": "failed", "duration_s": 0.25}]
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (run / "session.json").write_text(json.dumps({"schema": 1, "complete": True}))
    assert shard.load_durations(run) == {"t.py::a": 5.0, "t.py::b": 0.25}  # the longest over backends
    out = tmp_path / "ci" / "durations.json"
    proc = subprocess.run([sys.executable, "-m", "interop.records.shard", "durations", str(run), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text()) == {"t.py::a": 5.0, "t.py::b": 0.25}
    proc = subprocess.run([sys.executable, "-m", "interop.records.shard", "plan", str(out), "2"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout.splitlines() == ["shard 1/2: 5.0 s", "shard 2/2: 0.2 s"]


@pytest.mark.parametrize("content, said", [
    (None, "cannot read the shard durations"),
    ("{not json", "not JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"t.py::a": -1}', "key 't.py::a': expected a finite number of seconds >= 0"),
    ('{"t.py::a": "3"}', "key 't.py::a'"),
])
def test_a_bad_durations_file_is_named(tmp_path, content, said):
    path = tmp_path / "durations.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ValueError, match="durations.json") as info:
        shard.shard_rule(2, path)
    assert said in str(info.value)


SAMPLE = """
import time, pytest

@pytest.mark.parametrize("i", range(8))
def test_case(i):
    pass
"""


def _session(project: Path, k: int, env_extra: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    env = {key: v for key, v in os.environ.items() if not key.startswith(("INTEROP_", "PYTEST_"))}
    env.update(PYTHONPATH=str(ROOT), **env_extra)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--shard", f"{k}/2",
                           "--records", str(project / f"records{k}"), *extra, "test_sample.py"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=240)


def test_pytest_sessions_split_by_the_durations(tmp_path):
    """Two real sessions (shard 1/2, shard 2/2, one with xdist workers): together every test once, and the
    7-second test alone in its shard, as the durations' plan says."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_sample.py").write_text(SAMPLE)
    durations = {f"test_sample.py::test_case[{i}]": (7.0 if i == 3 else 1.0) for i in range(8)}
    (project / "durations.json").write_text(json.dumps(durations))
    env = {shard.DURATIONS_ENV: str(project / "durations.json")}
    ran = {}
    for k, extra in ((1, ()), (2, ("-n", "2"))):
        proc = _session(project, k, env, *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        ran[k] = {json.loads(line)["nodeid"] for line in (project / f"records{k}" / "records.jsonl").read_text()
                  .splitlines() if line.strip()}
    assert ran[1] | ran[2] == set(durations) and not ran[1] & ran[2]
    assert ran[1] == {"test_sample.py::test_case[3]"}  # 7 s against 7 x 1 s
    # a durations file that is not there: one usage error naming it, not an INTERNALERROR per worker
    proc = _session(project, 1, {shard.DURATIONS_ENV: str(project / "gone.json")}, "-n", "2")
    assert proc.returncode == 4 and "gone.json: cannot read the shard durations" in proc.stderr
    assert "INTERNALERROR" not in proc.stdout + proc.stderr
