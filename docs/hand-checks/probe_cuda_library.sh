#!/bin/bash
# What aidge-backend-cuda 0.10.1's library (lib_aidge_backend_cuda.so from the cp312 wheel) needs on
# the lent GPU machine, and what is there.
SO=${1:?usage: probe_cuda_library.sh PATH/lib_aidge_backend_cuda.so (unzipped from the aidge-backend-cuda wheel)}
echo "== GPU"; nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader
echo "== python3's torch"; python3 -c "import torch, sys; print(sys.version.split()[0], torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())"
echo "== nvcc"; nvcc --version | tail -2
echo "== what the library needs and the loader does not find"; ldd $SO | grep -E "not found"
echo "== CUDA 12 / cuDNN 9 libraries anywhere on the machine"
find / -xdev \( -name "libcudart.so.12*" -o -name "libcublas.so.12*" -o -name "libcublasLt.so.12*" -o -name "libcudnn.so.9*" -o -name "libcudart.so.13*" -o -name "libcublas.so.13*" \) 2>/dev/null | grep -v "^/proc" | head -20
echo "== GPU code in the library (cuobjdump)"
cuobjdump --list-elf $SO 2>&1 | grep -oE "sm_[0-9]+a?" | sort | uniq -c
cuobjdump --list-ptx $SO 2>&1 | grep -oE "sm_[0-9]+a?" | sort | uniq -c
cuobjdump --list-elf $SO 2>&1 | head -3
