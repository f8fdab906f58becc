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
import json
import math
from pathlib import Path

__all__ = ["AsvRatios", "load_asv_ratios", "RATIO_BENCHMARK"]

#: the asv benchmark that holds the ratio, per kind of case
RATIO_BENCHMARK = "track_aidge_torch_ratio"
_PHASE_CLASSES = {"Forward": "forward", "Backward": "backward"}


@dataclasses.dataclass
class AsvRatios:
    """``ratios[(case id, phase)]``: asv's Aidge/torch ratio; ``source``: the result file;
    ``commit``: its full hash; ``env``: its asv environment."""

    ratios: dict[tuple[str, str], float]
    source: str
    commit: str
    env: str

    def get(self, case: str, phase: str) -> float | None:
        return self.ratios.get((case, phase))


def _param(value: str) -> str:
    """asv stores a parameter as its repr (``"'ReLU_rank_2'"``)."""
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value
    return parsed if isinstance(parsed, str) else value


def parse_result_file(data: dict) -> dict[tuple[str, str], float]:
    """``(case id, phase) -> ratio`` of one asv result file's content (failed and skipped
    cases, stored as null / NaN, left out)."""
    out: dict[tuple[str, str], float] = {}
    for name, row in (data.get("results") or {}).items():
        parts = name.split(".")
        if len(parts) != 3 or parts[2] != RATIO_BENCHMARK or parts[1] not in _PHASE_CLASSES:
            continue
        if not isinstance(row, list) or len(row) < 2 or not isinstance(row[0], list):
            continue
        values, params = row[0], row[1] or []
        combos = list(itertools.product(*params)) if params else [()]
        for combo, value in zip(combos, values):
            if len(combo) != 1 or not isinstance(value, (int, float)) or not math.isfinite(value):
                continue
            out[(_param(combo[0]), _PHASE_CLASSES[parts[1]])] = float(value)
    return out


def load_asv_ratios(results_dir: str | Path, commit: str, prefer: str | None = None) -> AsvRatios | None:
    """The ratios asv recorded for ``commit`` (a hash or its 8-character prefix) under
    ``results_dir`` (``results/asv``); None when there are none. With several result files
    of the commit (the Aidge-release matrix), those whose environment name contains
    ``prefer`` (e.g. ``aidge-core0.10.1``) win, then the latest."""
    results_dir = Path(results_dir)
    if not commit or not results_dir.is_dir():
        return None
    found = []
    for path in sorted(results_dir.glob(f"*/{commit[:8]}*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or not str(data.get("commit_hash") or "").startswith(commit):
            continue
        full = str(data["commit_hash"])
        ratios = parse_result_file(data)
        if ratios:
            env = str(data.get("env_name") or "")
            # asv writes a millisecond timestamp; anything else (a string, null) sorts first, never a TypeError
            date = data.get("date")
            date = float(date) if isinstance(date, (int, float)) and not isinstance(date, bool) \
                and math.isfinite(date) else float("-inf")
            found.append((bool(prefer) and prefer in env, date, str(path), path, full, env, ratios))
    if not found:
        return None
    _, _, _, path, full, env, ratios = max(found, key=lambda f: (f[0], f[1], f[2]))
    return AsvRatios(ratios, str(path), full, env)
