"""A porter's check: every blocker of a model at once (issue 49).

``check(model, *inputs)`` (or ``python -m interop check module:factory --input-shape 1,3,32,32``)
answers "what stops this model in Aidge?" with every blocker it can find in one call, where
:func:`interop.verify` stops at the first. Three passes, each a :func:`~interop.verify` verdict
(forked child, attribution, crash as a verdict):

1. **the whole model**: export, import, compile, forward on two calls, input gradients. An
   import that leaves nodes without an Aidge operator gives one blocker per such node;
2. **each leaf module alone** (a module without children: ``Conv2d``, ``PReLU``, ``Upsample``...),
   on the very inputs it receives in the model's forward (captured with forward hooks on a
   torch run), so a blocker behind the first one still shows: the Upsample's missing backward
   behind a PReLU that does not import. Leaves with the same type, attributes and input shapes
   are checked once;
3. **the whole model again, each blocked leaf replaced by torch's value** (its output on the
   captured inputs, fed as an input of the graph: data, not a constant, so gradients flow into
   it; the model's own inputs become constants; a leaf called more than once is kept), when the
   first pass failed and the second found blocked leaves: what the rest of the model,
   functional calls included, does past them.

Each :class:`Blocker` names its phase, Aidge's operator (the ONNX op for an import gap), the
node, Aidge's own words, where it showed (``model``, a leaf's path) and, for a finding
attributed to Aidge, the ledger's defect id (:func:`interop.reporting.ledger.signature_of` and
``defect_id``: the id a run's ``defects.md`` gives the same defect when the signature agrees)
and the ledger entry's title when a ledger file is given and holds that id.

What it does not see: a blocker inside a functional call (``torch.cat``, ``F.interpolate`` in a
``forward``) hidden behind an earlier failure of the whole model that pass 3 cannot remove;
parameter gradients (verify compares input gradients). Nothing is printed and nothing is
written: the CLI (:mod:`interop.__main__`) prints the report.
"""
from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path
from typing import Any, Sequence

__all__ = ["Blocker", "CheckReport", "check", "load_factory", "parse_shape", "import_gaps"]

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

    def line(self) -> str:
        what = f"{self.phase or '?'}: {self.operator or '?'}"
        node = f" (node {self.node})" if self.node else ""
        defect = f" [{self.defect_id}" + (f": {self.known}" if self.known else "") + "]" if self.defect_id else ""
        by = f", {self.attribution}" if self.attribution and self.attribution != "aidge" else ""
        return f"{what}{node}{defect} {self.category or ''}{by}; in {', '.join(self.where)}: {self.words}"

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out.pop("message")
        return out


@dataclasses.dataclass
class CheckReport:
    """What :func:`check` found: ``blockers`` (empty: the model runs in Aidge, forward and input
    gradients, as far as these checks see), the whole model's verdict, each leaf's verdict
    (``modules``: path, type, input shapes, outcome, summary) and the replaced model's verdict."""

    model: str
    input_shapes: list[tuple[int, ...]]
    verdict: Any
    modules: list[dict[str, Any]]
    replaced: dict[str, Any] | None
    blockers: list[Blocker]

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
        checked = [m for m in self.modules if m["outcome"] is not None]
        out.append(f"checked: the whole model ({self.verdict.outcome}), {len(checked)} distinct leaf module(s) alone"
                   + (f", the model with {', '.join(self.replaced['replaced'])} replaced by torch's values "
                      f"({self.replaced['outcome']})" if self.replaced else ""))
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "input_shapes": [list(s) for s in self.input_shapes], "passed": self.passed,
                "blockers": [b.as_dict() for b in self.blockers], "modules": self.modules, "replaced": self.replaced,
                "verdict": {"outcome": self.verdict.outcome, "category": self.verdict.category,
                            "phase": self.verdict.phase, "operator": self.verdict.operator,
                            "summary": self.verdict.summary}}


# --------------------------------------------------------------------------------------
def parse_shape(text: str) -> tuple[int, ...]:
    """``"1,3,32,32"`` (or ``1x3x32x32``) -> ``(1, 3, 32, 32)``."""
    parts = [p for p in re.split(r"[,x ]+", text.strip()) if p]
    if not parts or not all(p.isdigit() for p in parts):
        raise ValueError(f"an input shape is integers separated by commas (1,3,32,32), not {text!r}")
    return tuple(int(p) for p in parts)


def load_factory(spec: str):
    """``"package.module:factory"`` -> ``factory()``, the model (an ``nn.Module``)."""
    import importlib

    import torch

    if ":" not in spec:
        raise ValueError(f"the model is module:factory (a callable returning an nn.Module), not {spec!r}")
    module_name, _, attr = spec.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    model = target() if callable(target) and not isinstance(target, torch.nn.Module) else target
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"{spec} gave a {type(model).__name__}, not a torch.nn.Module")
    return model


def import_gaps(message: str) -> list[tuple[str, str]]:
    """``[(node, onnx_op), ...]`` of an import error that lists the nodes without an Aidge operator."""
    return _GAP.findall(message or "")


def _words(message: str) -> str:
    """Aidge's words: the message without the bridge's ``Aidge <phase> failed (...):`` prefix."""
    text = " ".join(str(message or "").split())
    return re.sub(r"^Aidge \w+ failed \([^)]*\):\s*", "", text)[:400]


