// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/basicbarrier/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=64 --gridDim=64 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (2), block (16); dims reduced from 64x64

#include "cuda.h"

__global__ void foo() {
  int a, b, c;
  a = 2;
  b = 3;
  c = a + b;
  __syncthreads ();
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    foo<<<G, B>>>();
    return finish();
}
