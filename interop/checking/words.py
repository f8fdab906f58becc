"""A porter's words for :mod:`interop.check`: Aidge's words, shortened at a word boundary
(:data:`WORDS_LIMIT`), the suite's "model1 (...) and model2 (...)" said "torch and Aidge"
(:func:`porter_words`), a mismatch's torch and Aidge values (:func:`values_of`) and the words that
quote them (:func:`mismatch_words`)."""
from __future__ import annotations

import re
from typing import Any


#: characters of Aidge's words a blocker's line quotes (cut at a word boundary, with an ellipsis)
WORDS_LIMIT = 400


def _shorten(text: str, limit: int = WORDS_LIMIT) -> str:
    """``text`` within ``limit`` characters, cut at a word boundary (never inside a word) and
    ended with an ellipsis when shortened."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    space = cut.rfind(" ")
    if space > 0:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def _words(message: str) -> str:
    """Aidge's words: the message without the bridge's ``Aidge <phase> failed (...):`` prefix,
    in a porter's words (:func:`porter_words`: torch and Aidge, never the suite's model1 and
    model2), whitespace collapsed, shortened at a word boundary (:func:`_shorten`)."""
    text = " ".join(porter_words(str(message or "")).split())
    return _shorten(re.sub(r"^Aidge \w+ failed \([^)]*\):\s*", "", text))


#: the suite's wording of a comparison (ModelTester's and verify's messages, which other code
#: parses: they keep it) -> a porter's: torch is the reference (``expected``), Aidge the one checked
#: (``actual``)
_SUITE_WORDS = (
    (re.compile(r"^\[[^\]]*, call (\d+)\] (.+?) differs between model1 \([^()]*\) and model2 \([^()]*\)"
                r"(?: \[seed (\d+)\])?", re.M),
     lambda m: f"{m[2]} (call {m[1]}) differs between torch and Aidge" + (f" (seed {m[3]}):" if m[3] else ":")),
    (re.compile(r"between model1 \([^()]*\) and model2 \([^()]*\)"), "between torch and Aidge"),
    (re.compile(r"\bmodel1(?: \([^()]*\))?"), "torch"),
    (re.compile(r"\bmodel2(?: \([^()]*\))?"), "Aidge"),
    (re.compile(r"\bactual (\([^()]*\)|\S+?),? (vs |, )?expected (\([^()]*\)|[^\s,;]+)"), r"torch \3, Aidge \1"),
    (re.compile(r"\bAidgeModule\b"), "Aidge"),
)


def porter_words(text: str) -> str:
    """``text`` (a verdict's message) in a porter's words: "between torch and Aidge" for the
    suite's "between model1 (torch) and model2 (AidgeModule)", "torch E, Aidge A" for the
    comparator's "actual A, expected E" (and "actual (shape) vs expected (shape)")."""
    for pattern, said in _SUITE_WORDS:
        text = pattern.sub(said, text)
    return text


def _number(value: Any, digits: int = 6) -> str:
    return f"{value:.{digits}g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def values_of(mismatch: dict | None, call: int | None = None) -> dict[str, Any] | None:
    """A verdict's mismatch figures (:attr:`~interop.equivalence.verdict.Verdict.mismatch`, the
    comparator's ``worst_expected``/``worst_actual``) in a porter's names: ``at`` (what differs:
    ``output``, ``grad of weight``...), ``call``, ``index`` and the ``torch`` and ``Aidge`` values
    there (the worst element), ``mismatched`` of ``elements``, ``max_abs``, ``max_rel``, ``rtol``,
    ``atol``. None without figures (no mismatch, or shapes that differ: said in the words)."""
    if not mismatch or mismatch.get("n_mismatched") is None:
        return None
    return {"at": mismatch.get("path"), "call": call, "index": mismatch.get("worst_index"),
            "torch": mismatch.get("worst_expected"), "Aidge": mismatch.get("worst_actual"),
            "mismatched": mismatch.get("n_mismatched"), "elements": mismatch.get("n_total"),
            "max_abs": mismatch.get("max_abs"), "max_rel": mismatch.get("max_rel"),
            "rtol": mismatch.get("rtol"), "atol": mismatch.get("atol")}


#: the first line of verify's mismatch message: ``[verify, call 1] output differs between ...``
_MISMATCH_HEAD = re.compile(r"^\[[^\]]*, call (\d+)\] (.+?) differs between ")
#: the comparator's lines a mismatch's words rebuild from its figures (the rest is kept: the
#: attribution, a first diverging layer, non-finite counts, dtypes)
_COMPARATOR_LINE = re.compile(r"^(Tensors are not close|Mismatched elements|Worst mismatch|"
                              r"Greatest (absolute|relative) difference|Tolerance:)")


def _call_of(verdict) -> int | None:
    head = _MISMATCH_HEAD.match(str(verdict.message or ""))
    return int(head.group(1)) if head else None


def mismatch_words(verdict) -> str | None:
    """The words of a verdict whose values differ, quoting the place's own torch and Aidge values
    (:func:`values_of`: the worst element, how many differ, the tolerance), then what the message
    says past the comparator's figures (the attribution, a first diverging layer), in a porter's
    words and shortened at a word boundary. None when the verdict has no figures (the caller says
    its message in :func:`_words`)."""
    message = str(verdict.message or "")
    head = _MISMATCH_HEAD.match(message)
    values = values_of(verdict.mismatch, int(head.group(1)) if head else None)
    if values is None:
        return None
    what = head.group(2) if head else values["at"] or "a tensor"
    when = f" (call {values['call']})" if values["call"] is not None else ""
    index = values["index"]
    index = f"[{', '.join(map(str, index))}]" if isinstance(index, (list, tuple)) else f" {index}" if index else ""
    figures = (f"{what}{when} differs between torch and Aidge: at {values['at'] or what}{index}, torch "
               f"{_number(values['torch'])}, Aidge {_number(values['Aidge'])}; {values['mismatched']} of "
               f"{values['elements']} elements beyond rtol {_number(values['rtol'])} / atol {_number(values['atol'])}, "
               f"greatest absolute difference {_number(values['max_abs'], 3)}, relative "
               f"{_number(values['max_rel'], 3)}")
    lines = message.splitlines()[1:] if head else message.splitlines()
    more = sum(1 for line in lines if line.startswith(("Tensors are not close", "Shapes do not match"))) - 1
    if more > 0:
        figures += f" (and {more} more tensor(s) differ)"
    rest = [line.strip() for line in lines if line.strip() and not _COMPARATOR_LINE.match(line.strip())]
    rest = [line for line in rest if not line.startswith("Shapes do not match") or more > 0]
    return _shorten(" ".join(porter_words("; ".join([figures] + rest)).split()))
