"""The suite's environment variables, each declared once (:data:`VARIABLES`: name, parser, default,
meaning) and validated when read: :func:`read`. A bad value is a ``ValueError`` naming the variable,
the value and what is accepted, raised where the variable is read (never a failure later without a
name). :func:`check` reads every declared variable at once: a findings run
(``python -m interop.reporting.run``) and a pytest session (the plugin's ``pytest_cmdline_main``) call it
before anything runs or is written, one line per bad value. Standard library only (a parser that needs
the package's own list of names imports it when the variable is set)."""
from __future__ import annotations

import math
import os
from pathlib import Path
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

__all__ = ["Variable", "VARIABLES", "read", "replay_variables", "settings", "variables_table", "option_default", "check", "parse_k_of_n", "SEED_MAX", "SHARD_ENV"]

#: the shard of every source (``K/N``): read by the records plugin (interop.records.shard), and named by
#: the OpInfo source when its own shard variable is set beside it
SHARD_ENV = "INTEROP_SHARD"

#: the largest seed taken from the environment: every generator the suite seeds (torch's,
#: numpy's, Python's) takes it; 99999999999999999999999 used to be accepted and fail inside
#: torch (``Overflow when unpacking long``) without naming the variable
SEED_MAX = 2 ** 32 - 1


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def parse_k_of_n(raw: str, what: str) -> tuple[int, int]:
    """``"K/N"`` with ``1 <= K <= N`` -> ``(K, N)``; anything else a ``ValueError`` naming ``what``."""
    try:
        return _k_of_n(raw.strip())
    except ValueError as exc:
        raise ValueError(f"{what}={raw!r}: {exc}") from None


# ---------------------------------------------------------------------------------------
# The declarations: every INTEROP_* variable the package reads, in one place
# ---------------------------------------------------------------------------------------
_UNSET = object()


@dataclass(frozen=True)
class Variable:
    """One environment variable: its ``name``, its ``parse`` (the stripped, non-empty value -> what it
    means; a ``ValueError`` saying what is expected), its ``default`` (unset or empty; a callable is
    called), what it ``means``, and the pytest ``option`` whose default it is (given on the command
    line, the option decides and the variable is not read). ``replay``: it selects or shapes the
    cases (which run, and how), so a failure's replay command carries it when set
    (:func:`interop.equivalence.tester.replay_command`) and ``session.json`` records it."""

    name: str
    parse: Callable[[str], Any]
    default: Any
    meaning: str
    option: str | None = None
    replay: bool = False

    def raw(self, environ: Mapping[str, str] | None = None) -> str:
        return (os.environ if environ is None else environ).get(self.name, "").strip()

    def read(self, environ: Mapping[str, str] | None = None, default: Any = _UNSET) -> Any:
        """The value (``environ``: default ``os.environ``; ``default``: the reader's own, in place of the
        declared one); a ``ValueError`` naming the variable."""
        raw = self.raw(environ)
        if not raw:
            default = self.default if default is _UNSET else default
            return default() if callable(default) else default
        try:
            return self.parse(raw)
        except ValueError as exc:
            raise ValueError(f"environment variable {self.name}={raw!r}: {exc}") from None


def _number(kind: type = float, minimum: float | None = None, positive: bool = False,
            maximum: float | None = None) -> Callable[[str], float]:
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
    accepted = f"expected {what} {' and '.join(bounds)}".strip()

    def parse(raw: str) -> float:
        try:
            value = kind(raw)
        except ValueError:
            raise ValueError(accepted) from None
        if (not math.isfinite(value) or (positive and value <= 0) or (minimum is not None and value < minimum)
                or (maximum is not None and value > maximum)):
            raise ValueError(accepted)
        return value
    return parse


def _flag(raw: str) -> bool:
    low = raw.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(f"expected one of {', '.join(_TRUE + _FALSE)}")


def _choice(choices: Callable[[], tuple[str, ...]]) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        allowed = choices()
        if raw.lower() not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return raw.lower()
    return parse


def _k_of_n(raw: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d{1,6})/(\d{1,6})", raw)
    if not m or not 1 <= int(m[1]) <= int(m[2]):
        raise ValueError("expected K/N with 1 <= K <= N (e.g. 2/4)")
    return int(m[1]), int(m[2])


