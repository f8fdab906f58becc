"""A porter's check: every blocker of a model at once (issue 49).

``check(model, *inputs)`` (or ``python -m interop check module:factory --input-shape 1,3,32,32``)
answers "what stops this model in Aidge?" with every blocker it can find in one call, where
:func:`interop.verify` stops at the first. Three passes, each a :func:`~interop.verify` verdict
(forked child, attribution, crash as a verdict):

1. **the whole model**: export, import, compile, forward on two calls, input gradients. An
   import that leaves nodes without an Aidge operator gives one blocker per such node;
2. **each leaf module alone** (a module without children: ``Conv2d``, ``PReLU``, ``Upsample``...),
   on the very inputs it receives in the model's forward (captured with forward hooks on a
   torch run; captured before the call, and a leaf that writes its input in place is compared on
   clones of it), so a blocker behind the first one still shows: the Upsample's missing backward
   behind a PReLU that does not import. A leaf whose forward differs gets a second verdict, whether
   Aidge's backward runs on it (:func:`backward_verdict`): a train-mode BatchNorm's mismatch does
   not hide its missing backward. Leaves with the same type, attributes and input shapes are
   checked once;
3. **the whole model again, each blocked leaf replaced by torch's value** (its output on the
   captured inputs, fed as an input of the graph: data, not a constant, so gradients flow into
   it; the model's own inputs become constants; a leaf called more than once is kept), when the
   first pass failed and the second found blocked leaves: what the rest of the model,
   functional calls included, does past them.

Each :class:`Blocker` names its phase, Aidge's operator (the ONNX op for an import gap), the
node, Aidge's own words, where it showed (``model``, a leaf's path) and, for a finding
attributed to Aidge, the defect's id and title as the ledger gives them
(:func:`interop.registry.identify.identify`: the registry's entry, else the proposed one) for the
record a findings run writes for that failure (:func:`ledger_record`: the check run again under
the reproducer capture, the failure's fields and the reproducer's, the first diverging node
included); a ledger file given, its title for that id. A difference verify attributes to float32 rounding (``precision``) is a note, not a blocker.

Words are a porter's: torch and Aidge, never the suite's "model1 (...) and model2 (...)" (the
messages of verify and ModelTester keep it, other code parses them: :func:`porter_words` says them
again here). Values that differ are quoted where they differ: each place a blocker shows (the
whole model, a leaf alone) says its own torch and Aidge values (``Blocker.words_at``,
``Blocker.values_at``; :func:`mismatch_words`, :func:`values_of`), a leaf's are in its entry of
``modules`` (``values``); a leaf checked once for an identical one elsewhere says so ("as ...")
rather than quote values that are not its own. Words are cut at a word boundary, never inside a
word (:data:`WORDS_LIMIT` each place), and the operator is named (the verdict's, else the leaf
type's, else "operator unknown"), never ``?``.

What it does not see: a blocker inside a functional call (``torch.cat``, ``F.interpolate`` in a
``forward``) hidden behind an earlier failure of the whole model that pass 3 cannot remove;
the gradients of a leaf whose forward differs (its backward is run, not compared).

The model's own code runs in forked children under the timeout as well: the torch forward that
captures the leaves' inputs (a forward that raises, dies or does not finish is a
:class:`ModelError`, the model's error, no blocker), and for the CLI the factory
(:func:`load_model`) and one torch forward before any verdict (:func:`probe_forward`). Shapes are
positive integers within :func:`input_bytes_limit` (:func:`check_input_size`), a timeout finite
and > 0 (:func:`check_timeout`). Nothing is
printed; nothing is written but the reproducer bundles of the ids' records, in a temporary folder
removed afterwards: the CLI (:mod:`interop.__main__`) prints the report.
"""
from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path
from typing import Any, Sequence

__all__ = ["Blocker", "CheckReport", "check", "load_factory", "parse_shape", "parse_dtype", "import_gaps",
           "make_inputs", "backward_verdict", "ModelError", "load_model", "probe_forward", "check_input_size",
           "check_timeout", "input_bytes_limit", "porter_words", "mismatch_words", "values_of"]

#: ``'node' (ONNX op X)`` in the bridge's import error: one per node without an Aidge operator
_GAP = re.compile(r"'([^']+)' \(ONNX op (\w+)\)")
PHASES = ("export", "import", "compile", "forward", "backward")


@dataclasses.dataclass
class Blocker:
    """One thing that stops the model in Aidge."""

    phase: str | None
    operator: str | None
    node: str | None
    category: str | None
    attribution: str | None
    words: str
    where: list[str]
    defect_id: str | None = None
    known: str | None = None
    #: the verdict's whole message (what the defect id is computed from)
    message: str = dataclasses.field(default="", repr=False)
    #: where ``operator`` comes from: ``"verdict"`` (Aidge's or the bridge's words), ``"leaf type"``
    #: (the leaf module's type mapped to the Aidge or ONNX op it becomes, :data:`AIDGE_OP_OF_LEAF`)
    #: or None (no operator known)
    operator_from: str | None = None
    #: how ``defect_id`` was computed, or why there is none (``"the run's record"``: the record a
    #: findings run writes for this failure, built the run's way, :func:`ledger_record`)
    defect_id_how: str | None = None
    #: each place's own words (``where`` -> words; a place not in it says ``words``): one defect
    #: shows in the whole model and in a leaf alone with different values, and each place's line
    #: quotes its own (:func:`_merge` fills it)
    words_at: dict[str, str] = dataclasses.field(default_factory=dict)
    #: each place's torch and Aidge values where they differ (``where`` -> :func:`values_of`)
    values_at: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    def said(self) -> list[tuple[list[str], str]]:
        """``[(places, words), ...]``: the places grouped by their own words, in ``where``'s order."""
        groups: dict[str, list[str]] = {}
        for w in self.where:
            groups.setdefault(self.words_at.get(w, self.words), []).append(w)
        return [(places, words) for words, places in groups.items()] or [([], self.words)]

    def line(self) -> str:
        what = f"{self.phase or 'phase unknown'}: {self.operator or 'operator unknown'}"
        if self.operator and self.operator_from in ("leaf type", "the run's record"):
            what += f" (from {'the leaf' if self.operator_from == 'leaf type' else 'the run'}'s " \
                    f"{'type' if self.operator_from == 'leaf type' else 'record'})"
        node = f" (node {self.node})" if self.node else ""
        defect = f" [{self.defect_id}" + (f": {self.known}" if self.known else "") + "]" if self.defect_id else ""
        by = self.attribution if self.attribution and self.attribution != "aidge" else None
        said = ", ".join(x for x in (self.category, by) if x)
        places = "; ".join(f"in {', '.join(where)}: {words}" for where, words in self.said())
        return f"{what}{node}{defect}{' ' + said if said else ''}; {places}"

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out.pop("message")
        return out


