"""PyTorch's own sample inputs as a second case source: the OpInfo database
(``torch.testing._internal.common_methods_invocations.op_db``, torch 2.13.0, pinned).

Which ops: every OpInfo entry of :data:`OPINFO_OPS`: the entries whose op the catalog
covers (:data:`CATALOG_OPINFO`) and every other entry whose first float32 CPU sample
exports to ONNX (measured with :func:`survey`, which writes the list; an entry that stops
exporting becomes an ``export_error`` finding, not a silent gap).

Cases: one per (entry, CPU sample input, dtype), ``kind="opinfo"``, ``source="opinfo"``;
the operator is the OpInfo name (``nn.functional.conv2d``), the label ``s<index>_<what the
sample holds>`` (tensor shapes, arguments), so ids read like
``opinfo_nn.functional.conv2d_s0_1x3x4x4_3x3x3x3_3_stride2x2_padding2_groups1``. Samples are
generated under a fixed seed; the process that collects the cases keeps the samples of the
cases it selected (:mod:`interop.cases.kept_samples`), and the forked child that runs a case
takes its sample from there (elsewhere: generates it again) and checks that it still is the
one its id describes (no tensor is pickled into an id).

The default run takes the first :data:`DEFAULT_SAMPLES` samples of every entry (a
deterministic cap); ``INTEROP_OPINFO_SAMPLES=all`` (``nox -s opinfo``) takes them all.
``INTEROP_OPINFO_SHARD=K/N`` keeps the K-th of N disjoint shards of whatever that selects
(by a CRC-32 of the case id: stable, independent of the order and of the other cases), so
that the ~30,000 cases of the full run split over N jobs, or a shard measures the whole.

dtypes: float32 for every entry; the other dtypes Aidge has kernels for
(:data:`EXTRA_DTYPES`: float64, float16, int64) for the entries the catalog covers in the
default run, for every entry with ``INTEROP_OPINFO_DTYPES=all`` (``nox -s opinfo``), or the
comma-separated list that variable gives, for every entry. A dtype the entry does not
support on CPU in torch is no case. The graph runs in that dtype in Aidge (the bridge compiles
every graph with its own dtypes, :func:`interop.bridge.graph._compile`), compared with that
dtype's tolerance; the backward is checked where torch's OpInfo lists the dtype as
differentiable. Ids of dtypes other than float32 end with the dtype
(``opinfo_abs_s0_20x20_float64``).

Importing torch's OpInfo database costs ~6 s: it happens once per process, on the first
:func:`opinfo_cases` call, never when this module is imported. When it fails,
:class:`OpInfoUnavailable` says why; the rest of the suite does not depend on it.
"""
from __future__ import annotations

import contextlib
import functools
import re
import threading
import zlib
from typing import Any
import itertools
import random
import sys
import unittest

from .case import Case, normalized_label

__all__ = ["OPINFO_OPS", "CATALOG_OPINFO", "DEFAULT_SAMPLES", "OpInfoUnavailable", "op_db", "opinfo_cases",
           "opinfo_sample", "run_opinfo_case", "NOT_COMPARABLE", "describe_sample", "survey", "sample_cap",
           "EXTRA_DTYPES", "entry_dtypes", "shard", "in_shard", "describe_leaf"]

#: samples per entry in the default run (``INTEROP_OPINFO_SAMPLES``: a number or ``all``)
DEFAULT_SAMPLES = 1
SAMPLES_ENV = "INTEROP_OPINFO_SAMPLES"
#: dtypes beyond float32 (Aidge's CPU backend registers kernels of these types)
from ..env import OPINFO_EXTRA_DTYPES as EXTRA_DTYPES  # noqa: E402  (declared with INTEROP_OPINFO_DTYPES)
DTYPES_ENV = "INTEROP_OPINFO_DTYPES"
SHARD_ENV = "INTEROP_OPINFO_SHARD"
_SEED = 0
_MAX_DESCRIPTION = 64

