"""Record text (a case label, Aidge's message, an operator or node name) made safe for Markdown and
for a terminal: the one place the reports' writers escape it.

- :func:`controls`: each control or other non-printable character as its Python escape (``\\x1b``,
  ``\\x07``, ``\\n``, ``\\u2028``): ``cat defects.md`` never runs an ESC sequence (a terminal title,
  colours, a cursor move) nor rings the bell, and a line stays one line. A backslash is kept as it is.
- :func:`code`: inline text quoted in a code span whose backtick run is longer than any in the
  text (``<script>`` or ``<img onerror>`` in a code span is text, never HTML), ``|`` escaped for a
  table cell.
- :func:`fence`: a block quoted in a fenced code block longer than its longest backtick run (at
  least three), lines kept, other control characters escaped.
- :func:`text`: prose (a title, a heading, a table cell): Markdown's and HTML's active characters
  backslash-escaped, so that what shows is the text itself.
- :func:`terminal`: a line for the console (controls escaped).
"""
from __future__ import annotations

import re
from typing import Any

__all__ = ["controls", "code", "fence", "text", "terminal", "anchor"]

#: characters that Markdown (CommonMark, GitHub's tables and math) or inline HTML would act on in
#: prose; ``_`` only at a word's edge (inside a word, as in ``fn_upcat_2``, it is no emphasis)
_ACTIVE = re.compile(r"([\\`*\[\]<>|~&$]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_BACKTICKS = re.compile(r"`+")


def controls(value: Any, keep: str = "") -> str:
    """``value`` as text with each non-printable character (C0 and C1 controls, DEL, line and
    paragraph separators, format characters such as U+202E) as its escape; ``keep``: characters
    left as they are (``"\\n\\t"`` for a block)."""
    s = str(value)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() or c in keep else repr(c)[1:-1] for c in s)


def terminal(value: Any) -> str:
    """One line for a terminal: :func:`controls`."""
    return controls(value)


def _longest_run(s: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(s)), default=0)


def code(value: Any, *, table: bool = False) -> str:
    """``value`` as a Markdown code span (controls escaped, one line), delimited by a backtick run
    longer than any it holds; padded with a space where it begins or ends with a backtick or a
    space (CommonMark strips one of each). ``table``: ``|`` escaped (GitHub splits a table cell on
    it even in a code span)."""
    s = controls(value)
    ticks = "`" * (_longest_run(s) + 1)
    if not s:
        return "` `"
    if s[0] in "` " or s[-1] in "` ":
        s = f" {s} "
    if table:
        s = s.replace("|", "\\|")
    return f"{ticks}{s}{ticks}"


def fence(value: Any, lang: str = "") -> list[str]:
    """``value`` in a fenced code block: the lines of the block (opening fence, text, closing
    fence); the fence is longer than the longest backtick run of the text (a line of backticks in
    it never closes the block), control characters other than newline and tab escaped."""
    s = controls(str(value).replace("\r\n", "\n"), keep="\n\t").rstrip("\n")
    ticks = "`" * max(3, _longest_run(s) + 1)
    return [ticks + re.sub(r"[^A-Za-z0-9_+.-]", "", lang), s, ticks]


def text(value: Any) -> str:
    """``value`` as Markdown prose: controls escaped (one line), every character Markdown or HTML
    would act on backslash-escaped (``<script>`` shows as text, ``|`` stays in its table cell)."""
    return _ACTIVE.sub(r"\\\1", controls(value))


def anchor(value: Any) -> str:
    """A link target within the page (``#d-1234``): lower case letters, digits, ``-`` and ``_`` only."""
    return re.sub(r"[^a-z0-9_-]", "", str(value).lower())
