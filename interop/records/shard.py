"""``INTEROP_SHARD=K/N``: the K-th of N disjoint, stable shards of every source.

A test belongs to shard ``sha256(node id) % N + 1`` (not CRC-32: ids that differ in one
character, ``ReLU_rank_2`` / ``ReLU_rank_4``, have CRCs of the same parity, measured: six such
catalog ids all fell into shard 1 of 2): each test to exactly one shard, the same
one on every machine and every backend (the node id holds no backend), whatever else is
collected. The plugin deselects the other shards' tests at collection (pytest prints them as
``deselected``); ``nox -s report -- --merge DIR...`` combines the shards' records into one
report and one support matrix.
"""
from __future__ import annotations

import hashlib

from ..env import SHARD_ENV, env_shard, parse_k_of_n

__all__ = ["SHARD_ENV", "shard_from_env", "shard_of", "parse_shard"]


def shard_from_env() -> tuple[int, int] | None:
    """``(K, N)`` of ``$INTEROP_SHARD``, None when unset; a ValueError naming it when malformed."""
    return env_shard(SHARD_ENV)


def parse_shard(raw: str, source: str) -> tuple[int, int]:
    """``K/N`` given as an option (``--shard``): ``(K, N)``, else a ValueError naming ``source``."""
    return parse_k_of_n(raw, source)


def shard_of(nodeid: str, n: int) -> int:
    """The shard (1..n) of a test."""
    return int.from_bytes(hashlib.sha256(nodeid.encode()).digest()[:8], "big") % n + 1
