"""Reading the benchmark JSONL of :class:`~interop.equivalence.tester.ModelTester`:
:func:`parse_benchmarks` -> :class:`BenchData`.

One object per line: ``name``, ``forward``/``backward`` = ``{mean1, mean2, ratio, samples}``
(required; a current ModelTester adds ``median1``/``median2``, ``min1``/``min2``,
``samples1``/``samples2``, ``ratio_min``, ``call2``, ``bridge2``, ``timed2``, and its
``ratio`` is ``median2 / median1``) or null, ``seed``, ``threads``, ``test_workers`` (the
pytest-xdist workers of its session: above 1, the timings shared the CPU with other tests),
``torch``, ``aidge``, ``test``, ``time``. A malformed line is
reported as ``file:line: why`` and skipped; when a name appears several times (runs
appended), the last line wins.
"""
from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from ..reading import json_lines
from ..reading import UnreadableInput

__all__ = ["BenchData", "parse_benchmarks"]


@dataclasses.dataclass
class BenchData:
    """Valid records (the last one per name), and one ``file:line: why`` per bad line."""

    records: list[dict[str, Any]]
    problems: list[str]
    superseded: int = 0
    source: str = "<bench>"


#: fewer calls than this behind a side's figure: the report flags the entry as not robust
MIN_ROBUST_SAMPLES = 5


def number_or_none(value: Any) -> bool:
    """None or a number (not a bool): what a timing field may hold."""
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _finite(value: int | float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a float (a 400-digit ratio)
        return False


def _shown(value: Any) -> str:
    return f"a {len(str(abs(value)))}-digit integer" if isinstance(value, int) and not _finite(value) else repr(value)


def _check_phase(record: dict[str, Any], phase: str) -> str | None:
    stats = record.get(phase)
    if stats is None:
        return None if phase == "backward" else f"'{phase}' is null"
    if not isinstance(stats, dict):
        return f"'{phase}' is not an object"
    for key in ("mean1", "mean2", "ratio", "samples"):
        if key not in stats:
            return f"missing key '{phase}.{key}'"
        if not number_or_none(stats[key]):
            return f"'{phase}.{key}' is not a number: {stats[key]!r}"
    # an impossible figure is a bad line, never a ranked slowdown (x-50, NaN medians were ranked)
    for key in _TIMES:
        value = stats.get(key)
        if value is None:
            continue
        if not number_or_none(value):
            return f"'{phase}.{key}' is not a number: {value!r}"
        if not _finite(value) or (value < 0 and key != "bridge2") or (key in _POSITIVE and value == 0):
            return f"'{phase}.{key}' is impossible: {_shown(value)} (a time or a ratio is finite and positive)"
    # ModelTester writes ratio = median2 / median1: a ratio its own medians contradict is a bad
    # line (1e300 beside medians giving 2.0 was ranked the worst slowdown)
    m1, m2, ratio = stats.get("median1"), stats.get("median2"), stats.get("ratio")
    if m1 and m2 and ratio is not None and not math.isclose(ratio, m2 / m1, rel_tol=1e-3):
        return f"'{phase}.ratio' {ratio:.3g} is not its own medians' median2 / median1 = {m2 / m1:.3g}"
    for key in ("samples", "samples1", "samples2"):
        value = stats.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            return f"'{phase}.{key}' is not a count: {value!r}"
    return None


#: the timing fields of a phase: seconds or ratios, each finite and >= 0 (the ratios > 0; the
#: bridge's overhead, a difference of two medians, may be slightly negative)
_TIMES = ("mean1", "mean2", "median1", "median2", "min1", "min2", "ratio", "ratio_min", "bridge2", "call2")
_POSITIVE = ("ratio", "ratio_min")


def parse_benchmarks(text: str, source: str = "<bench>") -> BenchData:
    """Parse the benchmark JSONL. Malformed lines become problems naming ``source:line``;
    raises :class:`UnreadableInput` only when there are lines but none is a valid record."""
    by_name: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    superseded = 0
    nonblank = 0
    nonblank = sum(1 for raw in text.splitlines() if raw.strip())
    for number, record in json_lines(text, source, problems):
        if not isinstance(record, dict):
            problems.append(f"{source}:{number}: not a JSON object")
            continue
        if not isinstance(record.get("name"), str) or not record.get("name"):
            problems.append(f"{source}:{number}: missing key 'name'")
            continue
        if "forward" not in record:
            problems.append(f"{source}:{number}: {record['name']}: missing key 'forward'")
            continue
        why = _check_phase(record, "forward") or _check_phase(record, "backward")
        if why:
            problems.append(f"{source}:{number}: {record['name']}: {why}")
            continue
        if record["name"] in by_name:
            superseded += 1
            del by_name[record["name"]]  # keep file order of the latest records
        by_name[record["name"]] = dict(record, line=number)
    if nonblank and not by_name:
        shown = "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else "")
        raise UnreadableInput(f"{source}: no valid benchmark record in {nonblank} line(s): {shown}")
    return BenchData(list(by_name.values()), problems, superseded, source)
