"""The callable :func:`~interop.equivalence.verdict.verify` checks, as a module whose inputs are its
tensor arguments (:func:`as_module`, :func:`has_tensor_argument`), the second input set of the
forward's second call (:func:`other_inputs`) and the inputs a gradient is checked for."""
from __future__ import annotations

_SEED = 0


def _flat_arguments(args, kwargs):
    from torch.utils import _pytree as pytree

    return pytree.tree_flatten((tuple(args), dict(kwargs)))


def has_tensor_argument(args, kwargs) -> bool:
    """Whether a call has a tensor among its arguments, nested or not: the graph inputs
    :func:`check_callable` feeds Aidge (without one it refuses the call)."""
    import torch

    return any(isinstance(leaf, torch.Tensor) for leaf in _flat_arguments(args, kwargs)[0])


def as_module(fn, args, kwargs):
    """``(module, tensors)``: ``module(*tensors)`` calls ``fn(*args, **kwargs)`` with the
    tensor leaves replaced by its inputs."""
    import torch
    from torch.utils import _pytree as pytree

    leaves, spec = _flat_arguments(args, kwargs)
    positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
    tensors = [leaves[i] for i in positions]
    constants = [None if i in positions else leaf for i, leaf in enumerate(leaves)]

    class CallableModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            if isinstance(fn, torch.nn.Module):
                self.fn = fn
            else:
                object.__setattr__(self, "fn", fn)

        def forward(self, *inputs):
            values = list(constants)
            for i, x in zip(positions, inputs):
                values[i] = x
            a, kw = pytree.tree_unflatten(values, spec)
            return self.fn(*a, **kw)

    module = CallableModule()
    if isinstance(fn, torch.nn.Module):
        # the wrapper's own flag only: module.train() would recurse into fn and change the
        # modes of its submodules (the caller's model, and what torch computes)
        module.training = fn.training
    return module, tensors


def other_inputs(tensors):
    """A second input set of the same shapes and dtypes: float tensors permuted with a
    fixed seed (same values, other positions; a single element is halved), others kept."""
    import torch

    gen = torch.Generator().manual_seed(_SEED + 1)
    out = []
    for x in tensors:
        if not x.is_floating_point():
            out.append(x)
        elif x.numel() <= 1:
            out.append(x.detach() * 0.5)
        else:
            flat = x.detach().reshape(-1)
            out.append(flat[torch.randperm(flat.numel(), generator=gen)].reshape(x.shape).clone())
    return out


def _grad_mask(tensors, backward: bool) -> list[bool]:
    wanted = [x.is_floating_point() and x.requires_grad for x in tensors]
    if backward and not any(wanted):
        wanted = [x.is_floating_point() for x in tensors]
    return [w and backward for w in wanted]


def _differentiable(module, tensors, mask) -> list[bool]:
    """``mask`` without the inputs torch refuses a gradient for (``SoftMarginLoss``'s target:
    "not differentiable with respect to argument 'target'"): left out of the gradient check,
    never a reason for no verdict. Probed only when torch refuses the whole mask."""
    import torch

    def accepted(m) -> bool:
        try:
            with torch.random.fork_rng(devices=[]):
                module(*_fresh(tensors, m))
            return True
        except RuntimeError as exc:
            text = str(exc)
            if "not differentiable with respect to argument" in text or (
                    "the derivative for" in text and "is not implemented" in text):
                return False
            return True  # another failure of torch's: the check itself reports it
        except Exception:  # noqa: BLE001 - idem
            return True

    if not any(mask) or accepted(mask):
        return mask
    return [m and accepted([k == i for k in range(len(mask))]) for i, m in enumerate(mask)]


def _fresh(tensors, mask):
    return [x.detach().clone().requires_grad_(m) for x, m in zip(tensors, mask)]
