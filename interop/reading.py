"""One reading policy for every file the suite takes from a user: configuration files and
directories of them, golden files, benchmark logs, asv results.

- **regular files only**: a FIFO, a socket, a device or a directory where a file is expected is
  refused by name (a FIFO named ``pipe.json`` used to hang collection forever), checked with
  ``stat`` before opening, and the file is opened non-blocking;
- **symbolic links stay inside**: a link found in a directory (``within``) must resolve inside
  that directory; a link to anywhere else is refused, naming the link (it used to be read, and
  its key names quoted in errors);
- **a size limit** (:data:`MAX_FILE_BYTES`, or the caller's) checked before reading;
- **a nesting limit** for JSON (:data:`MAX_JSON_DEPTH` levels of arrays/objects), checked while
  parsing (Python's recursion limit, about 1,000 levels, raised a bare ``RecursionError``) and
  after it, iteratively; integers of more than 4,300 digits (Python's own limit) are refused
  by name too.

The folders the tools own (a run directory, ``results/``, the expected-failure table) follow a
stricter rule, :func:`confined`: every file read, written or deleted there lies inside the
folder, is a regular file and never a link, and no folder on the way is a link leading out;
JSONL files there are read one bounded line at a time (:func:`confined_json_lines`).

Everything here raises :class:`UnsafeInputError` (a ``ValueError``) naming the file; each reader
turns it into its own error (``ConfigError``, ``UnreadableInput``...). Standard library only.

What a typed model (a record, a page's entry) refuses in what was read is worded once,
:func:`validation_problem`: the key by its path, what it must be, what it is
(``key 'routes.torchscript.nodes': an integer, got str``); each reader puts the file and the
line or entry in front.
"""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, Callable

__all__ = ["MAX_FILE_BYTES", "MAX_LOG_BYTES", "MAX_JSON_DEPTH", "UnsafeInputError", "read_user_bytes",
           "read_user_json", "loads_json", "json_depth_error", "json_lines", "UnreadableInput", "read_text",
           "MAX_LINE_BYTES", "confined", "open_confined", "read_confined", "read_confined_json", "confined_json_lines",
           "validation_problem", "TYPE_WORDS"]

#: the largest configuration / golden metadata file read: 8 MiB (the largest of Aidge's 92
#: shipped files is 37,898 bytes, ours 5,700; a 50 MB file of 600,000 cases took over 5 minutes
#: and 756 MB to read)
MAX_FILE_BYTES = 8 << 20
#: the largest benchmark log or console output read by the analysis
MAX_LOG_BYTES = 256 << 20
#: the deepest JSON nesting read: 64 levels (Aidge's shipped files nest at most 11, scatter.json;
#: ours 8; a ``data`` literal is as deep as its tensor's rank)
MAX_JSON_DEPTH = 64

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


