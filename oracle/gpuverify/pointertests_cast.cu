// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/pointertests/cast/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//xfail:NOT_ALL_VERIFIED
//--blockDim=32 --gridDim=64 --no-inline
//error: possible write-write race on
// jpipeline label: RACY; launch used here: grid (2), block (16); dims reduced from 32x64

#include "cuda.h"

#define N 32


__global__ void foo(int* p) {
  __shared__ unsigned char x[N];

  for (unsigned int i=0; i<(N/4); i++) {
    ((unsigned int *)x)[i] = threadIdx.x;
  }
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    foo<<<G, B>>>(devArray<int>(32));
    return finish();
}