def _sample_cap(raw: str) -> int | None:
    if raw.lower() == "all":
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError("expected an integer >= 1 or 'all'")
    return int(raw)


def _directory(raw: str) -> Path:
    path = Path(raw)
    for where in (path, *path.parents):
        if where.is_dir():
            return path
        if where.exists() or where.is_symlink():
            what = "not a directory" if where == path else f"lies under {str(where)!r}, which is not a directory"
            raise ValueError(f"{what} (a file, or a link to nothing): give a directory, or a path where one can be "
                             "created")
    return path


def _existing(raw: str) -> Path:
    path = Path(raw).expanduser()
    if not path.exists():
        raise ValueError("no such file or folder")
    return path


def _path(raw: str) -> Path:
    """A path whose content its reader checks where it is used (a suite's collection)."""
    return Path(raw).expanduser()


_SIZE = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>[kmgt]?)(?:i?b)?", re.IGNORECASE)


def _memory(raw: str) -> int | None:
    if raw.lower() in ("0", "off", "none", "no", "false"):
        return None
    m = _SIZE.fullmatch(raw)
    if not m:
        raise ValueError("expected a size (8G, 512M, bytes) or 0/off")
    value = int(float(m["n"]) * 1024 ** "_kmgt".index((m["unit"] or "_").lower()))
    if value < 16 << 20:
        raise ValueError("below 16M, no case could start")
    return value


def _half_the_memory() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError, AttributeError):
        return None


def _megabytes(raw: str) -> int:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("expected a size in MB") from None
    if not 0 < value < 1e6:
        raise ValueError("expected a size in MB between 0 and 1e6")
    return int(value * 1e6)


def _release(raw: str) -> str:
    from packaging.version import InvalidVersion, Version

    try:
        Version(raw)
    except InvalidVersion:
        raise ValueError("not a release (a PEP 440 version such as 0.10.1)") from None
    return raw


#: the dtypes of the OpInfo source beyond float32 (``interop.cases.opinfo.EXTRA_DTYPES`` is this)
OPINFO_EXTRA_DTYPES = ("float64", "float16", "int64")


def _opinfo_dtypes(raw: str) -> tuple[str, ...]:
    known = ("float32", *OPINFO_EXTRA_DTYPES)
    if raw.lower() == "all":
        return known
    names = tuple(d.strip() for d in raw.lower().split(",") if d.strip())
    bad = [d for d in names if d not in known]
    if bad or not names:
        raise ValueError(f"unknown dtype(s) {bad}; expected 'all' or a comma list of {known}")
    return names


#: the groups of ONNX backend tests, in report order (``interop.cases.onnx_conformance.GROUPS`` is this)
ONNX_GROUPS = ("node", "pytorch-converted", "pytorch-operator", "simple", "light")


def _onnx_groups(raw: str) -> tuple[str, ...]:
    GROUPS = ONNX_GROUPS
    names = tuple(g.strip() for g in raw.split(",") if g.strip())
    bad = [g for g in names if g not in GROUPS]
    if bad or not names:
        raise ValueError(f"unknown group(s) {bad}; expected a comma list of {GROUPS}")
    return names


def _case_ids(raw: str) -> frozenset[str]:
    ids = frozenset(c.strip() for c in raw.split(",") if c.strip())
    if not ids:
        raise ValueError("expected case ids, comma-separated")
    return ids


#: what ``--torch-device`` and ``$INTEROP_TORCH_DEVICE`` accept
TORCH_DEVICE_RE = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")


def _torch_device(raw: str) -> str:
    if not TORCH_DEVICE_RE.match(raw):
        raise ValueError("expected auto, cpu, cuda, cuda:N or mps")
    return raw


def _session_id(raw: str) -> str:
    if not re.fullmatch(r"[\w.:+-]{1,200}", raw):
        raise ValueError("expected a session id (letters, digits, . : + - _), as the suite sets it")
    return raw


def _backends() -> tuple[str, ...]:
    from .backends import BACKENDS
    return BACKENDS


