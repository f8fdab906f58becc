"""A reproducer bundle's generated ``repro.py``: its text and the settings it holds.

:func:`repro_script` writes the script (a fixed docstring, the settings as Python literals
(:func:`script_literal`), then the body ``body.py``, or for one Aidge node built from its
factory ``factory_body.py``); :func:`script_settings` reads the settings back as data. The
bundle layout is described in :mod:`interop.reproducers`' docstring.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import numpy as np

BODY_PATH = Path(__file__).with_name("body.py")

#: ``meta["expected_from"]`` of a bundle whose expected values came with its ONNX model (onnx's backend tests)
ONNX_TEST_EXPECTED = "onnx's backend test"

FACTORY_BODY_PATH = Path(__file__).with_name("factory_body.py")


#: repro.py's docstring line of what it needs (an ONNX graph, or one node built from its factory): fixed text
_HEADER_TEXT = (
    "Needs: numpy, onnx, aidge_core, aidge_backend_cpu, aidge_onnx (the Aidge release in meta.json).",
    "Needs: numpy, onnx (to read the .pb files), aidge_core, aidge_backend_cpu (the release in meta.json).")


def script_settings(text: str) -> dict[str, Any]:
    """A generated script's module-level settings (upper-case names bound to literals), read with
    ``ast.literal_eval``: data, never run."""
    out: dict[str, Any] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id.isupper():
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return out


def script_literal(value: Any) -> str:
    """``value`` as Python source that evaluates to it and does nothing else: str, bytes, int, bool,
    None, float (``float('nan')``/``float('inf')`` where ``repr`` gives a bare name), and lists,
    tuples and str-keyed dicts of those. The one way a generated script receives data (a case label,
    a node id, Aidge's message): never text pasted into code, a docstring or a comment. A str
    subclass's own ``__repr__`` is not trusted (``str.__repr__`` escapes quotes, backslashes and
    every non-printable character: NUL, CR, ESC, U+2028); anything else is a TypeError."""
    if isinstance(value, np.generic):  # a numpy scalar (a tolerance, a count): its Python value
        value = value.item()
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return int.__repr__(int(value))
    if isinstance(value, float):
        value = float(value)
        return float.__repr__(value) if value == value and abs(value) != float("inf") else f"float({str(value)!r})"
    if isinstance(value, str):
        return str.__repr__(value)
    if isinstance(value, bytes):
        return bytes.__repr__(bytes(value))
    if isinstance(value, (list, tuple)):
        items = [script_literal(v) for v in value]
        if isinstance(value, tuple):
            return "(" + "".join(f"{i}, " for i in items) + ")"
        return "[" + ", ".join(items) + "]"
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("a generated script's dict setting needs str keys")
        return "{" + ", ".join(f"{script_literal(k)}: {script_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"a generated script cannot hold a {type(value).__name__} setting")


#: whose the expected values in test_data_set_0/ are, as repro.py's docstring says it: fixed text, by key
_EXPECTED_TEXT = {"torch": "torch's outputs", ONNX_TEST_EXPECTED: "the outputs onnx's backend test ships"}


def repro_script(settings: dict[str, Any], *, factory: bool = False, expected: str = "torch") -> str:
    """A ``repro.py``: a fixed docstring, its settings as Python literals (:func:`script_literal`:
    the case's label, node id and message are data, never code nor docstring text: ``--help``
    prints them), then the body (``body.py``; for one Aidge node built from its factory,
    ``body.py``'s helpers and main around the run() of ``factory_body.py``)."""
    header = ["#!/usr/bin/env python3",
              '"""Reproducer of one failing case (written by aidge_torch_interop; runs without it).',
              "",
              "The case and what the suite saw are CASE and WHAT below; python repro.py --help prints them.",
              _HEADER_TEXT[1] if factory else _HEADER_TEXT[0],
              "Run: python repro.py   Exit status: 1 while the defect is present, 0 once Aidge computes the",
              f"expected values ({_EXPECTED_TEXT[expected]}, stored in test_data_set_0/), 2 if the bundle cannot be read",
              "(or the command line is wrong).",
              "python repro.py --save-actual DIR writes Aidge's own outputs (first call) and gradients to DIR.",
              '"""']
    for key, value in settings.items():
        if not (isinstance(key, str) and key.isidentifier() and key.isascii() and key.isupper()):
            raise ValueError(f"a generated script's setting needs an upper-case ASCII name, not {key!r}")
        header.append(f"{key} = {script_literal(value)}")
    lines = BODY_PATH.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() and not line.startswith("#"))
    lines = lines[start:]
    if factory:
        run_at = lines.index("def run():")
        main_at = next(i for i, line in enumerate(lines) if line.startswith("def main("))
        own = FACTORY_BODY_PATH.read_text(encoding="utf-8").splitlines()
        own = own[next(i for i, line in enumerate(own) if line.strip() and not line.startswith("#")):]
        lines = lines[:run_at] + own + ["", ""] + lines[main_at:]
    body = "\n".join(["# ---- numpy, onnx and Aidge only from here (no torch, no aidge_torch_interop) ----"] + lines)
    return "\n".join(header) + "\n\n" + body + "\n"