def _blockers_of(verdict, where: str) -> list[Blocker]:
    if verdict.outcome == "pass":
        return []
    gaps = import_gaps(verdict.message) if verdict.category == "unsupported_operator" else []
    if gaps:
        return [Blocker("import", op, node, verdict.category, verdict.attribution,
                        f"no Aidge operator for ONNX op {op}: imported as GenericOperator, cannot run", [where],
                        message=f"Aidge has no native operator for 1 node(s): '{node}' (ONNX op {op})")
                for node, op in gaps]
    words = _words(verdict.message or verdict.summary)
    if verdict.outcome == "crash":
        words = f"crash ({verdict.signal or verdict.category}): {words}"
    return [Blocker(verdict.phase, verdict.operator, verdict.node, verdict.category, verdict.attribution, words,
                    [where], message=verdict.message or verdict.summary)]


def _defect_id(b: Blocker, message: str) -> str | None:
    if b.attribution not in (None, "aidge", "unknown") or not b.category:
        return None
    from .reporting.ledger import defect_id, is_aidge_finding, signature_of

    record = {"category": b.category, "error": message, "phase": b.phase, "backend": "cpu",
              "aidge_operator": b.operator, "outcome": "failed", "attribution": b.attribution}
    if not is_aidge_finding(record):
        return None
    return defect_id(signature_of(record))


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
    it showed are joined; the first one's words are kept."""
    out: dict[tuple, Blocker] = {}
    for b in blockers:
        key = (b.defect_id,) if b.defect_id else (b.phase, b.operator, b.category, b.words)
        if key in out:
            out[key].where.extend(w for w in b.where if w not in out[key].where)
        else:
            out[key] = b
    return list(out.values())


# --------------------------------------------------------------------------------------
def _leaf_calls(model, inputs) -> list[dict[str, Any]]:
    """Each leaf module's first call in a torch forward of a copy of ``model`` (the caller's
    model is not run: a BatchNorm in training mode keeps its statistics): path, module (the
    copy's), its positional arguments (tensors detached and cloned), its output and how many
    times the forward called it."""
    import torch

    model = copy.deepcopy(model)
    calls: dict[str, dict[str, Any]] = {}
    hooks = []

    def keep(path):
        def hook(module, args, output):
            if path in calls:
                calls[path]["count"] += 1
                return
            calls[path] = {"path": path, "module": module, "count": 1,
                           "args": [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args],
                           "output": output.detach().clone() if isinstance(output, torch.Tensor) else None}
        return hook

    for path, module in model.named_modules():
        if path and not any(True for _ in module.children()):
            hooks.append(module.register_forward_hook(keep(path)))
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        for h in hooks:
            h.remove()
    return list(calls.values())


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


def check(model, *inputs, backward: bool = True, modules: bool = True, ledger: str | Path | None = None,
          max_modules: int = 64, timeout: float | None = 120.0, seed: int = 0) -> CheckReport:
    """Every blocker of ``model`` in Aidge (see the module's docstring). ``inputs``: tensors, or
    shapes (tuples of ints: seeded ``torch.randn`` inputs). ``backward``: check input gradients
    too. ``modules``: passes 2 and 3 (False: the whole model only, as :func:`verify`).
    ``ledger``: a ``defects.json`` whose titles the blockers quote. ``max_modules``: at most
    this many distinct leaves are checked alone (the rest are listed with outcome None)."""
    import torch

    from .equivalence.verdict import verify

    gen = torch.Generator().manual_seed(seed)
    tensors = [x if isinstance(x, torch.Tensor) else torch.randn(tuple(x), generator=gen) for x in inputs]
    name = type(model).__name__
    whole = verify(model, *tensors, backward=backward, timeout=timeout)
    found = _blockers_of(whole, "model")
    leaves: list[dict[str, Any]] = []
    replaced = None
    if modules:
        seen: dict[tuple, dict[str, Any]] = {}
        blocked_paths: list[str] = []
        outputs: dict[str, Any] = {}
        for call in _leaf_calls(model, tensors):
            sig = _signature(call)
            entry = {"path": call["path"], "type": type(call["module"]).__name__,
                     "input_shapes": [list(a.shape) for a in call["args"] if isinstance(a, torch.Tensor)],
                     "outcome": None, "summary": ""}
            leaves.append(entry)
            if sig in seen:
                entry.update(outcome=seen[sig]["outcome"], summary=f"as {seen[sig]['path']}")
                for b in seen[sig]["blockers"]:  # the same leaf elsewhere: one more place it shows
                    b.where.append(f"{call['path']} ({entry['type']})")
                if seen[sig]["outcome"] != "pass" and call["output"] is not None and call["count"] == 1:
                    blocked_paths.append(call["path"])
                    outputs[call["path"]] = call["output"]
                continue
            if not any(isinstance(a, torch.Tensor) for a in call["args"]) or len(seen) >= max_modules:
                continue
            seen[sig] = entry
            v = verify(call["module"], *call["args"], backward=backward, timeout=timeout)
            entry.update(outcome=v.outcome, summary=v.summary)
            mine = _blockers_of(v, f"{call['path']} ({entry['type']})")
            entry["blockers"] = mine
            found += mine
            # a leaf called more than once (a shared ReLU) cannot stand for one value: kept as it is
            if v.outcome != "pass" and call["output"] is not None and call["count"] == 1:
                blocked_paths.append(call["path"])
                outputs[call["path"]] = call["output"]
        for entry in leaves:
            entry.pop("blockers", None)
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
                replaced = {"replaced": blocked_paths, "outcome": v.outcome, "summary": v.summary}
                found += _blockers_of(v, where)
    titles = _ledger_titles(ledger)
    for b in found:
        b.defect_id = _defect_id(b, b.message)
        b.known = titles.get(b.defect_id) if b.defect_id else None
    merged = _merge(found)
    shapes = [tuple(t.shape) for t in tensors]
    return CheckReport(name, shapes, whole, leaves, replaced, merged)
