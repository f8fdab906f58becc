"""Samples a case source generated at collection, kept in memory for the forked children that
run its cases.

The OpInfo and ModuleInfo sources generate every sample once to collect their cases; the
child that runs a case used to generate the sample list again, up to its index (42 ms per OpInfo
case in the default run, median; 206 ms on average over the full selection, where indices run
high: the largest share of a case, docs/suite-cost.md). Now the
collecting process keeps the samples of the cases it selected, and a child forked by
:func:`interop.equivalence.isolation.run_isolated` takes its sample from there: the same
object, generated under the same seed, in the child's copy-on-write memory, so whatever the
case does to it never reaches the parent or another case. Outside such a child (a case run
in-process), :func:`kept` gives nothing and the source generates the sample afresh. The
sources still check that the sample is the one the case id describes.
"""
from __future__ import annotations

from typing import Any, Callable, Hashable

from ..equivalence.isolation import in_isolated_child
from ..stages import stage

__all__ = ["keep", "kept", "kept_or_generated", "forget"]

_KEPT: dict[tuple[str, Hashable, int], Any] = {}


def keep(source: str, key: Hashable, index: int, sample: Any) -> None:
    """Keep sample ``index`` of ``key`` (an entry and dtype, or an entry and mode) of ``source``."""
    _KEPT[(source, key, index)] = sample


def kept(source: str, key: Hashable, index: int) -> Any:
    """The kept sample, in a forked child only; None elsewhere or when none was kept."""
    return _KEPT.get((source, key, index)) if in_isolated_child() else None


def kept_or_generated(source: str, key: Hashable, index: int, generate: Callable[[], Any]) -> Any:
    """The kept sample (in a forked child), else ``generate()``; timed as the ``sample`` stage."""
    with stage("sample"):
        sample = kept(source, key, index)
        return generate() if sample is None else sample


def forget(source: str | None = None) -> None:
    """Drop the kept samples (of one source)."""
    for k in [k for k in _KEPT if source is None or k[0] == source]:
        del _KEPT[k]