@dataclasses.dataclass
class CheckReport:
    """What :func:`check` found: ``blockers`` (empty: the model runs in Aidge, forward and input
    gradients, as far as these checks see), the whole model's verdict, each leaf's verdict
    (``modules``: path, type, input shapes, outcome, summary, and ``backward``: the second
    verdict of a leaf whose forward differs) and the replaced model's verdict. ``notes``: the
    differences verify attributes to float32 rounding (``precision``): said, never blockers."""

    model: str
    input_shapes: list[tuple[int, ...]]
    verdict: Any
    modules: list[dict[str, Any]]
    replaced: dict[str, Any] | None
    blockers: list[Blocker]
    notes: list[Blocker] = dataclasses.field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.blockers

    def lines(self) -> list[str]:
        shapes = ", ".join("x".join(map(str, s)) for s in self.input_shapes)
        head = (f"{self.model} on {shapes}: " + ("no blocker found (forward and input gradients match)" if self.passed
                else f"{len(self.blockers)} blocker(s)"))
        out = [head]
        for phase in PHASES + (None,):
            group = [b for b in self.blockers if (b.phase if b.phase in PHASES else None) == phase]
            for b in group:
                out.append("  " + b.line())
        for b in self.notes:
            out.append("  note, not a blocker (float32 rounding): " + b.line())
        checked = [m for m in self.modules if m["outcome"] is not None]
        out.append(f"checked: the whole model ({self.verdict.outcome}), {len(checked)} distinct leaf module(s) alone"
                   + (f", the model with {', '.join(self.replaced['replaced'])} replaced by torch's values "
                      f"({self.replaced['outcome']})" if self.replaced else ""))
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "input_shapes": [list(s) for s in self.input_shapes], "passed": self.passed,
                "blockers": [b.as_dict() for b in self.blockers], "notes": [b.as_dict() for b in self.notes],
                "modules": self.modules, "replaced": self.replaced,
                "verdict": {"outcome": self.verdict.outcome, "category": self.verdict.category,
                            "phase": self.verdict.phase, "operator": self.verdict.operator,
                            "summary": porter_words(self.verdict.summary),
                            "values": values_of(self.verdict.mismatch, _call_of(self.verdict))}}


# --------------------------------------------------------------------------------------
class ModelError(Exception):
    """The model's own failure, not Aidge's: its factory (or its module's import) raised, crashed or
    did not return within the timeout, or its torch forward did. One line, the factory or the shapes
    named (:func:`load_model`, :func:`probe_forward`); the CLI prints it and exits 2, no blocker."""


def _first_line(exc: BaseException) -> str:
    """``Type: the message's first line`` (a rebuilt child's exception carries its traceback as a note)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def parse_shape(text: str) -> tuple[int, ...]:
    """``"1,3,32,32"`` (or ``1x3x32x32``) -> ``(1, 3, 32, 32)``: positive integers (ASCII digits),
    else a ValueError naming the text. Their size is :func:`check_input_size`'s to judge."""
    parts = [p for p in re.split(r"[,x ]+", text.strip()) if p]
    if not parts or not all(re.fullmatch(r"[0-9]+", p) for p in parts):
        raise ValueError(f"an input shape is integers separated by commas (1,3,32,32), not {text!r}")
    shape = tuple(int(p) for p in parts)
    if not all(shape):
        raise ValueError(f"an input shape's dimensions are positive integers, not {text!r}")
    return shape


#: the inputs of a check take at most 1/INPUT_MEMORY_SHARE of a check child's memory bound: a check
#: holds them many times over (the caller's tensors, each verify child's copies and their float64
#: reference and gradients, each leaf's captured inputs and outputs), and the model's activations
#: are larger still. A conservative estimate that refuses a shape no check could run (measured
#: before: ``--input-shape 100000,100000,1000`` asked torch for 40 TB, a shape past 2**63 overflowed
#: inside ``torch.randn``), never a porter's real input (1,3,224,224 is 1.2 MB at 8 bytes an element)
INPUT_MEMORY_SHARE = 64
#: bytes an input element is counted at: verify's reference computes in float64
INPUT_ELEMENT_BYTES = 8


def input_bytes_limit() -> int:
    """The most bytes the inputs of a check may take: 1/:data:`INPUT_MEMORY_SHARE` of a check
    child's memory bound (:func:`interop.equivalence.isolation.memory_bound`,
    ``INTEROP_CASE_MEMORY``; half the physical memory by default or when the bound is off)."""
    import os

    from .equivalence.isolation import memory_bound

    bound = memory_bound()
    if bound is None:
        try:
            bound = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
        except (ValueError, OSError, AttributeError):
            bound = 16 << 30
    return bound // INPUT_MEMORY_SHARE


