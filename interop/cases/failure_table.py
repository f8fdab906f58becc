"""The expected-failure table as data: reading, validating, indexing and writing its files.

Every known failure of every source and backend is a *row* in a JSON file under
``interop/cases/expected/<release>/`` (the Aidge release the row was triaged on), one file per
source and reason (``operator.backward_not_implemented.json``, ``opinfo.crash.json``,
``export_cpp.compile_error.json``). A file is ``{"release": "0.10.1", "rows": [...]}``; a row is
one :class:`TableRow` (the schema, written once: its keys, their types and defaults, the order a
file writes them in), for example::

    {"source": "operator", "operator": "Abs", "phase": "backward", "category": "backward_not_implemented",
     "quote": "Backward not yet implemented for Abs_Op on backend cpu", "aidge": ">=0.10.1",
     "note": "what was measured", "cases": ["Abs:*"]}

A selector matches a case's label (:attr:`interop.cases.case.Case.label`) or its tail after
an ``_``; OpInfo selectors say ``s*_`` for the sample index, so that a torch upgrade that
renumbers the samples keeps them. Every row is checked on load: an unknown or missing key, a
wrong type or value is a :class:`TableError` naming the file, the row and the key.

:func:`load_table` reads every file; :func:`applicable` keeps the rows whose ``aidge`` range
holds a release (by default the installed ``aidge_core``); :class:`TableIndex` indexes rows by
(source, operator), so a lookup costs microseconds. :func:`write_table_file` writes a file in
the one layout (what ``python -m interop.triage update --apply`` uses).
"""
from __future__ import annotations

import dataclasses
import fnmatch
import functools
import json
import os
import re
from pathlib import Path
from typing import Any, Iterable
from importlib import metadata

from packaging.specifiers import SpecifierSet
from packaging.version import Version
from pydantic import BaseModel, ConfigDict, ValidationError

from ..categories import ATTRIBUTIONS, CATEGORIES
from ..exporters import EXPORTER_CHOICES, default_exporter
from .case import KINDS, PHASES
from ..env import read
from ..reading import UnsafeInputError, read_confined_json

__all__ = ["ExpectedFailure", "EXPORT_CATEGORY", "TABLE_DIR", "table_dir", "TableError", "TableIndex", "load_table", "applicable", "aidge_release",
           "entry_of", "write_table_file", "TableRow", "KEY_ORDER", "forget_loaded", "release_matches", "file_stem", "format_rows"]

#: where the data files live (shipped in the package)
TABLE_DIR = Path(__file__).with_name("expected")
#: the installed Aidge release is read from this distribution; INTEROP_AIDGE_RELEASE overrides it
RELEASE_DIST = "aidge_core"



