"""A torch model in the per-node profile: exported by the bridge in eval mode on its example call
(:func:`export_torch`), its own forward timed beside (:func:`torch_forward`), and both profiled by
:func:`~interop.node_profile.forward.profile_onnx` (:func:`profile_torch`)."""
from __future__ import annotations

from typing import Any, Sequence

from .forward import profile_onnx
from .records import _data_inputs

class _Call:
    """A torch module calling ``model(*args, **kwargs)`` with the tensors as its only inputs
    (non-tensor kwargs bound), returning the flat tuple of its output tensors."""

    def __new__(cls, model, n_args: int, tensor_kwargs: list[str], const_kwargs: dict):
        import torch

        class Call(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, *tensors):
                kwargs = dict(const_kwargs)
                kwargs.update(zip(tensor_kwargs, tensors[n_args:]))
                out = self.model(*tensors[:n_args], **kwargs)
                flat = []

                def walk(value):
                    if isinstance(value, torch.Tensor):
                        flat.append(value)
                    elif isinstance(value, (tuple, list)):
                        for v in value:
                            walk(v)
                    elif isinstance(value, dict):
                        for v in value.values():
                            walk(v)
                walk(out)
                return tuple(flat)

        return Call()


def profile_torch(model, args: Sequence, kwargs: dict | None = None, *, name: str = "", **options) -> dict[str, Any]:
    """:func:`profile_onnx` of ``model`` (put in eval mode; its modes are restored) exported by the
    bridge on the example call ``model(*args, **kwargs)``: tensors are the graph's inputs, other
    kwargs constants of the graph. ``args`` may also be input sizes (tuples of ints: random
    float32 inputs, seeded)."""
    from ..bridge.onnx_export_state import preserved_state

    proto, feeds, sizes, exporter = export_torch(model, args, kwargs)
    with preserved_state(model):
        result = profile_onnx(proto, feeds, name=name or type(model).__name__,
                              torch_call=torch_forward(model, args, kwargs), **options)
    result["exporter"] = exporter
    result["input_sizes"] = sizes
    return result


def torch_forward(model, args: Sequence, kwargs: dict | None = None):
    """``model`` put in eval mode, and a call of its forward on the inputs :func:`export_torch`
    exports it with (``args`` may be input sizes: the same seeded tensors)."""
    import torch

    args = list(args)
    if args and all(isinstance(a, (tuple, list)) and all(isinstance(d, int) for d in a) for a in args):
        generator = torch.Generator().manual_seed(0)
        args = [torch.randn(*a, generator=generator) for a in args]
    kwargs = dict(kwargs or {})
    model.eval()
    return lambda: model(*args, **kwargs)


def export_torch(model, args: Sequence, kwargs: dict | None = None):
    """``(proto, feeds, input sizes, exporter route)``: ``model`` in eval mode (its modes restored)
    exported by the bridge on ``model(*args, **kwargs)``, as :func:`profile_torch` profiles it."""
    import torch

    from ..bridge.onnx_export import export_to_onnx
    from ..bridge.onnx_export_state import preserved_state

    args = list(args)
    if args and all(isinstance(a, (tuple, list)) and all(isinstance(d, int) for d in a) for a in args):
        generator = torch.Generator().manual_seed(0)
        args = [torch.randn(*a, generator=generator) for a in args]
    kwargs = dict(kwargs or {})
    tensor_kwargs = [k for k, v in kwargs.items() if isinstance(v, torch.Tensor)]
    const_kwargs = {k: v for k, v in kwargs.items() if k not in tensor_kwargs}
    tensors = args + [kwargs[k] for k in tensor_kwargs]
    with preserved_state(model):
        model.eval()
        wrapped = model if not kwargs else _Call(model, len(args), tensor_kwargs, const_kwargs)
        with torch.no_grad():
            exported = export_to_onnx(wrapped, tensors, training=False)
    arrays = [t.detach().cpu().numpy() for t in tensors]
    used = set(_data_inputs(exported.proto))
    feeds = {n: a for n, a in zip(exported.input_names, arrays) if n in used}
    return exported.proto, feeds, [list(a.shape) for a in arrays], exported.exporter