def check_input_size(shapes: Sequence[Sequence[int]], dtypes: Sequence[Any] | None = None) -> None:
    """A ValueError naming the shape when an input's element count (or all of them together) is
    past :func:`input_bytes_limit` at :data:`INPUT_ELEMENT_BYTES` an element (more where the dtype
    is wider): one line, before torch is asked for the memory."""
    import math

    limit = input_bytes_limit()
    dtypes = list(dtypes or [])
    total = 0
    for i, shape in enumerate(shapes):
        if any(int(d) <= 0 for d in shape):
            raise ValueError(f"an input shape's dimensions are positive integers, not {','.join(map(str, shape))}")
        dtype = (dtypes[0] if len(dtypes) == 1 else dtypes[i] if i < len(dtypes) else None) if dtypes else None
        size = max(INPUT_ELEMENT_BYTES, getattr(dtype, "itemsize", 0) or 0)
        count = math.prod(int(d) for d in shape)
        total += count * size
        if count * size > limit or total > limit:
            what = "" if count * size > limit else f", the inputs together {total:,} bytes"
            raise ValueError(
                f"input shape {','.join(map(str, shape))} is too large: {count:,} elements, {count * size:,} bytes "
                f"at {size} an element{what}, above the {limit:,} bytes a check's inputs may take "
                f"(1/{INPUT_MEMORY_SHARE} of a check child's memory bound, INTEROP_CASE_MEMORY)")


def check_timeout(timeout: Any) -> float | None:
    """``timeout`` as seconds (None: none), else a ValueError: a number, finite and > 0 (before:
    -5 or nan made every child 'time out' at once, a false Aidge hang with a defect id)."""
    import math

    if timeout is None:
        return None
    try:
        value = float(timeout)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"a timeout is a finite number of seconds > 0, not {timeout!r}")
    return value


def _resolve_factory(spec: str):
    """``"package.module:factory"`` -> the object it names (the module imported)."""
    import importlib

    if ":" not in spec:
        raise ValueError(f"the model is module:factory (a callable returning an nn.Module), not {spec!r}")
    module_name, _, attr = spec.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    return target


def _module_of(spec: str, target) -> Any:
    import torch

    model = target() if callable(target) and not isinstance(target, torch.nn.Module) else target
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"{spec} gave a {type(model).__name__}, not a torch.nn.Module")
    return model


def load_factory(spec: str):
    """``"package.module:factory"`` -> ``factory()``, the model (an ``nn.Module``)."""
    return _module_of(spec, _resolve_factory(spec))


def _model_in_child(spec: str):
    """:func:`load_factory`, what the factory (or its module's import) raises beyond a missing
    module or attribute made a :class:`ModelError` naming it."""
    try:
        target = _resolve_factory(spec)
    except (ValueError, ImportError, AttributeError):
        raise
    except Exception as exc:  # noqa: BLE001 - the module's own code raised at import
        raise ModelError(f"importing the model's module for {spec} raised {_first_line(exc)}") from None
    import torch

    if callable(target) and not isinstance(target, torch.nn.Module):
        try:
            target = target()
        except Exception as exc:  # noqa: BLE001 - the factory's own error, whatever its type
            raise ModelError(f"the model's factory {spec} raised {_first_line(exc)}") from None
    return _module_of(spec, target)


def _not_picklable(exc: BaseException) -> bool:
    return isinstance(exc, TypeError) and str(exc).startswith("run_isolated: the result of")


def _died(exc: BaseException, what: str, timeout: float | None) -> ModelError | None:
    """A :class:`ModelError` for ``what`` when ``exc`` is a child that hung or died, else None."""
    from .errors import AidgeCrash

    if not isinstance(exc, AidgeCrash):
        return None
    if exc.timed_out:
        return ModelError(f"{what} did not finish within {timeout:g} s (--timeout)")
    return ModelError(f"{what} died: {str(exc.aidge_message).splitlines()[0]}")


