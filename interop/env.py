"""The suite's environment variables, validated when read: :func:`env_number`. A bad value is a
``ValueError`` naming the variable, the value and the accepted range, raised where the
variable is read (never a failure later without a name). Standard library only."""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Mapping

__all__ = ["env_number", "env_flag", "env_choice", "env_shard", "parse_k_of_n", "env_seed", "env_dir", "SEED_MAX", "SHARD_ENV"]

#: the shard of every source (``K/N``): read by the records plugin (interop.records.shard), and named by
#: the OpInfo source when its own shard variable is set beside it
SHARD_ENV = "INTEROP_SHARD"

#: the largest seed taken from the environment: every generator the suite seeds (torch's,
#: numpy's, Python's) takes it; 99999999999999999999999 used to be accepted and fail inside
#: torch (``Overflow when unpacking long``) without naming the variable
SEED_MAX = 2 ** 32 - 1


def env_number(name: str, default: float, *, kind: type = float, minimum: float | None = None,
               positive: bool = False, maximum: float | None = None) -> float:
    """``$name`` as a number (``default`` when unset or empty); a ``ValueError`` naming the
    variable and the accepted range when it is not a finite number of ``kind`` in range
    (``inf`` or ``1e309`` as a timeout used to fail every case with ``OverflowError:
    timestamp out of range for platform time_t``)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    what = "an integer" if kind is int else "a finite number"

    def shown(bound: float) -> str:
        return str(int(bound)) if kind is int else f"{bound:g}"

    bounds = []
    if positive:
        bounds.append("> 0")
    elif minimum is not None:
        bounds.append(f">= {shown(minimum)}")
    if maximum is not None:
        bounds.append(f"<= {shown(maximum)}")
    accepted = f"{what} {' and '.join(bounds)}".strip()
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"environment variable {name}={raw!r}: expected {accepted}") from None
    if (not math.isfinite(value) or (positive and value <= 0) or (minimum is not None and value < minimum)
            or (maximum is not None and value > maximum)):
        raise ValueError(f"environment variable {name}={raw!r}: expected {accepted}")
    return value


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def env_flag(name: str, default: bool, environ: Mapping[str, str] | None = None) -> bool:
    """``$name`` as a switch: ``1/true/yes/on`` or ``0/false/no/off`` (any case; unset or empty:
    ``default``); anything else is a ``ValueError`` naming the variable (a typo such as
    ``INTEROP_ISOLATE=ture`` used to be read silently as one or the other). ``environ``: the
    environment to read (default ``os.environ``; a child's, as the report's timing pass has)."""
    raw = (os.environ if environ is None else environ).get(name, "").strip().lower()
    if not raw:
        return default
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ValueError(f"environment variable {name}={raw!r}: expected one of {', '.join(_TRUE + _FALSE)}")



def env_choice(name: str, choices, default: str, environ: Mapping[str, str] | None = None) -> str:
    """``$name`` as one of ``choices`` (any case; unset or empty: ``default``); anything else is a
    ``ValueError`` naming the variable, its value and the choices (``INTEROP_BACKEND=banana`` used
    to become pytest's ``--backend`` default unchecked: argparse checks no default)."""
    raw = (os.environ if environ is None else environ).get(name, "").strip().lower()
    if not raw:
        return default
    if raw not in choices:
        raise ValueError(f"environment variable {name}={raw!r}: expected one of {', '.join(choices)}")
    return raw

def parse_k_of_n(raw: str, what: str) -> tuple[int, int]:
    """``"K/N"`` with ``1 <= K <= N`` -> ``(K, N)``; anything else a ``ValueError`` naming ``what``."""
    import re

    m = re.fullmatch(r"(\d{1,6})/(\d{1,6})", raw.strip())
    if not m or not 1 <= int(m[1]) <= int(m[2]):
        raise ValueError(f"{what}={raw!r}: expected K/N with 1 <= K <= N (e.g. 2/4)")
    return int(m[1]), int(m[2])


def env_shard(name: str) -> tuple[int, int] | None:
    """``$name`` as ``K/N`` with ``1 <= K <= N`` (``(K, N)``; None when unset or empty); anything
    else is a ``ValueError`` naming the variable."""
    raw = os.environ.get(name, "").strip()
    return parse_k_of_n(raw, f"environment variable {name}") if raw else None


def env_sample_cap(name: str, default: int) -> int | None:
    """``$name`` as a count of samples: unset or empty -> ``default``, ``all`` -> None (no cap),
    an integer >= 1 -> it; anything else a ``ValueError`` naming the variable."""
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw == "all":
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"environment variable {name}={raw!r}: expected an integer >= 1 or 'all'")
    return int(raw)


def env_seed(name: str, default: int) -> int:
    """``$name`` as a seed: an integer from 0 to :data:`SEED_MAX` (``default`` when unset or
    empty); anything else a ``ValueError`` naming the variable and the range."""
    return int(env_number(name, default, kind=int, minimum=0, maximum=SEED_MAX))


def env_dir(name: str) -> Path | None:
    """``$name`` as a directory to write into (None when unset or empty): an existing directory,
    or a path that can become one (created by whoever writes there). A path that is a file, or
    lies under one, is a ``ValueError`` naming the variable (``INTEROP_RESULTS_DIR`` naming a
    file used to fail every test with an unnamed ``NotADirectoryError``)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    path = Path(raw)
    for where in (path, *path.parents):
        if where.is_dir():
            return path
        if where.exists() or where.is_symlink():
            what = "not a directory" if where == path else f"lies under {str(where)!r}, which is not a directory"
            raise ValueError(f"environment variable {name}={raw!r}: {what} (a file, or a link to nothing): give a "
                             "directory, or a path where one can be created")
    return path
