// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/barrierconditionalkernelparam/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=64 --gridDim=64 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (2), block (16); dims reduced from 64x64; x = 0, so every thread reaches the barrier

#include "cuda.h"

__global__ void foo(int x) {
  if (x == 0) {
      __syncthreads ();
  }
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    foo<<<G, B>>>(0);
    return finish();
}
