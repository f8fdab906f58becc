"""The analysis inputs as files: :func:`read_text`, and :class:`UnreadableInput`, what every
reader of this package raises for an input it cannot analyse."""
from __future__ import annotations

from pathlib import Path

__all__ = ["UnreadableInput", "read_text"]


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
