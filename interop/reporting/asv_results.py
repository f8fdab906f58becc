"""asv's Aidge/torch ratios of one commit, for the report: :func:`load_asv_ratios`.

``asv run`` writes ``results/asv/<machine>/<commit[:8]>-<environment>.json``; its
``track_aidge_torch_ratio`` benchmarks (``operators.Forward``, ``operators.Backward``,
``models.Forward``, ``models.Backward``, parameter = the case id, the pytest id, which is
also ModelTester's record name) hold median(Aidge scheduler) / median(torch) sampled for
0.2 s per side in one process: a steadier figure than a test's own timings. When results
of the run's commit exist, the report ranks slowdowns on them.

Nothing here imports torch, Aidge or asv (the result files are plain JSON).
"""
from __future__ import annotations

import ast
import dataclasses
import itertools
import math
from pathlib import Path
from typing import Any

from ..reading import MAX_LOG_BYTES, UnsafeInputError, loads_json, read_user_bytes

__all__ = ["AsvRatios", "load_asv_ratios", "parse_ort_ratios", "RATIO_BENCHMARK", "ORT_RATIO_BENCHMARK", "AGREEMENT"]

#: the asv benchmark that holds the ratio, per kind of case
RATIO_BENCHMARK = "track_aidge_torch_ratio"
#: Aidge/onnxruntime on the same ONNX graph (forward only: benchmarks/ort_column.py), shown beside it
ORT_RATIO_BENCHMARK = "track_aidge_ort_ratio"
_PHASE_CLASSES = {"Forward": "forward", "Backward": "backward"}


@dataclasses.dataclass
class AsvRatios:
    """``ratios[(case id, phase)]``: asv's Aidge/torch ratio; ``source``: the result file;
    ``commit``: its full hash; ``env``: its asv environment."""

    ratios: dict[tuple[str, str], float]
    source: str
    commit: str
    env: str
    #: ``ort[(case id, phase)]``: asv's Aidge/onnxruntime ratio of the same file (forward cases)
    ort: dict[tuple[str, str], float] = dataclasses.field(default_factory=dict)

    def get(self, case: str, phase: str) -> float | None:
        return self.ratios.get((case, phase))

    def get_ort(self, case: str, phase: str) -> float | None:
        return self.ort.get((case, phase))


def _param(value: str) -> str:
    """asv stores a parameter as its repr (``"'ReLU_rank_2'"``)."""
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value
    return parsed if isinstance(parsed, str) else value


#: how far asv's ratio may stray from the quotient of the same file's ``time_aidge`` and
#: ``time_torch`` medians of the case: separate processes minutes apart, so the machine's drift
#: enters the quotient (up to 2.3x measured, docs/noise-floor.md); 10x apart, one of them is wrong
AGREEMENT = 10.0


def _finite(value: Any) -> float | None:
    """``value`` as a finite float, or None (a bool, a string, an integer too large for a float:
    a 400-digit ratio used to raise OverflowError out of the report)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _absent(value: Any) -> bool:
    """asv's own "no figure": null (failed) or NaN (skipped)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _rows(results: dict, kind: str, source: str, problems: list[str]) -> dict[tuple[str, str], tuple[str, list]]:
    """``(module, phase) -> (benchmark name, [(case, value)])`` of one kind of benchmark."""
    out: dict[tuple[str, str], tuple[str, list]] = {}
    for name, row in results.items():
        parts = name.split(".")
        if len(parts) != 3 or parts[2] != kind or parts[1] not in _PHASE_CLASSES:
            continue
        if not isinstance(row, list) or len(row) < 2 or not isinstance(row[0], list):
            problems.append(f"{source}: key results.{name}: not asv's [values, params, ...] row: left out")
            continue
        values, params = row[0], row[1] or []
        if not isinstance(params, list) or not all(isinstance(p, list) for p in params):
            problems.append(f"{source}: key results.{name}: params is not a list of lists: left out")
            continue
        combos = list(itertools.product(*params)) if params else [()]
        cases = [(_param(c[0]), v) for c, v in zip(combos, values) if len(c) == 1 and isinstance(c[0], str)]
        out[(parts[0], parts[1])] = (name, cases)
    return out


