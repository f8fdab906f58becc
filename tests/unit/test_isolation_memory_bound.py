"""Issue 44: a memory bound per case child (interop.equivalence.isolation: RLIMIT_DATA at the
child's start plus ``INTEROP_CASE_MEMORY``). Before: a leaking case grew until something outside
the suite killed it, and its verdict said "killed from outside ... rerun" without a word about
memory. Now it fails in its child, and the verdict says memory and names the variable."""
from __future__ import annotations

import os

import pytest

from interop.equivalence import isolation
from interop.equivalence.isolation import run_isolated
from interop.equivalence.isolation_memory import memory_bound
from interop.errors import AidgeCrash

pytestmark = pytest.mark.skipif(not (isolation.fork_available() and os.path.exists("/proc/self/status")),
                                reason="fork and /proc (Linux)")


@pytest.fixture
def bound_256m(monkeypatch):
    monkeypatch.setenv("INTEROP_CASE_MEMORY", "256M")


def _leak():
    keep = []
    while True:
        keep.append(b"x" * (16 << 20))  # touched memory, as a real leak's


def _leak_then_abort():
    keep = []
    try:
        while True:
            keep.append(b"x" * (16 << 20))
    except MemoryError:
        os.abort()  # what Aidge does on an uncaught std::bad_alloc


def _one_allocation_too_large():
    raise MemoryError("std::bad_alloc")  # pybind11's words for a single huge allocation (a wrong shape)


def test_a_leaking_case_fails_in_its_child_and_the_verdict_says_memory(bound_256m):
    with pytest.raises(AidgeCrash) as caught:
        run_isolated(_leak, timeout=60)
    crash = caught.value
    assert crash.memory_bound_hit is True and crash.category == "crash"
    assert "ran out of memory" in str(crash) and "memory bound (256 MiB" in str(crash)
    assert "INTEROP_CASE_MEMORY" in str(crash) and "MemoryError" in str(crash)


def test_a_child_that_dies_at_its_bound_is_called_memorys_death(bound_256m):
    with pytest.raises(AidgeCrash) as caught:
        run_isolated(_leak_then_abort, timeout=60)
    crash = caught.value
    assert crash.signal == "SIGABRT" and crash.memory_bound_hit is True
    assert "killed by SIGABRT" in str(crash) and "it died at its memory bound" in str(crash)
    assert "INTEROP_CASE_MEMORY" in str(crash)


def test_one_allocation_too_large_stays_the_error_it_is(bound_256m):
    # Aidge's std::bad_alloc of a wrong shape is an expected failure of category aidge_error: the
    # bound must not turn it into a crash
    with pytest.raises(MemoryError, match="std::bad_alloc"):
        run_isolated(_one_allocation_too_large, timeout=60)


def test_the_bound_leaves_an_ordinary_case_alone(bound_256m):
    assert run_isolated(lambda: len(b"y" * (64 << 20)), timeout=60) == 64 << 20


@pytest.mark.parametrize("raw, expected", [("512M", 512 << 20), ("8G", 8 << 30), ("1.5GiB", 3 << 29),
                                           ("0", None), ("off", None), ("none", None), ("1073741824", 1 << 30)])
def test_the_variable(monkeypatch, raw, expected):
    monkeypatch.setenv("INTEROP_CASE_MEMORY", raw)
    assert memory_bound() == expected


@pytest.mark.parametrize("raw", ["lots", "-1G", "1M", "8X"])
def test_a_malformed_variable_is_named(monkeypatch, raw):
    monkeypatch.setenv("INTEROP_CASE_MEMORY", raw)
    with pytest.raises(ValueError, match=f"INTEROP_CASE_MEMORY={raw!r}"):
        memory_bound()
    with pytest.raises(ValueError, match="INTEROP_CASE_MEMORY"):
        run_isolated(lambda: 1, timeout=10)  # before anything is forked


def test_the_default_is_half_the_physical_memory(monkeypatch):
    monkeypatch.delenv("INTEROP_CASE_MEMORY", raising=False)
    assert memory_bound() == os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
