/* libcublas.so.12 for aidge-backend-cuda 0.10.1 on a CUDA 13 machine: the 9 cuBLAS functions the
   Aidge library calls, each a jump to the same function of libcublas.so.13 (same C signature in
   both: the v2 API). Built only to run the suite on a lent GPU machine that has no CUDA 12 cuBLAS;
   not part of the suite. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#define NAMES X(cublasCreate_v2) X(cublasDgemmStridedBatched) X(cublasDgemm_v2) X(cublasDgemv_v2) \
  X(cublasHgemm) X(cublasHgemmStridedBatched) X(cublasSgemmStridedBatched) X(cublasSgemm_v2) X(cublasSgemv_v2)
#define X(n) void *n##_ptr;
NAMES
#undef X
#define X(n) __asm__(".globl " #n "\n.type " #n ",@function\n" #n ":\n jmp *" #n "_ptr(%rip)\n");
NAMES
#undef X
__attribute__((constructor)) static void load(void) {
  void *h = dlopen("libcublas.so.13", RTLD_NOW | RTLD_GLOBAL);
  if (!h) { fprintf(stderr, "cublas shim: %s\n", dlerror()); abort(); }
#define X(n) n##_ptr = dlsym(h, #n); if (!n##_ptr) { fprintf(stderr, "cublas shim: no %s\n", #n); abort(); }
  NAMES
#undef X
}
