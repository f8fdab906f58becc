# Shim: PyPI torchvision 0.28.0 beside torch 2.13.0+cpu fails at import with
# "operator torchvision::nms does not exist" from torch.library.register_fake.
# Wrap register_fake so that failure is ignored (the fake kernels are only for tracing nms/roi ops).
try:
    import torch.library as _tl
    _orig = _tl.register_fake
    def _safe_register_fake(op, func=None, /, *args, **kwargs):
        try:
            r = _orig(op, func, *args, **kwargs)
        except RuntimeError as e:
            if "does not exist" in str(e) and "torchvision::" in str(op):
                r = None
                if func is None:
                    return lambda f: f
                return func
            raise
        if func is None:
            def deco(f):
                try:
                    return r(f)
                except RuntimeError as e:
                    if "does not exist" in str(e):
                        return f
                    raise
            return deco
        return r
    _tl.register_fake = _safe_register_fake
except Exception:
    pass
