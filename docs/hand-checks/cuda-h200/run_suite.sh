#!/bin/bash
# The suite's operators on backend="cuda" on the lent GPU machine (Python 3.12, torch 2.11+cu130):
# Aidge 0.10.1 from carried cp312 wheels, aidge-backend-cuda's library beside a libcudart.so.12
# (nvidia-cuda-runtime-cu12) and a libcublas.so.12 shim that jumps into the machine's cuBLAS 13.
R=$(pwd)
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .gpu/whl/*.whl || exit 9
cp -r .gpu/cuda/* /tmp/site/
CURAND=$(find / -xdev -name "libcurand.so.10*" 2>/dev/null | grep -v "^/proc" | head -1); echo "curand: $CURAND"
ln -sf "$CURAND" /tmp/site/aidge_backend_cuda.libs/libcurand-dab8074b.so.10.3.5.147
CU13=$(dirname $(find / -xdev -name "libcublas.so.13" 2>/dev/null | grep -v "^/proc" | head -1))
export LD_LIBRARY_PATH=$R/.gpu/lib:$CU13:/usr/local/cuda-13.0/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYTHONPATH=/tmp/site:$R OMP_NUM_THREADS=1 PYTHONHASHSEED=0 PYTHONUNBUFFERED=1
ldd /tmp/site/aidge_backend_cuda/lib_aidge_backend_cuda.so | grep -E "not found|cublas|cudart|cudnn|curand"
python3 - <<'P'
import importlib.metadata as md, torch
print("torch", torch.__version__, torch.cuda.get_device_name(0))
import aidge_core, aidge_backend_cuda
print("aidge", md.version("aidge_core"), "backends", aidge_core.Tensor.get_available_backends())
from interop.bridge.cuda import cuda_available
print("cuda_available:", cuda_available())
P
timeout ${SUITE_S:-400} python3 -m pytest -p interop.pytest_plugin --backend=cuda -n 8 -q -p no:cacheprovider \
  --records $OUT/rec "$@" 2>&1 | tail -n 60
echo "pytest exit ${PIPESTATUS[0]}"
(cd $OUT/rec 2>/dev/null && ls -la)
python3 - <<'P'
import json, os, collections
p = os.path.join(os.environ["OUT"], "rec", "records.jsonl")
if os.path.exists(p):
    recs = [json.loads(l) for l in open(p)]
    print(len(recs), "records", collections.Counter(r["outcome"] for r in recs))
    c = collections.Counter((r["outcome"], r.get("category"), r.get("phase"), (r.get("error") or "")[:110]) for r in recs if r["outcome"] != "passed")
    for k, v in c.most_common(25): print(v, k)
P