def load_model(spec: str, timeout: float | None = 120.0):
    """``spec``'s model (:func:`load_factory`) built in a forked child under ``timeout``
    (:func:`~interop.equivalence.isolation.run_isolated`) and sent back: a factory that raises, dies
    or does not return in time is a :class:`ModelError` naming it (a missing module or attribute,
    a malformed spec, a factory that gives no module: ImportError, AttributeError, ValueError,
    TypeError). A model that cannot be pickled is built again here (it returned in time there)."""
    import torch  # noqa: F401 - imported once, here: the child inherits it and the timeout is the factory's

    from .equivalence.isolation import run_isolated

    try:
        return run_isolated(_model_in_child, spec, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - sorted below
        if _not_picklable(exc):
            return _model_in_child(spec)
        died = _died(exc, f"the model's factory {spec}", timeout)
        if died is not None:
            raise died from None
        raise


def _shapes_text(inputs) -> str:
    return ", ".join("x".join(map(str, getattr(x, "shape", x))) for x in inputs)


def _torch_forward(model, inputs) -> None:
    """In the child: one torch forward of ``model`` on ``inputs`` (its result dropped)."""
    import torch

    with torch.no_grad():
        model(*inputs)


def probe_forward(model, inputs, timeout: float | None = 120.0) -> None:
    """One torch forward of ``model`` on ``inputs`` in a forked child under ``timeout``: a forward
    that raises, dies or does not finish is a :class:`ModelError` naming the shapes (the model's own
    error, before any Aidge verdict could call it a blocker)."""
    from .equivalence.isolation import run_isolated

    what = f"the model's torch forward on {_shapes_text(inputs)}"
    try:
        run_isolated(_torch_forward, model, inputs, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - every failure of torch's own forward is the model's
        raise (_died(exc, what, timeout) or ModelError(f"{what} raised {_first_line(exc)}")) from None


def import_gaps(message: str) -> list[tuple[str, str]]:
    """``[(node, onnx_op), ...]`` of an import error that lists the nodes without an Aidge operator."""
    return _GAP.findall(message or "")


#: characters of Aidge's words a blocker's line quotes (cut at a word boundary, with an ellipsis)
WORDS_LIMIT = 400

#: a leaf module's type -> the Aidge operator (else the ONNX op) its export becomes: what a line
#: names when the verdict names no operator (a value mismatch names none)
AIDGE_OP_OF_LEAF = {
    "Conv1d": "Conv1D", "Conv2d": "Conv2D", "Conv3d": "Conv3D",
    "ConvTranspose1d": "ConvTranspose1D", "ConvTranspose2d": "ConvTranspose2D", "ConvTranspose3d": "ConvTranspose3D",
    "BatchNorm1d": "BatchNorm2D", "BatchNorm2d": "BatchNorm2D", "InstanceNorm1d": "InstanceNorm",
    "InstanceNorm2d": "InstanceNorm", "LayerNorm": "LayerNorm", "GroupNorm": "InstanceNorm, Mul, Add",
    "Linear": "FC", "Embedding": "Gather", "Identity": "Identity", "Dropout": "Identity",
    "ReLU": "ReLU", "ReLU6": "Clip", "Hardtanh": "Clip", "LeakyReLU": "LeakyReLU", "PReLU": "PRelu (ONNX op)",
    "ELU": "Elu (ONNX op)", "GELU": "Erf, Mul, Add, Div", "Sigmoid": "Sigmoid", "Tanh": "Tanh",
    "SiLU": "Sigmoid, Mul", "Mish": "Softplus, Tanh, Mul", "Hardswish": "HardSwish", "Hardsigmoid": "HardSigmoid",
    "Softplus": "Softplus", "Softmax": "Softmax", "LogSoftmax": "LogSoftmax",
    "MaxPool1d": "MaxPooling1D", "MaxPool2d": "MaxPooling2D", "MaxPool3d": "MaxPooling3D",
    "AvgPool1d": "AvgPooling1D", "AvgPool2d": "AvgPooling2D", "AvgPool3d": "AvgPooling3D",
    "AdaptiveAvgPool2d": "GlobalAveragePooling", "Flatten": "Flatten", "Upsample": "Resize",
    "PixelShuffle": "DepthToSpace", "ZeroPad2d": "Pad",
}


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


def _operator_of(verdict, leaf_type: str | None) -> tuple[str | None, str | None]:
    """``(operator, where it comes from)``: the verdict's, else the leaf type's Aidge op."""
    if verdict.operator:
        return verdict.operator, "verdict"
    if leaf_type and leaf_type in AIDGE_OP_OF_LEAF:
        return AIDGE_OP_OF_LEAF[leaf_type], "leaf type"
    return None, None


def _blockers_of(verdict, where: str, leaf_type: str | None = None) -> list[Blocker]:
    """The blockers (and precision notes: ``attribution == "precision"``) a verdict gives: its
    failure, and each difference it lists as float32 rounding only (``Verdict.precision``: a note)."""
    operator, source = _operator_of(verdict, leaf_type)
    notes = [Blocker("backward" if "grad" in line else "forward", operator, None, None, "precision", _words(line),
                     [where], message=line, operator_from=source) for line in getattr(verdict, "precision", ()) or ()]
    if verdict.outcome == "pass":
        return notes
    gaps = import_gaps(verdict.message) if verdict.category == "unsupported_operator" else []
    if gaps:
        return notes + [Blocker("import", op, node, verdict.category, verdict.attribution,
                        f"no Aidge operator for ONNX op {op}: imported as GenericOperator, cannot run", [where],
                        message=f"Aidge has no native operator for 1 node(s): '{node}' (ONNX op {op})",
                        operator_from="verdict")
                for node, op in gaps]
    words = mismatch_words(verdict) or _words(verdict.message or verdict.summary)
    if verdict.outcome == "crash":
        words = f"crash ({verdict.signal or verdict.category}): {words}"
    values = values_of(verdict.mismatch, _call_of(verdict))
    return notes + [Blocker(verdict.phase, operator, verdict.node, verdict.category, verdict.attribution, words,
                            [where], message=verdict.message or verdict.summary, operator_from=source,
                            words_at={where: words}, values_at={where: values} if values else {})]


#: the test id a check's record goes by (the ledger counts no record of ``tests/unit/``)
NODEID = "interop-check::{where}"


def ledger_record(fn, args, directory: str | Path, nodeid: str, *, backward: bool = True,
                  backward_only: bool = False) -> dict[str, Any] | None:
    """The record a findings run writes for the failure of ``fn(*args)``, built the way the run
    builds it (in this process: run it in a child): Aidge's run under the reproducer capture
    (:mod:`interop.bridge.capture`, :func:`interop.diagnostics.reproducer.write_bundle` into
    ``directory``), the failure's fields (:func:`interop.records.classify.finding_of`) and the
    reproducer's (:func:`interop.diagnostics.reproducer.record_fields`: the first diverging node,
    the one-node graph's op, an export the checker refuses). None when it does not fail. The
    check is :func:`~interop.equivalence.verdict.check_callable` (verify's), or with
    ``backward_only`` :func:`_backward_runs` (the second verdict of a leaf)."""
    from .bridge import capture
    from .diagnostics.repro_bundle import write_bundle
    from .diagnostics.repro_fields import record_fields
    from .diagnostics.repro_layout import bundle_folder
    from .equivalence.verdict import check_callable
    from .records.classify import finding_of

    directory = Path(directory)
    capture.start(bundle_folder(directory, nodeid), nodeid, write_bundle, directory / "aidge.log")
    try:
        if backward_only:
            _backward_runs(fn, args)
        else:
            check_callable(fn, args, {}, backward=backward)
    except Exception as exc:  # noqa: BLE001 - the failure is what this builds the record of
        capture.failed(exc)
        record = {"nodeid": nodeid, "outcome": "failed", "backend": "cpu", **finding_of(exc)}
        record.update(record_fields(directory, nodeid, record, capture.aidge_log_text(capture.current())))
        return record
    finally:
        capture.stop()
    return None


def _ledger_id(b: Blocker, source: tuple | None, backward: bool, timeout: float | None) -> tuple[str | None, str]:
    """``(id, how)``: the ledger's defect id of ``b`` (None: no Aidge finding, or none could be
    computed: ``how`` says why). An import gap's record is one per node (the ledger names a gap by
    its ONNX op and reads nothing else of it); any other blocker's record is the one a run writes
    (:func:`ledger_record`, run again in a child on ``source``: ``(kind, fn, args)``)."""
    import tempfile

    from .equivalence.isolation import run_isolated
    from .registry.identify import identify, signature_of
    from .reporting.ledger import is_aidge_finding

    if b.attribution not in (None, "aidge", "unknown") or not b.category:
        return None, f"attributed to {b.attribution}: no Aidge defect"
    if b.category == "unsupported_operator" and import_gaps(b.message):
        record = {"category": b.category, "error": b.message, "phase": b.phase, "backend": "cpu",
                  "outcome": "failed", "attribution": b.attribution}
        return (_named(b, identify(record)), "the import gap's record") if is_aidge_finding(record) else \
            (None, "no Aidge finding")
    if source is None:
        return None, "no check to build the run's record from"
    kind, fn, args = source
    with tempfile.TemporaryDirectory(prefix="interop-check-") as directory:
        try:
            record = run_isolated(ledger_record, fn, args, directory, NODEID.format(where=b.where[0]),
                                  backward=backward, backward_only=kind == "backward", timeout=timeout)
        except Exception as exc:  # noqa: BLE001 - the run died (a crash): the id is the crash's, unknown here
            return None, f"the run's record could not be built: {type(exc).__name__}: {_shorten(str(exc), 200)}"
    if record is None:
        return None, "the check passed when run again: no record"
    if (record.get("category"), record.get("phase")) != (b.category, b.phase):
        return None, (f"run again, the check failed otherwise ({record.get('category')} in {record.get('phase')}): "
                      "no id")
    if not is_aidge_finding(record):
        return None, f"the run's record is no Aidge finding (attributed to {record.get('attribution')})"
    signature = signature_of(record)
    if not b.operator and signature["operator"] != "?":  # the run's record names it (its first diverging node)
        b.operator, b.operator_from = signature["operator"], "the run's record"
    return _named(b, identify(record, signature=signature)), "the run's record"


def _named(b: Blocker, ident: dict) -> str:
    """The id of the ledger's answer (:func:`interop.registry.identify.identify`), its title kept."""
    b.known = ident["title"]
    return ident["id"]


def _verdict_id(b: Blocker) -> str | None:
    """The id of the record the verdict alone gives (category, message, phase, operator): no
    reproducer, so it may differ from the ledger's where the ledger reads the reproducer (a
    value mismatch's first diverging node)."""
    from .registry.identify import identify
    from .reporting.ledger import is_aidge_finding

    record = {"category": b.category, "error": b.message, "phase": b.phase, "backend": "cpu",
              "aidge_operator": b.operator if b.operator_from == "verdict" else None, "outcome": "failed",
              "attribution": b.attribution}
    return _named(b, identify(record)) if is_aidge_finding(record) else None


def _ledger_titles(ledger: str | Path | None) -> dict[str, str]:
    if not ledger:
        return {}
    from .reading import UnsafeInputError, read_user_json

    try:  # the suite's reading policy: a regular file, bounded, no link out, no FIFO to hang on
        data = read_user_json(ledger)
    except (OSError, ValueError, UnsafeInputError):
        return {}
    entries = data.get("defects", []) if isinstance(data, dict) else data
    return {e["id"]: e.get("title", "") for e in entries if isinstance(e, dict) and "id" in e}


def _merge(blockers: list[Blocker]) -> list[Blocker]:
    """One blocker per defect (its id, else its phase, operator, category and words): the places
    it showed are joined, each with its own words (``words_at``: a value mismatch's values differ
    from place to place) and values (``values_at``); ``words`` is the first one's."""
    out: dict[tuple, Blocker] = {}
    for b in blockers:
        b.words_at = {w: b.words_at.get(w, b.words) for w in b.where}  # each place keeps its own words
        key = (b.defect_id,) if b.defect_id else (b.phase, b.operator, b.category, b.words)
        if key in out:
            out[key].where.extend(w for w in b.where if w not in out[key].where)
            for w in b.where:
                out[key].words_at.setdefault(w, b.words_at[w])
                if w in b.values_at:
                    out[key].values_at.setdefault(w, b.values_at[w])
            if not out[key].operator and b.operator:  # one place named the operator: the defect's
                out[key].operator, out[key].operator_from = b.operator, b.operator_from
        else:
            out[key] = b
    return list(out.values())


# --------------------------------------------------------------------------------------
def _leaf_calls(model, inputs) -> list[dict[str, Any]]:
    """Each leaf module's first call in a torch forward of a copy of ``model`` (the caller's
    model is not run: a BatchNorm in training mode keeps its statistics): path, module (the
    copy's), its positional arguments (tensors detached and cloned *before* the call: an in-place
    leaf, ``ReLU(inplace=True)``, overwrites them), its output and how many times the forward
    called it."""
    import torch

    model = copy.deepcopy(model)
    calls: dict[str, dict[str, Any]] = {}
    pending: dict[str, list] = {}
    hooks = []

    def before(path):
        def hook(module, args):
            if path not in calls and path not in pending:
                pending[path] = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]
        return hook

    def keep(path):
        def hook(module, args, output):
            if path in calls:
                calls[path]["count"] += 1
                return
            calls[path] = {"path": path, "module": module, "count": 1, "args": pending.pop(path),
                           "output": output.detach().clone() if isinstance(output, torch.Tensor) else None}
        return hook

    for path, module in model.named_modules():
        if path and not any(True for _ in module.children()):
            hooks.append(module.register_forward_pre_hook(before(path)))
            hooks.append(module.register_forward_hook(keep(path)))
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        for h in hooks:
            h.remove()
    return list(calls.values())


def _leaf_calls_isolated(model, inputs, timeout: float | None) -> list[dict[str, Any]]:
    """:func:`_leaf_calls` in a forked child under ``timeout`` (the model's forward is the user's
    code: before, a forward that slept hung the check here, one that raised was a traceback); a
    forward that raises, dies or does not finish is a :class:`ModelError`. Calls that cannot be
    pickled (a module holding a lambda) are captured again here: the child's forward finished."""
    from .equivalence.isolation import run_isolated

    what = f"the model's torch forward on {_shapes_text(inputs)} (capturing its leaves' inputs)"
    try:
        return run_isolated(_leaf_calls, model, inputs, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - sorted below
        if _not_picklable(exc):
            return _leaf_calls(model, inputs)
        raise (_died(exc, what, timeout) or ModelError(f"{what} raised {_first_line(exc)}")) from None


def _writes_in_place_isolated(module, args, timeout: float | None) -> bool:
    """:func:`_writes_in_place` in a forked child under ``timeout`` (False when it does not finish)."""
    from .equivalence.isolation import run_isolated

    try:
        return bool(run_isolated(_writes_in_place, module, args, timeout=timeout))
    except Exception:  # noqa: BLE001 - a leaf torch cannot run: its verdict says it
        return False


def _writes_in_place(module, args) -> bool:
    """Whether a torch call of (a copy of) ``module`` writes into a tensor argument
    (``ReLU(inplace=True)``): its version counter moves."""
    import torch

    probe = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]
    before = [a._version if isinstance(a, torch.Tensor) else None for a in probe]
    try:
        with torch.no_grad(), torch.random.fork_rng(devices=[]):
            copy.deepcopy(module)(*probe)
    except Exception:  # noqa: BLE001 - torch's own failure on the leaf: its verdict says it
        return False
    return any(isinstance(a, torch.Tensor) and a._version != v for a, v in zip(probe, before))


def _on_cloned_inputs(module):
    """``module`` called on clones of its tensor arguments: torch's in-place write (``ReLU(inplace=True)``)
    lands on the clone, never on the inputs verify compares against (a graph input that requires
    grad cannot be written in place). The export reads the clone as an identity."""
    import torch

    class OnClonedInputs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.module = module

        def forward(self, *args):
            return self.module(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])

    wrapper = OnClonedInputs()
    wrapper.training = module.training  # the wrapper's own flag only: the leaf keeps its mode
    return wrapper