class TableRow(BaseModel):
    """One row of a table file: the schema, written once (a pydantic model). The keys (an unknown
    one is refused), their JSON types (strict: no coercion, a bool is no string), the optional
    keys' defaults (a field without one is a required key), and the order a file writes them in
    (the fields' order). What a value must be beyond its type (a known phase, a PEP 440 range, a
    selector...) is checked by :func:`_check_row` and :class:`ExpectedFailure`."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    #: the kind of the cases (:data:`interop.cases.case.KINDS`): :attr:`ExpectedFailure.kind`
    source: str
    #: the Aidge operator responsible
    operator: str
    #: export / import / compile / forward / backward / step
    phase: str
    category: str
    #: Aidge's error text, or a list of them (any matches): :attr:`ExpectedFailure.error`
    quote: str | list[str]
    #: the suite's check that saw it when the quote is the suite's words (:func:`detected_by`)
    detected_by: str = None  # type: ignore[assignment]  (absent: None; a null in a file is refused)
    #: the ledger's defect id (``D-`` and 8 hex digits)
    defect: str = None  # type: ignore[assignment]
    #: aidge (null: aidge), export, precision...
    attribution: str | None = None
    #: the Aidge releases it applies to (PEP 440; a list: any)
    aidge: str | list[str]
    #: null: every backend
    backends: list[str] | None = None
    #: only cases of these dtypes
    dtypes: list[str] | None = None
    #: only sessions on these routes (``--exporter``)
    exporters: list[str] | None = None
    #: see :attr:`ExpectedFailure.memory_unsafe`
    memory_unsafe: bool = False
    #: with memory_unsafe
    other_categories: list[str] = ()  # type: ignore[assignment]
    #: a selector ends with a sample hash (last resort)
    sample_hash: bool = False
    #: the run that collects its cases when the default run does not (:data:`NAMED_RUNS`)
    run: str | None = None
    note: str = ""
    #: ``"<operator or entry>:<label glob>"``
    cases: list[str]


#: the keys a row must have (no default)
_REQUIRED_KEYS = tuple(key for key, field in TableRow.model_fields.items() if field.is_required())
#: the order keys are written in (readable diffs): the schema's
KEY_ORDER = tuple(TableRow.model_fields)
#: what an element of a list that is not a string is told, per key
_ELEMENT = {"quote": "quote Aidge's error text (a non-empty string, or a list of them)",
            "aidge": "not a PEP 440 specifier set", "cases": "'<Operator>:<label pattern>' strings (a label glob)"}
#: a label that ends with a sample hash (an OpInfo label too long to print whole)
#: the suite's own words for what Aidge says nothing about, and the check that says them: a row quoting
#: them names that check (key ``detected_by``) instead of passing them off as Aidge's message
_OUR_WORDS = (
    (re.compile(r"^(Tensors are not close|Shapes do not match|output differs|.*differs between model1"
                r"|Mismatched elements|output: shapes or structure differ|\w[\w \[\]\d]* differs$|actual \S+, expected )"),
     "comparator"),
    (re.compile(r"^(Aidge does not compute on empty tensors|Aidge has no native operator|\(ONNX op \w+\)$"
                r"|Aidge cannot compute the output dims|forward_dims\(\) returned False)"), "bridge guard"),
    (re.compile(r"^(crash: process|hang: |timed out)"), "process supervisor"),
    (re.compile(r"^Aidge accepts invalid input"), "negative case"),
)


def detected_by(category: str, quote: str) -> str | None:
    """The check of this suite whose words ``quote`` is (see :data:`_OUR_WORDS`), None when the quote
    is Aidge's own message. A hang has no message of Aidge's: the process supervisor saw it."""
    for pattern, check in _OUR_WORDS:
        if pattern.search(str(quote or "")):
            return check
    return "process supervisor" if category == "hang" else None


#: a defect id of the ledger (interop.registry.identify.defect_id)
DEFECT_ID = re.compile(r"D-[0-9a-f]{8}")
SAMPLE_HASH = re.compile(r"_[0-9a-f]{8}(?:_(?:float16|float64|int64|bool))?$")


@dataclasses.dataclass(frozen=True)
class ExpectedFailure:
    """One known defect and the cases it concerns."""

    #: the Aidge operator responsible (node type, e.g. ``BatchNorm2D``)
    operator: str
    phase: str
    category: str
    #: Aidge's error text, quoted; the failure message must contain it. Where Aidge fails on one
    #: of two nodes from run to run (measured), the two quotes joined by `` || `` (either matches)
    error: str
    #: ``"<Operator>:<label pattern>"`` (``"FC:no_bias"``, ``"Abs:*"``, ``"ResNet:train"``)
    cases: tuple[str, ...]
    #: the kind of the cases (:data:`interop.cases.case.KINDS`)
    kind: str = "operator"
    #: restrict to a backend ("cpu"/"cuda"/"export_cpp") or a tuple of them; None = every backend
    backend: str | tuple[str, ...] | None = None
    note: str = ""
    #: only sessions whose ``--exporter`` (``$INTEROP_EXPORTER``, default ``auto``) is one of these:
    #: a failure of one route to ONNX (TorchScript cannot export it; the dynamo route's graph
    #: holds a node Aidge lacks); None: every route
    exporters: tuple[str, ...] | None = None
    #: a ``crash`` entry whose defect reads or writes out of bounds, so that, depending on the
    #: heap, the process dies (crash), runs into the timeout (hang) or, for a negative case,
    #: finishes on garbage (accepts_invalid_input): any of the three, in any phase, matches (say
    #: why in the note)
    memory_unsafe: bool = False
    #: with ``memory_unsafe``: other categories the heap was measured to turn the defect into (a
    #: wrong shape, a failed allocation...), beyond crash / hang / accepts_invalid_input; each quoted
    other_categories: tuple[str, ...] = ()
    #: who is to blame (:data:`interop.categories.ATTRIBUTIONS`): ``export`` and
    #: ``precision`` entries are not Aidge bugs; None: Aidge (every entry before the OpInfo source)
    attribution: str | None = None
    #: the Aidge releases the entry applies to: a PEP 440 specifier set, or a tuple of them (any)
    aidge: str | tuple[str, ...] = ">=0"
    #: only cases of these dtypes (``case.params["dtype"]``, float32 when absent); None: any
    dtypes: tuple[str, ...] | None = None
    #: a selector ends with a sample hash (the last resort for a label too long to print)
    sample_hash: bool = False
    #: the run that collects its cases when the default run does not (``"opinfo shard 1/15"``)
    run: str | None = None
    #: the defect of the ledger (:mod:`interop.reporting.ledger`) its cases fail by: ``D-`` and 8 hex digits,
    #: kept by ``python -m interop.triage update`` from a run's records; None: not yet triaged into a defect
    defect: str | None = None
    #: the check of this suite that saw the defect when the quote is the suite's words, not Aidge's
    #: (:func:`detected_by`: comparator, bridge guard, process supervisor, negative case); None: Aidge's own words
    detected_by: str | None = None
    #: the data file it was read from (what an error tells you to correct)
    file: str = dataclasses.field(default="", compare=False)
    #: its row's index in that file
    index: int = dataclasses.field(default=-1, compare=False)

    def __post_init__(self):
        """The value checks, for an entry made in code and for a row of a data file alike (the
        messages name the row's keys)."""
        def wrong(message: str):
            raise ValueError(f"expected failure {self.operator} {self.cases}: {message}")

        if self.phase not in PHASES:
            wrong(f"key 'phase': unknown phase {self.phase!r} (one of {PHASES})")
        if self.category not in CATEGORIES and not (self.attribution == "export" and self.category == EXPORT_CATEGORY):
            wrong(f"key 'category': unknown category {self.category!r} (one of {sorted(CATEGORIES)})")
        if not self.error.strip():
            wrong("key 'quote': quote Aidge's error text")
        if self.other_categories and not self.memory_unsafe:
            wrong("key 'other_categories': only with memory_unsafe")
        if not set(self.other_categories) <= set(CATEGORIES):
            wrong(f"key 'other_categories': unknown category in {list(self.other_categories)}")
        if self.attribution not in (None, *ATTRIBUTIONS):
            wrong(f"key 'attribution': unknown attribution {self.attribution!r} (one of {sorted(ATTRIBUTIONS)})")
        if self.kind not in KINDS:
            wrong(f"key 'source': unknown source {self.kind!r} (one of {KINDS})")
        if self.exporters is not None and (not self.exporters or not set(self.exporters) <= set(EXPORTER_CHOICES)):
            wrong(f"key 'exporters': a list of {EXPORTER_CHOICES}, got {list(self.exporters)}")
        if isinstance(self.cases, str) or not self.cases or not all(
                isinstance(c, str) and c.count(":") == 1 and all(c.split(":")) for c in self.cases):
            wrong("key 'cases': '<Operator>:<label pattern>' strings (a label glob)")

    @property
    def quotes(self) -> tuple[str, ...]:
        """The quoted error text(s): a failure matches when it contains one of them."""
        return tuple(q.strip() for q in self.error.split(" || "))

    @property
    def reason(self) -> str:
        who = f" [attribution {self.attribution}]" if self.attribution else ""
        return f"[{self.category}] {self.operator} {self.phase}: {self.error}{who}"

    def covers(self, kind: str, operator: str, label: str, backend: str = "cpu", dtype: str | None = None) -> bool:
        """Whether this entry concerns the case ``operator``/``label`` of ``kind`` on ``backend``
        (of ``dtype``; None: any)."""
        if kind != self.kind or not (self.backend is None or backend == self.backend
                                     or (isinstance(self.backend, tuple) and backend in self.backend)):
            return False
        if self.dtypes and dtype is not None and dtype not in self.dtypes:
            return False
        if self.exporters is not None and default_exporter() not in self.exporters:
            return False
        return self.selector_for(operator, label) is not None

    def selector_for(self, operator: str, label: str) -> str | None:
        """The entry's selector that matches ``operator``/``label`` (the whole label or its tail
        after an ``_``), or None."""
        for pattern in self.patterns_by_operator.get(operator, ()):
            if fnmatch.fnmatchcase(label, pattern) or fnmatch.fnmatchcase(label, "*_" + pattern):
                return f"{operator}:{pattern}"
        return None

    @functools.cached_property
    def patterns_by_operator(self) -> dict[str, tuple[str, ...]]:
        """operator -> its label patterns (an OpInfo row names hundreds of cases: the lookup
        then only matches the patterns of the case's own operator)."""
        out: dict[str, list[str]] = {}
        for key in self.cases:
            op, pattern = key.split(":")
            out.setdefault(op, []).append(pattern)
        return {op: tuple(patterns) for op, patterns in out.items()}


#: the one category that is not Aidge's an entry may name: a torch -> ONNX export that fails
#: (an entry attributed to ``export``; the OpInfo source has such samples)
EXPORT_CATEGORY = "export_error (test strategy)"


class TableError(ValueError):
    """A data file of the table that does not hold what the schema says (file, row, key named)."""


def aidge_release() -> str | None:
    """The Aidge release the table applies to: ``$INTEROP_AIDGE_RELEASE``, else the installed
    ``aidge_core``'s version (no import of Aidge), else None."""
    try:
        forced = read("INTEROP_AIDGE_RELEASE")
    except ValueError as exc:  # it was every operator's <Op>_config_error, blamed on its configuration
        raise TableError(str(exc)) from None
    if forced:
        return forced

    try:
        return metadata.version(RELEASE_DIST)
    except metadata.PackageNotFoundError:
        return None


def _specifiers(spec: str | list[str]):
    return [SpecifierSet(s) for s in ([spec] if isinstance(spec, str) else spec)]


def release_matches(spec: str | list[str] | tuple[str, ...], release: str) -> bool:
    """Whether ``release`` is in the range ``spec`` (a PEP 440 specifier set, or a list of
    them, any of which may hold it). Pre- and post-releases count as themselves."""
    version = Version(release)
    return any(s.contains(version, prereleases=True) for s in _specifiers(spec))


#: the runs, other than the default one, that reach a row's cases (its ``run`` key), and the
#: command that starts each. Every row is reached by the default run or by one of these.
NAMED_RUNS = {
    "opinfo shard 1/15": "INTEROP_OPINFO_SHARD=1/15 nox -s opinfo (every sample and dtype of shard 1 of 15)",
    "opinfo 2 samples": "INTEROP_OPINFO_SAMPLES=2 python -m interop.reporting.run tests/test_opinfo.py "
                        "(the second sample of each entry; nox -s opinfo reaches them too)",
}
#: the run of the full OpInfo selection's shard (its rows are checked by running that shard)
SHARD_RUN = "opinfo shard 1/15"


def _fail(where: str, message: str):
    raise TableError(f"{where}: {message}")


def _row_model(row: Any, where: str) -> TableRow:
    """``row`` as a :class:`TableRow`, or a :class:`TableError` naming the key: an unknown key
    first, then a missing one, then a wrong type (of the value, or of a list's element)."""
    if not isinstance(row, dict):
        _fail(where, f"a row is a JSON object, got {type(row).__name__}")
    try:
        return TableRow.model_validate(row)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    for kind in ("extra_forbidden", "missing"):
        key = next((e["loc"][0] for e in errors if e["type"] == kind), None)
        if key is not None:
            _fail(where, f"unknown key {key!r} (keys: {', '.join(KEY_ORDER)})" if kind == "extra_forbidden"
                  else f"missing key {key!r}")
    key = next(k for k in row if any(e["loc"][0] == k for e in errors))
    if isinstance(row[key], list) and any(e["loc"][0] == key and isinstance(e["loc"][-1], int) for e in errors):
        _fail(where, f"key {key!r}: {_ELEMENT.get(key, 'a list of names')}")  # an element of a list
    _fail(where, f"key {key!r}: wrong type {type(row[key]).__name__}")


def _check_row(row: Any, where: str) -> TableRow:
    """The row's :class:`TableRow`, its values checked (a :class:`TableError` names the key)."""
    model = _row_model(row, where)
    # the values (phase, category, source, attribution, selectors...): ExpectedFailure's own checks, in entry_of
    quotes = [row["quote"]] if isinstance(row["quote"], str) else row["quote"]
    if not quotes or not all(isinstance(q, str) and q.strip() and " || " not in q for q in quotes):
        _fail(where, "key 'quote': quote Aidge's error text (a non-empty string, or a list of them)")
    try:
        _specifiers(row["aidge"])
    except Exception as exc:  # packaging's InvalidSpecifier
        _fail(where, f"key 'aidge': not a PEP 440 specifier set ({exc})")
    cases = [c for c in row["cases"] if isinstance(c, str)]  # other elements: ExpectedFailure says so
    if len(set(cases)) != len(cases):
        _fail(where, "key 'cases': a selector appears twice")
    for key in ("backends", "dtypes", "exporters", "other_categories"):
        if row.get(key) is not None and not all(row[key]):
            _fail(where, f"key {key!r}: a list of names")
    ours = detected_by(row["category"], quotes[0])
    if row.get("detected_by") != ours:
        _fail(where, f"key 'detected_by': the quote is the suite's words, seen by its {ours}: say so with "
                     f"\"detected_by\": \"{ours}\"" if ours else
              "key 'detected_by': the quote is Aidge's own words (no check of the suite's said it): remove the key")
    if row.get("run") is not None and row["run"] not in NAMED_RUNS:
        _fail(where, f"key 'run': {row['run']!r} is not a run the project names ({', '.join(map(repr, NAMED_RUNS))}): "
                     "a row the default run does not reach names the run that does")
    if row.get("defect") is not None and not DEFECT_ID.fullmatch(row["defect"]):
        _fail(where, f"key 'defect': a defect id of the ledger (D- and 8 hex digits), got {row['defect']!r}")
    hashed = [c for c in cases if SAMPLE_HASH.search(c)]
    if hashed and not row.get("sample_hash"):
        _fail(where, f"key 'cases': {hashed[0]!r} selects by a sample hash: say so with \"sample_hash\": true")
    return model


def entry_of(row: dict | TableRow, file: str = "", index: int = -1):
    """The :class:`ExpectedFailure` of a row (a :class:`TableRow`, or a dict read as one)."""
    row = row if isinstance(row, TableRow) else TableRow.model_validate(row)
    quotes = [row.quote] if isinstance(row.quote, str) else row.quote
    backends = row.backends
    backend = None if backends is None else backends[0] if len(backends) == 1 else tuple(backends)
    return ExpectedFailure(
        operator=row.operator, phase=row.phase, category=row.category, error=" || ".join(quotes),
        cases=tuple(row.cases), kind=row.source, backend=backend, note=row.note,
        memory_unsafe=row.memory_unsafe, other_categories=tuple(row.other_categories),
        attribution=row.attribution, aidge=row.aidge if isinstance(row.aidge, str) else tuple(row.aidge),
        dtypes=tuple(row.dtypes) if row.dtypes else None,
        exporters=tuple(row.exporters) if row.exporters is not None else None,
        sample_hash=row.sample_hash, run=row.run, defect=row.defect, detected_by=row.detected_by, file=file,
        index=index)


def read_table_file(path: Path) -> list:
    """The entries of one data file, every row checked (a :class:`TableError` names the file,
    the row and the key)."""
    path = Path(path)
    try:  # under the rule of the folders the tools own: a regular file of the table (a FIFO hung the session)
        data = read_confined_json(path, path.parent.parent)
    except UnsafeInputError as exc:
        raise TableError(f"{path}: {exc.reason}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TableError(f"{path}: not a readable JSON file ({exc})") from exc
    if not isinstance(data, dict) or set(data) != {"release", "rows"} or not isinstance(data["rows"], list):
        raise TableError(f"{path}: a table file is {{\"release\": ..., \"rows\": [...]}}, got keys "
                         f"{sorted(data) if isinstance(data, dict) else type(data).__name__}")
    if data["release"] != path.parent.name:
        raise TableError(f"{path}: key 'release' is {data['release']!r} but the file sits in {path.parent.name}/")
    out = []
    for index, row in enumerate(data["rows"]):
        where = f"{path} row {index} ({row.get('operator', '?') if isinstance(row, dict) else '?'})"
        model = _check_row(row, where)
        if not release_matches(model.aidge, data["release"]):
            _fail(where, f"key 'aidge': {model.aidge!r} does not hold {data['release']}, the release it was "
                         "triaged on (the folder)")
        try:
            out.append(entry_of(model, file=str(path), index=index))
        except ValueError as exc:
            _fail(where, str(exc))
    return out


@functools.lru_cache(maxsize=8)
def _load(directory: str) -> tuple:
    root = Path(directory)
    if not root.is_dir():
        raise TableError(f"{root}: no expected-failure table here (INTEROP_EXPECTED_FAILURES, or the package's "
                         "interop/cases/expected/)")
    entries = []
    for path in sorted(root.glob("*/*.json")):
        entries.extend(read_table_file(path))
    return tuple(entries)


def table_dir() -> Path:
    """The table the suites read: ``$INTEROP_EXPECTED_FAILURES`` (a folder laid out as
    :data:`TABLE_DIR`), else :data:`TABLE_DIR`."""
    return read("INTEROP_EXPECTED_FAILURES") or TABLE_DIR


def load_table(directory: str | Path | None = None) -> tuple:
    """Every entry of every data file under ``directory`` (default :func:`table_dir`), every
    release, in file order (cached per directory)."""
    return _load(str(Path(directory or table_dir()).resolve()))


def applicable(entries: Iterable, release: str | None = "installed") -> tuple:
    """The entries whose ``aidge`` range holds ``release`` (``"installed"``:
    :func:`aidge_release`; None: every entry)."""
    release = aidge_release() if release == "installed" else release
    if release is None:
        return tuple(entries)
    return tuple(e for e in entries if release_matches(e.aidge, release))


class TableIndex:
    """Entries indexed by (source, operator): the candidates of a case in one dict lookup."""

    def __init__(self, entries: Iterable):
        self.entries = tuple(entries)
        self._by_key: dict[tuple[str, str], list] = {}
        for entry in self.entries:
            for operator in entry.patterns_by_operator:
                self._by_key.setdefault((entry.kind, operator), []).append(entry)

    def candidates(self, kind: str, operator: str) -> list:
        return self._by_key.get((kind, operator), [])


def file_stem(entry) -> str:
    """The data file an entry belongs in, without the folder: ``<group>.<category>``, the group
    being the run that collects its cases, the export_cpp backend, or its source."""
    backend = entry.backend
    group = ("opinfo-shard-1-of-15" if entry.run == SHARD_RUN
             else re.sub(r"[^\w.-]+", "-", entry.run) if entry.run
             else "export_cpp" if backend == "export_cpp" else entry.kind)
    return f"{group}.{entry.category.split(' ')[0]}"


def format_rows(release: str, rows: list[dict]) -> str:
    """A table file's text: one key a line, lists on one line except the cases (one a line)."""
    lines = ["{", f' "release": {json.dumps(release)},', ' "rows": [']
    for i, row in enumerate(rows):
        lines.append("  {")
        keys = [k for k in KEY_ORDER if k in row]
        for j, key in enumerate(keys):
            end = "," if j < len(keys) - 1 else ""
            if key == "cases":
                lines.append('   "cases": [')
                lines.extend(f"    {json.dumps(c, ensure_ascii=False)}{',' if k < len(row['cases']) - 1 else ''}"
                             for k, c in enumerate(row["cases"]))
                lines.append(f"   ]{end}")
            else:
                lines.append(f"   {json.dumps(key)}: {json.dumps(row[key], ensure_ascii=False)}{end}")
        lines.append("  }" + ("," if i < len(rows) - 1 else ""))
    lines += [" ]", "}"]
    return "\n".join(lines) + "\n"


def write_table_file(path: Path, release: str, rows: list[dict]) -> None:
    """Write (atomically) one data file; an empty list of rows removes it."""
    path = Path(path)
    if not rows:
        if path.exists():
            path.unlink()
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(format_rows(release, rows), encoding="utf-8")
    os.replace(tmp, path)
    forget_loaded()


def forget_loaded() -> None:
    """Drop what :func:`load_table` cached (after the files were written)."""
    _load.cache_clear()