def _exporters() -> tuple[str, ...]:
    # interop.exporters.EXPORTER_CHOICES (tests/unit/test_exporters.py holds them equal): that module reads
    # this variable through read(), so importing it here would make a cycle
    return ("torchscript", "dynamo", "auto")


def _dformats() -> tuple[str, ...]:
    return ("torch", "default")  # interop.bridge.export_cpp.DFORMATS (that module imports torch)


def _declare(*variables: Variable) -> dict[str, Variable]:
    return {v.name: v for v in variables}


#: every ``INTEROP_*`` variable the package reads (a test holds that no other is read)
VARIABLES: dict[str, Variable] = _declare(
    Variable("INTEROP_BACKEND", _choice(_backends), "cpu", "the Aidge backend the suites run on", "--backend", replay=True),
    Variable("INTEROP_EXPORTER", _choice(_exporters), "auto", "torch's route to ONNX for every wrap()", "--exporter", replay=True),
    Variable("INTEROP_TORCH_DEVICE", _torch_device, "auto", "the torch device of the toolkit fixtures",
             "--torch-device", replay=True),
    Variable("INTEROP_AIDGE_CONFIGS", _existing, None, "Aidge benchmark configurations (a folder or one file)",
             "--aidge-configs", replay=True),
    Variable(SHARD_ENV, _k_of_n, None, "the K-th of N shards of every source (top-level session)", "--shard"),
    Variable("INTEROP_RECORDS_DIR", _directory, None, "where a session writes its records", "--records"),
    Variable("INTEROP_RESULTS_DIR", _directory, None, "where a session writes its records and timings"),
    Variable("INTEROP_RECORDS_SESSION", _session_id, None, "set by a session for the sessions it starts (nested)"),
    Variable("INTEROP_SHARD_DURATIONS", _path, None, "durations that balance the shards (a run folder or JSON)"),
    Variable("INTEROP_OPINFO_SHARD", _k_of_n, None, "the K-th of N shards of the OpInfo cases"),
    Variable("INTEROP_OPINFO_SAMPLES", _sample_cap, 1,
             "samples per OpInfo entry (a number or all; default: the source's DEFAULT_SAMPLES)", replay=True),
    Variable("INTEROP_OPINFO_DTYPES", _opinfo_dtypes, None, "the dtypes of every OpInfo entry (all or a comma list)", replay=True),
    Variable("INTEROP_MODULEINFO_SAMPLES", _sample_cap, 1,
             "samples per ModuleInfo entry and mode (a number or all; default: the source's DEFAULT_SAMPLES)", replay=True),
    Variable("INTEROP_SEED", _number(int, minimum=0, maximum=SEED_MAX), None, "the seed of every case (a replay)"),
    Variable("INTEROP_CASE_TIMEOUT", _number(positive=True), 120.0, "seconds a case child may run", replay=True),
    Variable("INTEROP_CASE_MEMORY", _memory, _half_the_memory, "memory a case child may add (8G, 512M, 0/off)", replay=True),
    Variable("INTEROP_ISOLATE", _flag, True, "run each case in a forked child", replay=True),
    Variable("INTEROP_FORWARD_ONLY_CASES", _flag, False, "include the forward-only operator cases", replay=True),
    Variable("INTEROP_AIDGE_CASE_TIMEOUT", _number(positive=True), 60.0, "seconds an Aidge configuration case may run", replay=True),
    Variable("INTEROP_AIDGE_NEGATIVE_TIMEOUT", _number(positive=True), 10.0,
             "seconds a negative Aidge configuration case may run", replay=True),
    Variable("INTEROP_AIDGE_FULL_SIZE", _flag, False, "run every Aidge configuration at its full size", replay=True),
    Variable("INTEROP_AIDGE_ELEMENT_BUDGET", _number(int, positive=True), 1 << 20,
             "elements an Aidge configuration case may hold before it is reduced", replay=True),
    Variable("INTEROP_AIDGE_RELEASE", _release, None, "the Aidge release the expected-failure table applies to", replay=True),
    Variable("INTEROP_CONFIG_DIR", _path, None, "the operator configuration folder (checked when a suite collects)", replay=True),
    Variable("INTEROP_EXPECTED_FAILURES", _path, None, "the expected-failure table (checked when a suite collects)", replay=True),
    Variable("INTEROP_TIMING_PASS", _flag, True, "the findings run's timing pass"),
    Variable("INTEROP_REPRODUCERS", _flag, False, "failing cases leave reproducer bundles"),
    Variable("INTEROP_REPRO_MAX_MB", _megabytes, 20_000_000, "the largest reproducer bundle, in MB"),
    Variable("INTEROP_EXPORT_DFORMAT", _choice(_dformats), None, "the C++ export's layout mode", replay=True),
    Variable("INTEROP_EXPORT_CACHE", _directory, None, "the C++ export's build cache"),
    Variable("INTEROP_OPENMP_POLICY", _choice(lambda: ("keep", "default")), "default",
             "keep: the library changes nothing about OpenMP (read at import interop)"),
    Variable("INTEROP_ONNX_GROUPS", _onnx_groups, None, "the ONNX backend-test groups collected (a comma list)", replay=True),
    Variable("INTEROP_BENCH_CASES", _case_ids, None, "the only cases the benchmarks parametrise"),
)