def _backward_runs(module, args, backend: str = "cpu", exporter: str | None = None) -> dict:
    """In the child: ``module`` wrapped as :func:`~interop.verify` wraps it, one Aidge forward
    and one Aidge backward (a seeded output gradient of Aidge's output shapes); raises the
    bridge's error (a missing backward...). Gradients are not compared: this runs where the
    forward already differs, so torch's gradients are no reference."""
    import torch

    from .bridge import wrap
    from .bridge.value_check import checks_deferred
    from .equivalence.policy import output_gradients
    from .equivalence.verdict import as_module
    from .stages import stage
    from torch.utils import _pytree as pytree

    wrapped, tensors = as_module(module, args, {})
    with checks_deferred():
        aidge = wrap(wrapped, example_inputs=[x.detach() for x in tensors], backend=backend, exporter=exporter)
        fed = [x.detach().clone().requires_grad_(x.is_floating_point()) for x in tensors]
        with stage("aidge forward"):
            outs = [o for o in pytree.tree_leaves(aidge(*fed)) if isinstance(o, torch.Tensor)]
        grads = output_gradients(outs)
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
        if not pairs:
            return {"backward_run": False}
        with stage("aidge backward"):
            torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
    return {"backward_run": True}


def backward_verdict(module, *args, timeout: float | None = 120.0):
    """The second verdict of a leaf whose forward differs from torch's: does Aidge's backward run
    on it (:func:`_backward_runs`, in a forked child as verify's)? A :class:`~interop.equivalence.verdict.Verdict`:
    ``pass`` (it runs; gradients not compared), else the bridge's error (phase ``backward``...)."""
    from .equivalence.isolation import run_isolated
    from .equivalence.verdict import Verdict, verdict_from

    try:
        result = run_isolated(_backward_runs, module, args, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - every failure is a verdict, as verify's
        return verdict_from(exc)
    if not result.get("backward_run"):
        return Verdict("pass", summary="no backward to run: no output takes a gradient")
    return Verdict("pass", summary="Aidge's backward runs (gradients not compared: the forward differs)",
                   backward_checked=False)


def _signature(call) -> tuple:
    import torch

    m = call["module"]
    shapes = tuple(tuple(a.shape) if isinstance(a, torch.Tensor) else repr(a) for a in call["args"])
    return (type(m).__name__, m.extra_repr(), m.training, shapes)


def _with_stand_ins(model, paths: Sequence[str], inputs: Sequence[Any], values: Sequence[Any]):
    """``(module, fed)``: a copy of ``model`` on ``inputs`` whose leaves at ``paths`` give torch's
    ``values`` instead: ``module(*fed)``. A value something downstream reads is an input of the
    graph (data, so gradients flow into it); one nothing reads (a replaced leaf feeding another
    replaced leaf) and the model's own inputs are constants: an example input the export drops
    because nothing reads it makes the bridge feed the next input into the wrong slot (measured:
    ``forward(x, v) = conv(v)`` fails with "Input#1 (pads) must be of type Int64")."""
    import torch

    current: list = []

    class StandIn(torch.nn.Module):
        def __init__(self, i: int):
            super().__init__()
            self.i = i

        def forward(self, *args, **kwargs):
            return current[self.i]

    class WithStandIns(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = copy.deepcopy(model)
            for i, path in enumerate(paths):
                parent_path, _, name = path.rpartition(".")
                parent = self.model.get_submodule(parent_path) if parent_path else self.model
                setattr(parent, name, StandIn(i))
            # plain attributes, not buffers: an unread buffer stays in the export as an initializer
            object.__setattr__(self, "own_inputs", [x.detach().clone() for x in inputs])
            object.__setattr__(self, "fixed", {})

        def _apply(self, fn, *args, **kwargs):
            # the plain attributes follow the module's dtype too: verify's float64 reference
            # (``.double()`` of a copy) decides a gradient difference against them, not against
            # float32 constants (which left it undecided, "unknown", where it is float32 rounding)
            super()._apply(fn, *args, **kwargs)
            object.__setattr__(self, "own_inputs", [fn(x) for x in self.own_inputs])
            object.__setattr__(self, "fixed", {i: fn(v) for i, v in self.fixed.items()})
            return self

        def forward(self, *fed):
            it = iter(fed)
            current[:] = [self.fixed[i] if i in self.fixed else next(it) for i in range(len(paths))]
            return self.model(*self.own_inputs)

    module = WithStandIns()
    probe = [v.detach().clone().requires_grad_(v.is_floating_point()) for v in values]
    from torch.utils import _pytree as pytree

    out = [o for o in pytree.tree_leaves(module(*probe)) if isinstance(o, torch.Tensor) and o.requires_grad]
    if out:
        torch.autograd.backward([o.sum() for o in out])
    read = [p.grad is not None for p in probe]
    module.fixed.update({i: v.detach().clone() for i, (v, r) in enumerate(zip(values, read)) if not r})
    return module, [v for v, r in zip(values, read) if r]


def parse_dtype(text: str):
    """``"int64"`` (or ``torch.int64``, ``long``, ``float32``...) -> ``torch.int64``; ValueError
    naming the text otherwise."""
    import torch

    name = str(text).strip().removeprefix("torch.")
    dtype = getattr(torch, name, None) if re.fullmatch(r"[a-z][a-z0-9_]*", name) else None
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"an input dtype is a torch dtype name (float32, int64, bool...), not {text!r}")
    return dtype


def first_embedding(model):
    """The model's first leaf module (in registration order) when it is an ``nn.Embedding`` or
    ``nn.EmbeddingBag`` (its input is indices), else None."""
    import torch

    for path, module in model.named_modules():
        if path and not any(True for _ in module.children()):
            return module if isinstance(module, (torch.nn.Embedding, torch.nn.EmbeddingBag)) else None
    return None


#: the integers drawn for an integer input when the model does not say their range (no embedding first)
INTEGER_HIGH = 10


def make_inputs(model, inputs: Sequence[Any], dtypes: Sequence[Any] | None = None, seed: int = 0) -> list:
    """The tensors ``check`` feeds: each of ``inputs`` a tensor (kept) or a shape. A shape's
    dtype is ``dtypes``' (one for all, or one per input; a torch dtype or its name), else
    int64 when the model's first leaf is an embedding, else float32. Float inputs are seeded
    ``torch.randn``; integer inputs indices in ``[0, num_embeddings)`` of that embedding, else
    in ``[0, INTEGER_HIGH)``; bool inputs seeded coin flips."""
    import torch

    dtypes = [parse_dtype(d) if isinstance(d, str) else d for d in (dtypes or [])]
    if dtypes and len(dtypes) not in (1, len(inputs)):
        raise ValueError(f"give one input dtype for all inputs or one per input ({len(inputs)}), "
                         f"not {len(dtypes)}")
    embedding = first_embedding(model)
    gen = torch.Generator().manual_seed(seed)
    out = []
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            out.append(x)
            continue
        shape = tuple(x)
        dtype = (dtypes[0] if len(dtypes) == 1 else dtypes[i]) if dtypes else (
            torch.int64 if embedding is not None else torch.float32)
        check_input_size([shape], [dtype])  # one line naming the shape, before torch is asked for it
        if dtype.is_floating_point or dtype.is_complex:
            out.append(torch.randn(shape, generator=gen, dtype=dtype))
        elif dtype == torch.bool:
            out.append(torch.randint(0, 2, shape, generator=gen).bool())
        else:
            high = embedding.num_embeddings if embedding is not None else INTEGER_HIGH
            out.append(torch.randint(0, high, shape, generator=gen, dtype=dtype))
    return out


def check(model, *inputs, backward: bool = True, modules: bool = True, ledger: str | Path | None = None,
          max_modules: int = 64, timeout: float | None = 120.0, seed: int = 0,
          dtypes: Sequence[Any] | None = None, ledger_ids: bool = True) -> CheckReport:
    """Every blocker of ``model`` in Aidge (see the module's docstring). ``inputs``: tensors, or
    shapes (tuples of ints: seeded inputs, :func:`make_inputs`; ``dtypes``: their dtypes, one for
    all or one per input, default float32, int64 indices when the model starts with an embedding).
    ``backward``: check input gradients too; a leaf whose forward differs gets a second verdict,
    whether Aidge's backward runs on it (:func:`backward_verdict`). ``modules``: passes 2 and 3
    (False: the whole model only, as :func:`verify`). ``ledger``: a ``defects.json`` whose titles
    the blockers quote. ``max_modules``: at most this many distinct leaves are checked alone (the
    rest are listed with outcome None). A difference verify attributes to float32 rounding
    (``precision``) is a note of the report, not a blocker. ``ledger_ids``: each Aidge blocker's
    defect id is the ledger's, from the record a findings run writes for that failure
    (:func:`ledger_record`: the check run again in a child under the reproducer capture, into a
    temporary folder removed afterwards; seconds per blocker); False, or a crash (whose record
    the run finishes from the dead process's pending bundle): the id of the verdict's fields
    alone, which may differ from the ledger's (``Blocker.defect_id_how`` says which)."""
    import torch

    from .equivalence.verdict import verify

    timeout = check_timeout(timeout)
    tensors = make_inputs(model, inputs, dtypes, seed)
    name = type(model).__name__
    whole = verify(model, *tensors, backward=backward, timeout=timeout)
    found = _blockers_of(whole, "model")
    sources: dict[int, tuple] = {id(b): ("verify", model, tensors) for b in found}  # what each blocker's record reruns
    leaves: list[dict[str, Any]] = []
    replaced = None
    if modules:
        seen: dict[tuple, dict[str, Any]] = {}
        blocked_paths: list[str] = []
        outputs: dict[str, Any] = {}
        for call in _leaf_calls_isolated(model, tensors, timeout):
            sig = _signature(call)
            entry = {"path": call["path"], "type": type(call["module"]).__name__,
                     "input_shapes": [list(a.shape) for a in call["args"] if isinstance(a, torch.Tensor)],
                     "outcome": None, "summary": ""}
            leaves.append(entry)
            if sig in seen:
                entry.update(outcome=seen[sig]["outcome"], summary=f"as {seen[sig]['path']}")
                for b in seen[sig]["blockers"]:  # the same leaf elsewhere: one more place it shows
                    here = f"{call['path']} ({entry['type']})"
                    b.where.append(here)
                    if b.values_at:  # checked once, on the first one's inputs: those values are not this one's
                        b.words_at[here] = f"as {b.where[0]} (the same type, attributes and input shapes: " \
                                           "checked once, on its inputs)"
                if seen[sig]["blocked"] and call["output"] is not None and call["count"] == 1:
                    blocked_paths.append(call["path"])
                    outputs[call["path"]] = call["output"]
                continue
            if not any(isinstance(a, torch.Tensor) for a in call["args"]) or len(seen) >= max_modules:
                continue
            seen[sig] = entry
            leaf = call["module"]
            if _writes_in_place_isolated(leaf, call["args"], timeout):
                entry["in_place"] = True  # compared on clones of its inputs: torch's write cannot spoil them
                leaf = _on_cloned_inputs(leaf)
            where = f"{call['path']} ({entry['type']})"
            v = verify(leaf, *call["args"], backward=backward, timeout=timeout)
            entry.update(outcome=v.outcome, summary=porter_words(v.summary))
            values = values_of(v.mismatch, _call_of(v))
            if values:  # the leaf's own torch and Aidge values where they differ
                entry["values"] = values
            mine = _blockers_of(v, where, entry["type"])
            sources.update({id(b): ("verify", leaf, call["args"]) for b in mine})
            if backward and v.outcome == "fail" and v.phase == "forward":
                # the forward differs, so verify stopped before the backward: whether the leaf's
                # backward runs in Aidge is a second verdict, so a blocker behind it still shows
                second = backward_verdict(leaf, *call["args"], timeout=timeout)
                entry["backward"] = {"outcome": second.outcome, "summary": porter_words(second.summary)}
                behind = _blockers_of(second, where, entry["type"])
                sources.update({id(b): ("backward", leaf, call["args"]) for b in behind})
                mine += behind
            entry["blockers"] = mine
            entry["blocked"] = any(b.attribution != "precision" for b in mine)
            found += mine
            # a leaf called more than once (a shared ReLU) cannot stand for one value: kept as it is
            if entry["blocked"] and call["output"] is not None and call["count"] == 1:
                blocked_paths.append(call["path"])
                outputs[call["path"]] = call["output"]
        for entry in leaves:
            entry.pop("blockers", None)
            entry.pop("blocked", None)
        if whole.outcome != "pass" and blocked_paths:
            try:
                stand_in, fed = _with_stand_ins(model, blocked_paths, tensors, [outputs[p] for p in blocked_paths])
            except Exception as exc:  # noqa: BLE001 - torch refuses the model with stand-ins: said, not raised
                why = f"{type(exc).__name__}: {exc}"
                replaced = {"replaced": blocked_paths, "outcome": None,
                            "summary": f"not run: torch's forward with the stand-ins failed: {why}"}
            else:
                v = verify(stand_in, *fed, backward=backward, timeout=timeout)
                where = "model with " + ", ".join(blocked_paths) + " replaced by torch's values"
                replaced = {"replaced": blocked_paths, "outcome": v.outcome, "summary": porter_words(v.summary)}
                past = _blockers_of(v, where)
                sources.update({id(b): ("verify", stand_in, fed) for b in past})
                found += past
    titles = _ledger_titles(ledger)
    for b in found:
        if b.attribution == "precision":
            b.defect_id_how = "float32 rounding: no Aidge defect"
        elif ledger_ids and b.category not in ("crash", "hang", "killed"):
            b.defect_id, b.defect_id_how = _ledger_id(b, sources.get(id(b)), backward, timeout)
        else:
            b.defect_id = _verdict_id(b)
            b.defect_id_how = ("from the verdict alone (no reproducer read: may differ from the ledger's)"
                               if b.defect_id else "no Aidge finding")
        b.known = (titles.get(b.defect_id) or b.known) if b.defect_id else None
    notes = _merge([b for b in found if b.attribution == "precision"])
    merged = _merge([b for b in found if b.attribution != "precision"])
    shapes = [tuple(t.shape) for t in tensors]
    return CheckReport(name, shapes, whole, leaves, replaced, merged, notes)
