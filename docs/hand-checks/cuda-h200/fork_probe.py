import os, sys
import numpy as np
v = sys.argv[1]
if v == "nvml_is_available":
    os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
import torch
import aidge_core, aidge_backend_cuda  # noqa: F401
if v in ("is_available", "nvml_is_available"):
    torch.cuda.is_available()
if v == "aidge_probe":
    t = aidge_core.Tensor(np.zeros((1,), np.float32)); t.set_backend("cuda", 0); t.set_backend("cpu", 0)
if v == "torch_tensor":
    torch.ones(1, device="cuda")
pid = os.fork()
if pid == 0:
    out = []
    try:
        a = aidge_core.Tensor(np.ones((2,), np.float32)); a.set_backend("cuda", 0); a.set_backend("cpu", 0); out.append("aidge ok")
    except Exception as e:
        out.append(f"aidge FAILED {type(e).__name__}: {str(e)[:120]}")
    try:
        out.append(f"torch ok {torch.ones(3, device='cuda').sum().item()}")
    except Exception as e:
        out.append(f"torch FAILED {type(e).__name__}: {str(e)[:100]}")
    print(f"parent did {v!r} before the fork; child: " + "; ".join(out), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
