"""PyTorch's ModuleInfo database as a case source: the sample inputs torch keeps per ``nn.Module``
class (``torch.testing._internal.common_modules.module_db``, torch 2.13.0, pinned), the
module-level twin of the OpInfo source (:mod:`interop.cases.opinfo`).

Which modules: :data:`MODULEINFO_MODULES`, the entries whose first float32 CPU sample exports
to ONNX (:func:`survey`, run in a forked child because torch's exporter can crash, writes the
list: ``python -m interop.cases.moduleinfo --survey``); lazy modules (their parameters appear at
the first call) and modules whose output is random (:data:`NOT_COMPARABLE`) are left out, and so
are the train-mode samples of a module that draws random numbers in training only
(:func:`random_in_training`: dropout, RReLU, a non-zero ``dropout`` argument; torch 2.13's
ModuleInfo samples all pass ``dropout=0.0``, so none is left out today).

Cases: one per (entry, mode, CPU float32 sample), ``kind="moduleinfo"``, ``source="moduleinfo"``;
the modes are ``eval`` and ``train`` (torch generates the samples for each: ``training=``), the
operator is the module's name without ``nn.`` (``Conv2d``), the label
``<mode>_s<index>_<constructor arguments and input shapes>``, so ids read like
``moduleinfo_Conv2d_eval_s0_3_4_3_2x3x5x5`` and ``-k moduleinfo_Conv2d`` selects a module. Samples are
generated under a fixed seed; the child that runs a case regenerates its sample and checks that
it is still the one its id describes (no tensor is pickled into an id).

The check (:func:`run_moduleinfo_case`, in a forked child): the module built from the sample's
constructor arguments (seeded), in the case's mode, through
:func:`interop.equivalence.verdict.check_callable`: forward on two calls, then input gradients and
the gradient of every parameter, each mismatch attributed (onnxruntime on the same ONNX, torch
in float64).

The default run takes the first :data:`DEFAULT_SAMPLES` sample of each entry and mode
(``INTEROP_MODULEINFO_SAMPLES``: a number or ``all``, ``nox -s moduleinfo``). Importing torch's
ModuleInfo database costs ~2 s: once per process, at the first :func:`moduleinfo_cases` call.
"""
from __future__ import annotations

import functools
import re
import zlib
from typing import Any
import inspect

from .case import Case, normalized_label
from .opinfo import describe_leaf

__all__ = ["MODULEINFO_MODULES", "DEFAULT_SAMPLES", "MODES", "ModuleInfoUnavailable", "module_db", "moduleinfo_cases",
           "moduleinfo_sample", "run_moduleinfo_case", "NOT_COMPARABLE", "RANDOM_IN_TRAINING", "random_in_training",
           "describe_module_sample", "survey", "sample_cap", "SAMPLES_ENV"]

DEFAULT_SAMPLES = 1
SAMPLES_ENV = "INTEROP_MODULEINFO_SAMPLES"
MODES = ("eval", "train")
_SEED = 0
_MAX_DESCRIPTION = 64

#: modules whose output is random (FractionalMaxPool draws its regions) or that only exist to
#: be initialised lazily: no two computations can agree, or there is nothing to export yet
NOT_COMPARABLE = re.compile(r"FractionalMaxPool|^nn\.Lazy")
#: modules that draw random numbers in training mode only (deterministic in eval mode): their
#: train-mode samples are no case
RANDOM_IN_TRAINING = re.compile(r"Dropout|RReLU")

from ._moduleinfo_modules import MODULEINFO_MODULES  # noqa: E402
from ..backends import FORWARD_ONLY_BACKENDS
from ..env import read
from ..stages import stage
from .case import on_backend


class ModuleInfoUnavailable(ImportError):
    """torch's ModuleInfo database cannot be imported: the ModuleInfo case source is off."""


@functools.lru_cache(maxsize=1)
def module_db() -> dict[str, Any]:
    """ModuleInfo name (``nn.Conv2d``) -> ModuleInfo; imported once per process."""
    try:
        from torch.testing._internal.common_modules import module_db as db
    except Exception as exc:  # noqa: BLE001 - any import failure switches the source off
        raise ModuleInfoUnavailable(
            f"the ModuleInfo case source is off: importing torch.testing._internal.common_modules failed "
            f"({type(exc).__name__}: {exc}); it needs torch 2.13.0 and expecttest (requirements/test.txt). The "
            f"other suites do not depend on it.") from exc
    return {info.name: info for info in db}


