#!/bin/bash
# Why the suite's CUDA path fails on a GPU: fork after CUDA use, and the in-process failures.
R=$(pwd)
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .gpu/whl/*.whl 2>/dev/null || exit 9
cp -r .gpu/cuda/* /tmp/site/
CURAND=$(find / -xdev -name "libcurand.so.10*" 2>/dev/null | grep -v "^/proc" | head -1)
ln -sf "$CURAND" /tmp/site/aidge_backend_cuda.libs/libcurand-dab8074b.so.10.3.5.147
CU13=$(dirname $(find / -xdev -name "libcublas.so.13" 2>/dev/null | grep -v "^/proc" | head -1))
export LD_LIBRARY_PATH=$R/.gpu/lib:$CU13:/usr/local/cuda-13.0/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYTHONPATH=/tmp/site:$R OMP_NUM_THREADS=1 PYTHONHASHSEED=0 PYTHONUNBUFFERED=1
echo "== 1. fork after what, in the parent"
for v in import is_available nvml_is_available aidge_probe torch_tensor; do
  python3 .gpu/fork_probe.py $v 2>&1 | tail -n 2
done
echo "== 2. where the parent first initialises torch's CUDA (isolation on, one case, in-process pytest)"
timeout 120 python3 .gpu/first_cuda_init.py 2>&1 | tail -n 40
echo "== 3. the in-process failures with their tracebacks"
INTEROP_ISOLATE=0 timeout 200 python3 -m pytest -p interop.pytest_plugin --backend=cuda -q -p no:cacheprovider --tb=long \
  tests/test_operators.py -k "Conv2D_attributes_kernel_square" -x 2>&1 | grep -vE "^\s*$" | tail -n 70
INTEROP_ISOLATE=0 CUDA_LAUNCH_BLOCKING=1 timeout 120 python3 -m pytest -p interop.pytest_plugin --backend=cuda -q -p no:cacheprovider --tb=long \
  tests/test_operators.py -k "ReduceMax" -x 2>&1 | grep -vE "^\s*$" | tail -n 60
