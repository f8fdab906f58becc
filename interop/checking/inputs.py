"""The model and the inputs :func:`interop.check.check` is given, the porter's own: the factory
loaded in a forked child (:func:`load_model`), one torch forward there (:func:`probe_forward`), a
failure of either the model's (:class:`ModelError`); shapes and dtypes parsed
(:func:`parse_shape`, :func:`parse_dtype`), their size and the timeout checked
(:func:`check_input_size`, :func:`check_timeout`), the seeded inputs (:func:`make_inputs`)."""
from __future__ import annotations

import importlib
import math
import os
import re
from typing import Any, Sequence

from ..errors import AidgeCrash


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
    child's memory bound (:func:`interop.equivalence.isolation_memory.memory_bound`,
    ``INTEROP_CASE_MEMORY``; half the physical memory by default or when the bound is off)."""
    from ..equivalence.isolation_memory import memory_bound

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

    from ..equivalence.isolation import run_isolated

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
    from ..equivalence.isolation import run_isolated

    what = f"the model's torch forward on {_shapes_text(inputs)}"
    try:
        run_isolated(_torch_forward, model, inputs, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - every failure of torch's own forward is the model's
        raise (_died(exc, what, timeout) or ModelError(f"{what} raised {_first_line(exc)}")) from None


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