def sample_cap() -> int | None:
    """Samples per entry and mode: :data:`DEFAULT_SAMPLES`, ``$INTEROP_MODULEINFO_SAMPLES`` (None: all)."""
    return read(SAMPLES_ENV, default=DEFAULT_SAMPLES)


def _samples(name: str, mode: str, limit: int | None = None) -> list:
    """The first ``limit`` (None: all) float32 CPU samples of entry ``name`` for ``mode``,
    generated under a fixed seed."""
    import torch

    info = module_db()[name]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(_SEED)
        samples = info.module_inputs_func(info, device="cpu", dtype=torch.float32, requires_grad=True,
                                          training=mode == "train")
    return list(samples)[:limit] if limit is not None else list(samples)


def describe_module_sample(sample) -> str:
    """A short, stable text for a sample: its constructor arguments, then its inputs' shapes."""
    from torch.utils import _pytree as pytree

    ci, fi = sample.constructor_input, sample.forward_input
    parts = [describe_leaf(x) for x in pytree.tree_leaves(tuple(ci.args))]
    for key, value in ci.kwargs.items():
        leaves = pytree.tree_leaves(value)
        parts.append(key + "".join(describe_leaf(x) for x in leaves) if leaves else f"{key}None")
    parts += [describe_leaf(x) for x in pytree.tree_leaves((tuple(fi.args), dict(fi.kwargs)))]
    text = re.sub(r"_+", "_", "_".join(re.sub(r"[^A-Za-z0-9.+-]", "", p) for p in parts)).strip("_") or "noargs"
    if len(text) > _MAX_DESCRIPTION:
        text = f"{text[:_MAX_DESCRIPTION - 9]}_{zlib.crc32(text.encode()) & 0xFFFFFFFF:08x}"
    return text


def random_in_training(name: str, sample) -> bool:
    """Whether the module of entry ``name`` built from ``sample`` computes a random output in
    training mode: a dropout-like module (:data:`RANDOM_IN_TRAINING`), a non-zero ``dropout``
    constructor argument (Transformer layers, MultiheadAttention, RNNs), or a module passed to
    the constructor (TransformerEncoder's layer) that holds a dropout with ``p > 0``."""
    import torch
    from torch.utils import _pytree as pytree

    if RANDOM_IN_TRAINING.search(name):
        return True
    ci = sample.constructor_input
    try:
        bound = dict(inspect.signature(module_db()[name].module_cls).bind_partial(*ci.args, **ci.kwargs).arguments)
    except (TypeError, ValueError):
        bound = dict(ci.kwargs)
    dropout = bound.get("dropout")
    if isinstance(dropout, (int, float)) and not isinstance(dropout, bool) and dropout > 0:
        return True
    for leaf in pytree.tree_leaves((tuple(ci.args), dict(ci.kwargs))):
        if isinstance(leaf, torch.nn.Module) and any(
                RANDOM_IN_TRAINING.search(type(sub).__name__) and getattr(sub, "p", 1) != 0 for sub in leaf.modules()):
            return True
    return False


def _backward(dtype: str = "float32") -> bool:
    """Whether a case checks gradients: torch's ModuleInfo has no per-module autograd flag (its
    gradcheck tests every entry), so every module of a floating dtype is differentiable."""
    import torch

    return getattr(torch, dtype).is_floating_point


def _label(mode: str, index: int, sample) -> str:
    return f"{mode}_s{index}_{describe_module_sample(sample)}"