class UnsafeInputError(ValueError):
    """A file the reading policy refuses; the message names the file."""

    def __init__(self, path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")


def _check_link(path: Path, within: Path | None) -> None:
    if within is None or not path.is_symlink():
        return
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # a dangling or looping link
        raise UnsafeInputError(path, f"a symbolic link that cannot be resolved ({exc})") from None
    root = within.resolve()
    if target != root and root not in target.parents:
        raise UnsafeInputError(path, f"a symbolic link to a file outside {within}: refused (the reading policy "
                                     "follows links only inside the directory they were found in)")


def read_user_bytes(path: str | os.PathLike, *, within: str | os.PathLike | None = None,
                    max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path`` under the policy above; ``within``: the directory the file was
    found in (its symbolic links must stay inside). OSError for a missing or unreadable
    file, :class:`UnsafeInputError` for what the policy refuses."""
    path = Path(path)
    _check_link(path, Path(within) if within is not None else None)
    info = os.stat(path)
    for test, kind in _KINDS:
        if test(info.st_mode):
            raise UnsafeInputError(path, f"{kind}, not a regular file")
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeInputError(path, "not a regular file")
    if info.st_size > max_bytes:
        raise UnsafeInputError(path, f"{info.st_size:,} bytes, above the limit of {max_bytes:,} bytes for this "
                                     "kind of file")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew after the stat
        raise UnsafeInputError(path, f"more than {max_bytes:,} bytes, the limit for this kind of file")
    return data


def json_depth_error(doc: Any, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """Why ``doc`` is nested too deeply (naming the path to the deepest point), or None.
    Iterative: safe on any depth."""
    stack: list[tuple[Any, int, str]] = [(doc, 1, "")]
    while stack:
        node, depth, where = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > max_depth:
                return f"nested more than {max_depth} levels deep (at {where or 'the top'})"
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, value in items:
                if isinstance(value, (dict, list)):
                    stack.append((value, depth + 1, f"{where}.{key}" if isinstance(key, str) else f"{where}[{key}]"))
    return None


def loads_json(text: str | bytes, path: str | os.PathLike, *, max_depth: int = MAX_JSON_DEPTH,
               object_pairs_hook: Callable | None = None) -> Any:
    """``json.loads`` under the nesting limit: :class:`UnsafeInputError` naming ``path`` for a
    document nested deeper than ``max_depth`` levels or an integer Python refuses to parse;
    ``json.JSONDecodeError`` (and the hook's own errors) pass through."""
    try:
        doc = json.loads(text, object_pairs_hook=object_pairs_hook)
    except RecursionError:
        raise UnsafeInputError(path, f"nested too deeply for Python's JSON reader (about 1,000 levels; the limit "
                                     f"is {max_depth})") from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        if "digits" in str(exc):  # int('1' * 5000): "Exceeds the limit (4300 digits) ..."
            raise UnsafeInputError(path, f"a number Python refuses to read ({exc})") from None
        raise
    why = json_depth_error(doc, max_depth)
    if why:
        raise UnsafeInputError(path, why)
    return doc


def read_user_json(path: str | os.PathLike, *, within: str | os.PathLike | None = None,
                   object_pairs_hook: Callable | None = None) -> Any:
    """The JSON document of ``path`` under the whole policy: :func:`read_user_bytes`, UTF-8,
    :func:`loads_json`. Raises what those raise (OSError, :class:`UnsafeInputError`,
    UnicodeDecodeError, ``json.JSONDecodeError``, the hook's errors): each reader names them
    in its own error."""
    return loads_json(read_user_bytes(path, within=within).decode("utf-8"), path,
                      object_pairs_hook=object_pairs_hook)


def json_lines(text: str, source: str, problems: list[str]):
    """``(line number, object)`` for each non-blank line of a JSONL text that is valid JSON
    within the reading policy (:func:`loads_json`); each other line adds one
    ``source:line: why`` to ``problems``, never a traceback."""
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        value = _line_value(raw, f"{source}:{number}", problems)
        if value is not _BAD_LINE:
            yield number, value


#: what :func:`_line_value` returns for a line it could not read (a line may hold ``null``)
_BAD_LINE = object()


def _line_value(text: str, where: str, problems: list[str]) -> Any:
    """One JSON line read within the reading policy, or :data:`_BAD_LINE` with ``where: why``
    added to ``problems``."""
    try:
        return loads_json(text, where)
    except json.JSONDecodeError as exc:
        problems.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
    except UnsafeInputError as exc:  # nested too deeply, a 5,000-digit number
        problems.append(str(exc))
    return _BAD_LINE


# -- the analysis inputs (reports, analyze_results.py) ----------------------------------------
class UnreadableInput(ValueError):
    """The input cannot be analysed (missing, undecodable, or not pytest output / JSONL)."""


def read_text(path: str | Path) -> str:
    """A text file's content; :class:`UnreadableInput` naming the file when it cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UnreadableInput(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if b"\x00" in data[:4096]:
        raise UnreadableInput(f"{path}: binary file, not text")
    return data.decode("utf-8", errors="replace")


# -- what a typed model refuses, in words --------------------------------------------------------
#: a JSON value's type in words, by its Python type
TYPE_WORDS = {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list",
              dict: "an object", type(None): "null"}
#: what a value must be, by pydantic's error type (another type: pydantic's own message)
_MUST_BE = {"string_type": TYPE_WORDS[str], "int_type": TYPE_WORDS[int], "float_type": TYPE_WORDS[float],
            "bool_type": TYPE_WORDS[bool], "list_type": TYPE_WORDS[list], "dict_type": TYPE_WORDS[dict],
            "model_type": TYPE_WORDS[dict], "model_attributes_type": TYPE_WORDS[dict],
            "extra_forbidden": "no key of the page (a misspelt key?)", "missing": "required"}
#: a value's type in JSON's words (a type JSON does not have keeps its Python name: ``dtype``)
_JSON_NAMES = {"NoneType": "null", "dict": "object"}


def _data_path(loc: tuple, obj: Any, kind: str) -> tuple:
    """The part of a pydantic error's ``loc`` that is a path in ``obj`` (keys, indices): it stops
    at a union member's tag (``('duration_s', 'int')``: ``('duration_s',)``); a missing key is kept."""
    path, node = [], obj
    for i, part in enumerate(loc):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and -len(node) <= part < len(node):
            node = node[part]
        elif not (kind == "missing" and i == len(loc) - 1):
            break
        path.append(part)
    return tuple(path)


def validation_problem(exc: Any, obj: Any) -> str:
    """The first wrong key of a pydantic ``ValidationError`` ``exc`` raised on ``obj``, named by its
    path: ``key 'k.0': <what it must be>, got <what it is>`` (a missing key: ``key 'k': required``;
    a key the model forbids, as only the pages' models do: ``key 'k': no key of the page (a
    misspelt key?)``). A union says each of its kinds once (``int | float``: ``a number``).
    Duck-typed on ``exc.errors()``: no pydantic here."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    path = _data_path(tuple(first["loc"]), obj, first["type"])
    key = ".".join(str(part) for part in path) or "?"
    if first["type"] in ("extra_forbidden", "missing"):
        return f"key {key!r}: {_MUST_BE[first['type']]}"
    members = [e for e in errors if tuple(e["loc"][:len(path)]) == path] if len(first["loc"]) > len(path) else [first]
    words: list[str] = []
    for error in members:
        if error["type"] == "is_instance_of":
            cls = (error.get("ctx") or {}).get("class", "")
            word = {"dict": TYPE_WORDS[dict], "list": TYPE_WORDS[list]}.get(cls, error["msg"])
        else:
            word = _MUST_BE.get(error["type"], error["msg"])
        if word not in words:
            words.append(word)
    if "a number" in words and "an integer" in words:  # an integer or a number: a number
        words.remove("an integer")
    got = type(first["input"]).__name__
    return f"key {key!r}: {' or '.join(words)}, got {_JSON_NAMES.get(got, got)}"


# -- the files of a run directory, of results/ and of the expected-failure table ---------------
#: the longest JSONL line read (a record quotes at most a few KiB of an error; 16 MiB is far above
#: any the suite writes): a longer line is named and skipped, never held whole
MAX_LINE_BYTES = 16 << 20


def confined(path: str | os.PathLike, root: str | os.PathLike, *, kind: str = "file",
             missing_ok: bool = False) -> Path:
    """``path`` checked against the rule for every file the tools read, write or delete in a
    folder they own (a run directory, ``results/``, the expected-failure table): it lies inside
    ``root`` (``..`` included, taken lexically), no component below ``root`` is a symbolic link
    leading out of it, and the last component is not a symbolic link at all and is a regular
    file (``kind="file"``) or a directory (``kind="dir"``), never a FIFO, a socket or a device.
    ``root`` itself may be a link (``results/latest``): it is the caller's choice. Returns
    ``path``; raises :class:`UnsafeInputError` naming the path and why, ``FileNotFoundError``
    for a missing component (``missing_ok``: a missing last component, or a missing folder on
    the way, passes: the path is to be created). Checked before each use: the opens that follow
    add ``O_NOFOLLOW`` / ``O_NONBLOCK``."""
    root_abs = Path(os.path.abspath(root))
    root_real = Path(os.path.realpath(root_abs))
    path_abs = Path(os.path.abspath(path))
    for base in (root_abs, root_real):
        try:
            rel = path_abs.relative_to(base)
            break
        except ValueError:
            continue
    else:
        raise UnsafeInputError(path, f"outside {root}: refused (the tools read and write only inside the folder "
                                     "they were given)")
    class _Missing(Exception):
        pass

    def status(of: Path, follow: bool) -> os.stat_result:
        try:
            return os.stat(of) if follow else os.lstat(of)
        except FileNotFoundError:
            if missing_ok:
                raise _Missing from None
            raise

    cur = root_real
    parts = rel.parts
    try:
        info = status(cur, True)
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            cur = cur / part
            info = status(cur, False)
            if stat.S_ISLNK(info.st_mode):
                target = os.path.realpath(cur)
                if last:
                    raise UnsafeInputError(path, f"a symbolic link (to {target}), not a regular file: refused (the "
                                                 "tools read and write regular files only, never through a link)")
                real = Path(target)
                if real != root_real and root_real not in real.parents:
                    raise UnsafeInputError(path, f"{cur.relative_to(root_real)} is a symbolic link to {target}, "
                                                 f"outside {root}: refused (nothing outside is read, written or deleted)")
                cur = real
                info = status(cur, True)
            if not last and not stat.S_ISDIR(info.st_mode):
                raise UnsafeInputError(path, f"{cur.relative_to(root_real)} is not a directory")
    except _Missing:  # a missing component, allowed: the path is to be created
        return Path(path)
    want = stat.S_ISDIR if kind == "dir" else stat.S_ISREG
    if not want(info.st_mode):
        what = next((k for test, k in _KINDS if test(info.st_mode)), "not a regular file")
        if kind == "dir":
            what = "a regular file" if stat.S_ISREG(info.st_mode) else what
        raise UnsafeInputError(path, f"{what}, not {'a directory' if kind == 'dir' else 'a regular file'}")
    return Path(path)


def open_confined(path: str | os.PathLike, root: str | os.PathLike):
    """``path`` opened for reading (binary) under :func:`confined`: non-blocking (a FIFO put in
    place after the check never hangs the reader), never through a final symbolic link, and
    checked again on the open descriptor."""
    confined(path, root)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafeInputError(path, "not a regular file (it changed after it was checked)")
    return os.fdopen(fd, "rb")


def read_confined(path: str | os.PathLike, root: str | os.PathLike, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path`` under :func:`confined` and a size limit (checked before reading)."""
    with open_confined(path, root) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise UnsafeInputError(path, f"{size:,} bytes, above the limit of {max_bytes:,} bytes for this kind of file")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UnsafeInputError(path, f"more than {max_bytes:,} bytes, the limit for this kind of file")
    return data


def read_confined_json(path: str | os.PathLike, root: str | os.PathLike, *, max_bytes: int = MAX_FILE_BYTES) -> Any:
    """The JSON document of ``path`` under :func:`confined`, the size and the nesting limits.
    Raises OSError, :class:`UnsafeInputError`, UnicodeDecodeError or ``json.JSONDecodeError``."""
    return loads_json(read_confined(path, root, max_bytes=max_bytes).decode("utf-8"), path)


def confined_json_lines(path: str | os.PathLike, root: str | os.PathLike, problems: list[str], *,
                        max_line_bytes: int = MAX_LINE_BYTES):
    """``(line number, object)`` for each valid line of a JSONL file, read one line at a time
    (never the whole file) under :func:`confined`. A file the rule refuses or that cannot be
    opened adds one ``path: why`` to ``problems`` and yields nothing; a line that is not
    JSON, nested too deeply or longer than ``max_line_bytes`` adds ``path:line: why``."""
    try:
        handle = open_confined(path, root)
    except UnsafeInputError as exc:
        problems.append(f"{exc}: not read")
        return
    except OSError as exc:
        problems.append(f"{path}: unreadable ({exc.strerror or exc})")
        return
    with handle:
        number = 0
        while True:
            raw = handle.readline(max_line_bytes + 1)
            if not raw:
                return
            number += 1
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                problems.append(f"{path}:{number}: longer than {max_line_bytes:,} bytes: skipped")
                while raw and not raw.endswith(b"\n"):  # the rest of the line, a bounded piece at a time
                    raw = handle.readline(max_line_bytes)
                continue
            text = raw.decode("utf-8", errors="replace")
            if not text.strip():
                continue
            value = _line_value(text, f"{path}:{number}", problems)
            if value is not _BAD_LINE:
                yield number, value
