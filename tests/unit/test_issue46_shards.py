"""Issue 46, one shard decision: ``INTEROP_SHARD`` (every source, by node id) and
``INTEROP_OPINFO_SHARD`` (the OpInfo cases before they are built, by case id, with the CRC-32 its
table rows were triaged on) are both computed by :func:`interop.records.shard.shard_of`; set
together, or ``INTEROP_OPINFO_SHARD`` beside ``--shard``, they are refused naming both, never an
empty run. The two never mean the same thing (another key, another hash): what is checked is that
each selects exactly what the one function says, and that the OpInfo shard is the one its rows were
made on (``zlib.crc32(case id) % N == K - 1``)."""
from __future__ import annotations

import types
import zlib

import pytest

from interop.records import shard


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
    from interop.records import plugin

    for var in ("INTEROP_SHARD", "INTEROP_OPINFO_SHARD", "PYTEST_CURRENT_TEST", plugin.SESSION_ENV):
        monkeypatch.delenv(var, raising=False)
    assert plugin.session_shard(_config("1/2")) == (1, 2)
    monkeypatch.setenv("INTEROP_OPINFO_SHARD", "1/15")
    with pytest.raises(ValueError, match=r"INTEROP_OPINFO_SHARD='1/15' and option --shard='1/2' are both set"):
        plugin.session_shard(_config("1/2"))
    assert plugin.session_shard(_config(None)) is None  # the OpInfo shard alone: the source's business
    monkeypatch.setenv("INTEROP_SHARD", "2/2")
    with pytest.raises(ValueError, match=r"INTEROP_OPINFO_SHARD='1/15' and INTEROP_SHARD='2/2' are both set"):
        shard.opinfo_shard()


def test_an_inner_session_is_not_refused_for_its_outer_sessions_opinfo_shard(monkeypatch):
    from interop.records import plugin

    monkeypatch.delenv("INTEROP_SHARD", raising=False)
    monkeypatch.setenv("INTEROP_OPINFO_SHARD", "1/15")
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/unit/x.py::t (call)")
    assert plugin.session_shard(_config("1/2")) == (1, 2)