def parse_result_file(data: dict, source: str = "asv result file",
                      problems: list[str] | None = None) -> dict[tuple[str, str], float]:
    """``(case id, phase) -> ratio`` of one asv result file's content. Failed and skipped cases
    (null / NaN) are left out silently, as asv means them; a ratio that is no finite positive
    number, or that strays more than :data:`AGREEMENT` times from the quotient of the file's
    own ``time_aidge`` / ``time_torch`` medians of the case, is left out and named in
    ``problems`` (file, key, case): it used to be ranked (1e300 as the worst slowdown)."""
    problems = [] if problems is None else problems
    results = data.get("results")
    if results is None:
        return {}
    if not isinstance(results, dict):
        problems.append(f"{source}: key results: expected an object, got {type(results).__name__}: left out")
        return {}
    times = {kind: _rows(results, kind, source, []) for kind in ("time_torch", "time_aidge")}
    out: dict[tuple[str, str], float] = {}
    for where, (name, cases) in _rows(results, RATIO_BENCHMARK, source, problems).items():
        medians = {kind: dict(times[kind].get(where, ("", []))[1]) for kind in times}
        for case, value in cases:
            if _absent(value):
                continue
            ratio = _finite(value)
            said = f"{source}: key results.{name}, case {case!r}"
            if ratio is None or ratio <= 0:
                shown = f"{len(str(value))}-digit integer" if isinstance(value, int) and abs(value) > 10 ** 30 \
                    else repr(value)[:40]
                problems.append(f"{said}: the ratio {shown} is no finite positive number: left out")
                continue
            torch_s, aidge_s = (_finite(medians[k].get(case)) for k in ("time_torch", "time_aidge"))
            if torch_s and aidge_s and torch_s > 0 and aidge_s > 0:
                quotient = aidge_s / torch_s
                if max(ratio / quotient, quotient / ratio) > AGREEMENT:
                    problems.append(f"{said}: the ratio {ratio:.3g} disagrees with the file's own medians "
                                    f"(time_aidge / time_torch = {quotient:.3g}) by more than x{AGREEMENT:g}: left out")
                    continue
            out[(case, _PHASE_CLASSES[where[1]])] = ratio
    return out


def parse_ort_ratios(data: dict, source: str = "asv result file",
                     problems: list[str] | None = None) -> dict[tuple[str, str], float]:
    """``(case id, phase) -> Aidge/onnxruntime`` of one asv result file's content (its
    ``track_aidge_ort_ratio`` rows); failed and skipped cases left out, a figure that is no finite
    positive number named in ``problems``."""
    problems = [] if problems is None else problems
    results = data.get("results")
    if not isinstance(results, dict):
        return {}
    out: dict[tuple[str, str], float] = {}
    for where, (name, cases) in _rows(results, ORT_RATIO_BENCHMARK, source, problems).items():
        for case, value in cases:
            if _absent(value):
                continue
            ratio = _finite(value)
            if ratio is None or ratio <= 0:
                problems.append(f"{source}: key results.{name}, case {case!r}: the ratio {repr(value)[:40]} is no "
                                "finite positive number: left out")
                continue
            out[(case, _PHASE_CLASSES[where[1]])] = ratio
    return out


def _date(value: Any) -> float:
    """asv's millisecond timestamp; anything else (a string, null, a 400-digit integer) sorts
    first, never a TypeError or an OverflowError."""
    number = _finite(value)
    return float("-inf") if number is None else number


def load_asv_ratios(results_dir: str | Path, commit: str, prefer: str | None = None,
                    problems: list[str] | None = None) -> AsvRatios | None:
    """The ratios asv recorded for ``commit`` (a hash or its 8-character prefix) under
    ``results_dir`` (``results/asv``); None when there are none. With several result files
    of the commit (the Aidge-release matrix), those whose environment name contains
    ``prefer`` (e.g. ``aidge-core0.10.1``) win, then the latest. What cannot be read (a file
    the reading policy refuses: nested too deeply, too large, a link out; malformed JSON; a
    figure that is no ratio) is named in ``problems`` (file, key), never a traceback."""
    problems = [] if problems is None else problems
    results_dir = Path(results_dir)
    if not commit or not results_dir.is_dir():
        return None
    found = []
    for path in sorted(results_dir.glob(f"*/{commit[:8]}*.json")):
        try:
            data = loads_json(read_user_bytes(path, within=results_dir, max_bytes=MAX_LOG_BYTES), path)
        except (OSError, ValueError) as exc:  # UnsafeInputError, JSONDecodeError, UnicodeDecodeError
            problems.append(f"asv result file {exc if isinstance(exc, UnsafeInputError) else f'{path}: {exc}'}: "
                            "left out")
            continue
        if not isinstance(data, dict) or not str(data.get("commit_hash") or "").startswith(commit):
            continue
        full = str(data["commit_hash"])
        ratios = parse_result_file(data, str(path), problems)
        if ratios:
            env = str(data.get("env_name") or "")
            found.append((bool(prefer) and prefer in env, _date(data.get("date")), str(path), path, full, env, ratios,
                          parse_ort_ratios(data, str(path), problems)))
    if not found:
        return None
    _, _, _, path, full, env, ratios, ort = max(found, key=lambda f: (f[0], f[1], f[2]))
    return AsvRatios(ratios, str(path), full, env, ort)