def given(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The text a declared variable is set to, exactly as given (None: unset): what a message quotes,
    and what a replay command carries. Every ``INTEROP_*`` read outside this module goes through
    here or :meth:`Variable.read` (a test holds it)."""
    return (os.environ if environ is None else environ).get(VARIABLES[name].name)


def replay_variables() -> tuple[str, ...]:
    """The declared variables that select or shape the cases (``replay``), in declaration order."""
    return tuple(name for name, v in VARIABLES.items() if v.replay)


def settings(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The case-shaping variables set in ``environ`` (default ``os.environ``), as given: what a
    run's ``session.json`` records (``settings``), so that a run says what selected its cases."""
    return {name: raw for name in replay_variables() if (raw := VARIABLES[name].raw(environ))}


def variables_table() -> str:
    """The Markdown table of every declared variable (name, default, pytest option, in a replay,
    meaning): the one docs/settings.md shows, made from :data:`VARIABLES` (a test holds them equal)."""
    def cell(text: Any) -> str:
        return str(text).replace("|", "\\|")

    lines = ["| variable | default | option | in a replay | meaning |", "|---|---|---|---|---|"]
    for name, v in VARIABLES.items():
        default = "(computed)" if callable(v.default) else ("" if v.default is None else v.default)
        lines.append(f"| `{name}` | {cell(default)} | {cell(v.option or '')} | {'yes' if v.replay else ''} | "
                     f"{cell(v.meaning)} |")
    return "\n".join(lines) + "\n"


def read(name: str, environ: Mapping[str, str] | None = None, *, default: Any = _UNSET) -> Any:
    """``$name`` through its declaration (:data:`VARIABLES`); a ``ValueError`` naming it when bad.
    ``default``: the reader's own default (unset or empty) in place of the declared one."""
    return VARIABLES[name].read(environ, default)


def option_default(name: str) -> Any:
    """The default of a pytest option taken from ``$name``: its value when good, else the raw text
    (never an exception while options are declared: :func:`check` refuses the session first)."""
    variable = VARIABLES[name]
    try:
        return variable.read()
    except ValueError:
        return variable.raw()


def _given(args, option: str) -> bool:
    return any(str(arg) == option or str(arg).startswith(option + "=") for arg in args)


def check(args=(), environ: Mapping[str, str] | None = None) -> list[str]:
    """One line per declared variable whose value is no value (each naming the variable and its value);
    ``args``: the pytest command line (an option given there decides, its variable is not checked).
    Two good values that cannot go together (``INTEROP_OPINFO_SHARD`` beside a shard of every source)
    are refused where they meet, at the OpInfo source's collection (:func:`interop.records.shard.opinfo_shard`)."""
    environ = os.environ if environ is None else environ
    problems = []
    for variable in VARIABLES.values():
        if variable.option and _given(args, variable.option):
            continue
        try:
            variable.read(environ)
        except ValueError as exc:
            problems.append(str(exc))
    return problems