def moduleinfo_cases(names: list[str] | None = None, *, backend: str = "cpu", cap: Any = "env") -> list[Case]:
    """The ModuleInfo cases of ``names`` (default :data:`MODULEINFO_MODULES`), both modes, the
    first ``cap`` samples of each (``"env"``: :func:`sample_cap`; None: all), their expected
    failures attached. Raises :class:`ModuleInfoUnavailable` when torch's database is missing."""
    from ..equivalence.callable_module import has_tensor_argument
    from .kept_samples import keep

    cap = sample_cap() if cap == "env" else cap
    db = module_db()
    out, seen = [], set()
    for name in names or MODULEINFO_MODULES:
        info = db.get(name)
        if info is None or NOT_COMPARABLE.search(name):
            continue
        for mode in MODES:
            if mode == "train" and backend in FORWARD_ONLY_BACKENDS:
                continue
            try:
                samples = _samples(name, mode, limit=cap)
            except Exception:  # noqa: BLE001 - an entry without CPU float32 samples on this build
                continue
            for index, sample in enumerate(samples):
                fi = sample.forward_input
                if not has_tensor_argument(tuple(fi.args), dict(fi.kwargs)):
                    continue
                if mode == "train" and random_in_training(name, sample):
                    continue  # a random output: no single result to compare Aidge's with
                operator = name.removeprefix("nn.")
                label = normalized_label(_label(mode, index, sample))
                case_id = f"moduleinfo_{operator}_{label}"
                if case_id in seen:
                    continue
                seen.add(case_id)
                keep("moduleinfo", (name, mode), index, sample)  # for the child that runs the case
                out.append(on_backend(Case(
                    id=case_id, op_class=f"moduleinfo:{name}", operator=operator, path=label, source="moduleinfo",
                    kind="moduleinfo", backend=backend, test_backward=_backward(), training=mode == "train",
                    params={"moduleinfo": name, "mode": mode, "index": index}), backend))
    return out


def moduleinfo_sample(case: Case):
    """``(module, args, kwargs)`` of a ModuleInfo case: its sample regenerated and checked
    against the description in its id, the module built from it (seeded) in the case's mode."""
    import torch

    from .kept_samples import kept_or_generated

    name, mode, index = case.params["moduleinfo"], case.params["mode"], case.params["index"]
    sample = kept_or_generated("moduleinfo", (name, mode), index, lambda: _samples(name, mode, limit=index + 1)[index])
    label = normalized_label(_label(mode, index, sample))
    if label != case.label:
        raise RuntimeError(f"{case.id}: ModuleInfo sample {index} of {name} ({mode}) is now {label!r}: the sample "
                           f"list changed (torch upgraded?), the case id no longer describes it")
    ci, fi = sample.constructor_input, sample.forward_input
    with stage("sample"), torch.random.fork_rng(devices=[]):
        torch.manual_seed(_SEED)
        module = module_db()[name].module_cls(*ci.args, **ci.kwargs)
    module.train(mode == "train")
    return module, tuple(fi.args), dict(fi.kwargs)


def run_moduleinfo_case(case: Case) -> dict:
    """The check of one ModuleInfo case, in this process."""
    from ..equivalence.callable_check import check_callable

    module, args, kwargs = moduleinfo_sample(case)
    return check_callable(module, args, kwargs, backward=case.test_backward, backend=case.backend,
                          tolerance=case.tolerance, name=case.id, parameter_grads=case.test_backward)


def survey() -> list[str]:
    """The ModuleInfo entries whose first eval-mode float32 CPU sample exports to ONNX through
    ``exporter="auto"`` (how :data:`MODULEINFO_MODULES` was made)."""
    from ..equivalence.isolation import run_isolated

    keep = []
    for name in module_db():
        if NOT_COMPARABLE.search(name):
            continue
        try:
            if run_isolated(_exports, name, timeout=120):  # the exporter itself can crash
                keep.append(name)
        except Exception:  # noqa: BLE001 - does not export: not in the source
            continue
    return keep


def _exports(name: str) -> bool:
    from ..bridge.onnx_export import export_to_onnx
    from ..equivalence.callable_module import as_module

    samples = _samples(name, "eval", limit=1)
    if not samples:
        return False
    sample = samples[0]
    ci, fi = sample.constructor_input, sample.forward_input
    module = module_db()[name].module_cls(*ci.args, **ci.kwargs).eval()
    wrapped, tensors = as_module(module, tuple(fi.args), dict(fi.kwargs))
    if tensors:
        export_to_onnx(wrapped, [x.detach() for x in tensors], exporter="auto")
    return bool(tensors)


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--survey"]:
        sys.stdout.write('"""The ModuleInfo entries of the source (python -m interop.cases.moduleinfo --survey, '
                         'torch 2.13.0)."""\nMODULEINFO_MODULES = (\n'
                         + "".join(f"    {n!r},\n" for n in survey()) + ")\n")
