"""What :func:`interop.check.check` reports: a :class:`Blocker` (one thing that stops the model in
Aidge), the :class:`CheckReport`, the blockers a verdict gives (:func:`_blockers_of`: an import
gap per node, :func:`import_gaps`; the operator named from the verdict, else from the leaf's type,
:data:`AIDGE_OP_OF_LEAF`) and one blocker per defect (:func:`_merge`)."""
from __future__ import annotations

import dataclasses
from typing import Any

from ..import_gaps import import_gaps as _gaps_named
from .words import _call_of, _words, mismatch_words, porter_words, values_of

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


def import_gaps(message: str) -> list[tuple[str, str]]:
    """``[(node, onnx_op), ...]`` of an import error that lists the nodes without an Aidge operator."""
    return _gaps_named(message)


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