#: catalog operator -> the OpInfo entries computing the same operator
CATALOG_OPINFO: dict[str, tuple[str, ...]] = {
    "MaxPool2D": ("nn.functional.max_pool2d",), "AvgPool2D": ("nn.functional.avg_pool2d",),
    "GlobalAveragePool": ("nn.functional.adaptive_avg_pool2d",),
    "ReLU": ("nn.functional.relu",), "LeakyReLU": ("nn.functional.leaky_relu",), "Sigmoid": ("sigmoid",),
    "Tanh": ("tanh",), "GELU": ("nn.functional.gelu",), "SiLU": ("nn.functional.silu",),
    "Softmax": ("softmax",), "LogSoftmax": ("log_softmax",), "Hardswish": ("nn.functional.hardswish",),
    "Hardsigmoid": ("nn.functional.hardsigmoid",), "Softplus": ("nn.functional.softplus",),
    "ELU": ("nn.functional.elu",), "Clip": ("clamp",), "Hardtanh": ("nn.functional.hardtanh",),
    "Conv1D": ("nn.functional.conv1d",), "Conv2D": ("nn.functional.conv2d",),
    "ConvTranspose2D": ("nn.functional.conv_transpose2d",), "FC": ("nn.functional.linear",),
    "ReduceMean": ("mean",), "ReduceSum": ("sum",), "ReduceMax": ("amax",), "ReduceMin": ("amin",),
    "Add": ("add",), "Sub": ("sub",), "Mul": ("mul",), "Div": ("div.no_rounding_mode",), "Pow": ("pow",),
    "Sqrt": ("sqrt",), "Exp": ("exp",), "Log": ("log",), "Abs": ("abs",), "Neg": ("neg",), "Erf": ("erf",),
    "Reciprocal": ("reciprocal",), "MatMul": ("matmul",), "BatchNorm2D": ("nn.functional.batch_norm",),
    "LayerNorm": ("nn.functional.layer_norm",), "InstanceNorm": ("nn.functional.instance_norm",),
    "GroupNorm": ("nn.functional.group_norm",), "Pad": ("nn.functional.pad.constant",), "Concat": ("cat",),
    "Split": ("split",), "Slice": ("narrow",), "Transpose": ("permute",), "Reshape": ("reshape",),
    "Flatten": ("flatten",), "Resize": ("nn.functional.interpolate.nearest",), "Gather": ("index_select",),
    "Embedding": ("nn.functional.embedding",), "Where": ("where",),
}

#: every OpInfo entry of the source, in op_db order (see the module docstring; regenerate
#: with ``python -m interop.cases.opinfo --survey``)
from ._opinfo_ops import OPINFO_OPS  # noqa: E402
from ..env import read
from .case import on_backend


#: entries whose output is random or uninitialised memory: no two computations can agree
NOT_COMPARABLE = re.compile(r"(?:^|\.)normal(?:\.|$)|bernoulli|rand|dropout|multinomial|uniform|exponential|geometric|cauchy"
                            r"|empty|rrelu|feature_alpha")


class OpInfoUnavailable(ImportError):
    """torch's OpInfo database cannot be imported: the OpInfo case source is off."""


@functools.lru_cache(maxsize=1)
def op_db() -> dict[str, Any]:
    """OpInfo full name (``name`` or ``name.variant``) -> OpInfo; imported once per process."""
    try:
        from torch.testing._internal.common_methods_invocations import op_db as db
    except Exception as exc:  # noqa: BLE001 - any import failure switches the source off
        raise OpInfoUnavailable(
            f"the OpInfo case source is off: importing torch.testing._internal.common_methods_invocations "
            f"failed ({type(exc).__name__}: {exc}); it needs torch 2.13.0 and expecttest "
            f"(requirements/test.txt). The other suites do not depend on it.") from exc
    return {_full_name(op): op for op in db}


def _full_name(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def sample_cap() -> int | None:
    """Samples per entry: :data:`DEFAULT_SAMPLES`, ``$INTEROP_OPINFO_SAMPLES`` (None: all)."""
    return read(SAMPLES_ENV, default=DEFAULT_SAMPLES)


def shard() -> tuple[int, int] | None:
    """``(k, n)`` from ``$INTEROP_OPINFO_SHARD`` (``K/N``, 1 <= K <= N), None when unset. Set together
    with ``$INTEROP_SHARD`` (the shard of every source) it is a ``ValueError`` naming both
    (:func:`interop.records.shard.opinfo_shard`, where both shard settings are decided)."""
    from ..records.shard import opinfo_shard

    return opinfo_shard()


def in_shard(case_id: str, selected: tuple[int, int] | None) -> bool:
    """Whether ``case_id`` belongs to shard ``(k, n)`` (every id to exactly one of the n): the one
    shard rule (:func:`interop.records.shard.in_shard`) with the CRC-32 its table rows were made with."""
    from ..records.shard import in_shard as member

    return member(case_id, selected, hash="crc32")


def entry_dtypes(name: str) -> tuple[str, ...]:
    """The dtypes whose cases entry ``name`` gets (before torch's support is checked): see
    the module docstring (``$INTEROP_OPINFO_DTYPES``: unset, ``all`` or a comma list)."""
    if names := read(DTYPES_ENV):  # all, or a comma list of known dtypes (else a ValueError naming it)
        return names
    covered = {n for names in CATALOG_OPINFO.values() for n in names}
    return ("float32", *EXTRA_DTYPES) if name in covered else ("float32",)


def _label(index: int, sample, dtype: str) -> str:
    return f"s{index}_{describe_sample(sample)}" + ("" if dtype == "float32" else f"_{dtype}")


def _samples(name: str, dtype: str = "float32", limit: int | None = None) -> list:
    """The first ``limit`` (None: all) CPU sample inputs of entry ``name`` for ``dtype``,
    generated under a fixed seed (so the first ``n`` are the same whatever the limit): torch's
    own ``OpInfo.sample_inputs``, which reseeds before each sample, under
    :func:`_fast_sample_iteration`; the caller's torch, ``random`` and numpy RNG states are
    restored."""
    import torch

    op = op_db()[name]
    with torch.random.fork_rng(devices=[]), _python_rng_kept(), _fast_sample_iteration():
        torch.manual_seed(_SEED)
        torch_dtype = getattr(torch, dtype)
        samples = op.sample_inputs("cpu", torch_dtype, requires_grad=op.supports_autograd and torch_dtype.is_floating_point)
        return list(itertools.islice(samples, limit))


@contextlib.contextmanager
def _python_rng_kept():
    """``random``'s and numpy's global RNG states restored after the block (torch's sample
    iterator seeds them before each sample)."""
    import numpy as np

    state, np_state = random.getstate(), np.random.get_state()
    try:
        yield
    finally:
        random.setstate(state)
        np.random.set_state(np_state)


_PATCH_LOCK = threading.Lock()


@contextlib.contextmanager
def _fast_sample_iteration():
    """torch's sample iterator (``TrackedInputIter``) with two of its helpers replaced, for the
    block, by equivalents that give the same samples: ``extract_test_fn`` walks the frames
    without reading their source (``inspect.stack()`` did: 15 ms a call, two calls per sample
    list), and ``set_rng_seed`` seeds the CPU generator, ``random`` and numpy as before but not
    through ``torch.manual_seed``, which also queues a CUDA seeding with a formatted stack on a
    CPU-only process (~0.6 ms per sample). Measured by tools/case_cost.py: the full OpInfo
    collection went from 64 s to 11 s; tests/unit/test_case_cost.py checks that the samples
    are the same both ways."""
    import torch.testing._internal.common_utils as cu
    import torch.testing._internal.opinfo.core as core

    with _PATCH_LOCK:
        try:
            saved = (cu.extract_test_fn, core.extract_test_fn, cu.set_rng_seed)
        except AttributeError:  # another torch without these helpers: its own iteration, as it is
            yield
            return
        cu.extract_test_fn = core.extract_test_fn = _extract_test_fn
        cu.set_rng_seed = _set_rng_seed
        try:
            yield
        finally:
            cu.extract_test_fn, core.extract_test_fn, cu.set_rng_seed = saved


def _extract_test_fn():
    """torch's ``common_utils.extract_test_fn`` (the unittest test function on the stack, or
    None), without reading any source."""
    frame = sys._getframe(1)
    while frame is not None:
        self_val = frame.f_locals.get("self")
        if isinstance(self_val, unittest.TestCase):
            try:
                *_, cls_name, test_name = self_val.id().rsplit(".", 2)
                if cls_name == type(self_val).__name__ and test_name.startswith("test"):
                    return getattr(self_val, test_name).__func__
            except Exception:  # noqa: BLE001 - as torch's: any failure is "no test function"
                return None
        frame = frame.f_back
    return None


def _set_rng_seed(seed=None):
    """torch's ``common_utils.set_rng_seed`` for CPU samples: the CPU generator, ``random`` and
    numpy seeded alike."""
    import numpy as np
    import torch
    import torch.testing._internal.common_utils as cu

    seed = cu.SEED if seed is None else seed
    torch.default_generator.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


def describe_leaf(x: Any) -> str:
    """A short, stable text for one argument of a sample (a tensor's shape, a number, a dtype, a name)."""
    import torch

    if isinstance(x, torch.Tensor):
        shape = "x".join(str(d) for d in x.shape) or "0d"
        return shape if x.is_floating_point() else f"{str(x.dtype)[6:]}{shape}"
    if isinstance(x, float):
        return f"{x:g}"
    if isinstance(x, torch.dtype):
        return str(x)[6:]
    if callable(x):  # a function or class argument: its name (its repr holds an address)
        return getattr(x, "__name__", type(x).__name__)
    return str(x)


def describe_sample(sample) -> str:
    """A short, stable text for a sample: its tensors' shapes and its arguments."""
    from torch.utils import _pytree as pytree

    parts = [describe_leaf(x) for x in pytree.tree_leaves((sample.input, *sample.args))]
    for key, value in sample.kwargs.items():
        parts.append(key + "".join(describe_leaf(x) for x in pytree.tree_leaves(value)) if pytree.tree_leaves(value)
                     else f"{key}None")
    text = re.sub(r"_+", "_", "_".join(re.sub(r"[^A-Za-z0-9.+-]", "", p) for p in parts)).strip("_") or "noargs"
    if len(text) > _MAX_DESCRIPTION:
        text = f"{text[:_MAX_DESCRIPTION - 9]}_{zlib.crc32(text.encode()) & 0xFFFFFFFF:08x}"
    return text


def opinfo_cases(names: list[str] | None = None, *, backend: str = "cpu", cap: Any = "env") -> list[Case]:
    """The OpInfo cases (CPU samples, the dtypes of :func:`entry_dtypes`) of ``names`` (default
    :data:`OPINFO_OPS`), the first ``cap`` samples of each entry and dtype (``"env"``:
    :func:`sample_cap`; None: all). Raises
    :class:`OpInfoUnavailable` when torch's database is missing."""
    import torch

    from ..equivalence.callable_module import has_tensor_argument
    from .kept_samples import keep

    cap = sample_cap() if cap == "env" else cap
    selected = shard()
    db = op_db()
    out = []
    for name in names or OPINFO_OPS:
        op = db.get(name)
        if op is None or NOT_COMPARABLE.search(name):
            continue
        for dtype in entry_dtypes(name):
            if dtype != "float32" and getattr(torch, dtype) not in op.supported_dtypes("cpu"):
                continue  # torch itself has no such computation: no case
            try:
                samples = _samples(name, dtype, limit=cap)
            except Exception:  # noqa: BLE001 - an entry without samples of this dtype on this build
                continue
            backward = bool(op.supports_autograd) and getattr(torch, dtype) in op.supported_backward_dtypes("cpu")
            for index, sample in enumerate(samples):
                if not has_tensor_argument((sample.input, *sample.args), sample.kwargs):
                    continue  # nothing to feed the Aidge graph: no case (verify refuses it)
                label = _label(index, sample, dtype)
                if not in_shard(f"opinfo_{name}_{label}", selected):
                    continue
                keep("opinfo", (name, dtype), index, sample)  # for the child that runs the case
                out.append(on_backend(Case(
                    id=f"opinfo_{name}_{label}", op_class=f"opinfo:{name}", operator=name, path=label,
                    source="opinfo", kind="opinfo", backend=backend, test_backward=backward,
                    training=False, params={"opinfo": name, "index": index, "dtype": dtype})))
    return out


def opinfo_sample(case: Case):
    """``(fn, args, kwargs)`` of an OpInfo case: its sample regenerated, checked against the
    description in its id."""
    from .kept_samples import kept_or_generated

    name, index, dtype = case.params["opinfo"], case.params["index"], case.params.get("dtype", "float32")
    sample = kept_or_generated("opinfo", (name, dtype), index, lambda: _samples(name, dtype, limit=index + 1)[index])
    label = normalized_label(_label(index, sample, dtype))
    if label != case.label:
        raise RuntimeError(f"{case.id}: OpInfo sample {index} of {name} is now {label!r}: the sample list "
                           f"changed (torch upgraded?), the case id no longer describes it")
    return op_db()[name].op, (sample.input, *sample.args), dict(sample.kwargs)


def run_opinfo_case(case: Case) -> dict:
    """The check of one OpInfo case, in this process (:func:`interop.equivalence.verdict.check_callable`)."""
    from ..equivalence.callable_check import check_callable

    fn, args, kwargs = opinfo_sample(case)
    return check_callable(fn, args, kwargs, backward=case.test_backward, backend=case.backend,
                          tolerance=case.tolerance, name=case.id)


def survey() -> list[str]:
    """The OpInfo entries with float32 CPU samples whose first sample exports to ONNX, plus
    every entry of :data:`CATALOG_OPINFO` (how :data:`OPINFO_OPS` was made)."""
    import torch

    from ..equivalence.isolation import run_isolated

    covered = {n for names in CATALOG_OPINFO.values() for n in names}
    keep = []
    for name, op in op_db().items():
        if NOT_COMPARABLE.search(name):
            continue
        if name in covered:
            keep.append(name)
            continue
        try:
            if torch.float32 in op.supported_dtypes("cpu") and run_isolated(_exports, name, timeout=60):  # the exporter itself can crash (SIGFPE)
                keep.append(name)
        except Exception:  # noqa: BLE001 - does not export: not in the source
            continue
    return keep


def _exports(name: str) -> bool:
    from ..bridge.onnx_export import export_to_onnx
    from ..equivalence.callable_module import as_module

    sample = _samples(name, limit=1)[0]
    module, tensors = as_module(op_db()[name].op, (sample.input, *sample.args), sample.kwargs)
    if tensors:
        export_to_onnx(module, [x.detach() for x in tensors])
    return bool(tensors)


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--survey"]:
        sys.stdout.write("OPINFO_OPS = (\n" + "".join(f"    {n!r},\n" for n in survey()) + ")\n")
