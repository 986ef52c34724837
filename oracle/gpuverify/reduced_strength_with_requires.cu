// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/reduced_strength_with_requires/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=1024 --gridDim=1 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (1), block (16); blockDim reduced from 1024; sz = blockDim (its __requires)

#include <cuda.h>


__global__ void foo(float *A, int sz) {
  for(int i = threadIdx.x; i < 100*sz; i += sz) {
    A[i] *= 2.0f;
  }
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(16);
    foo<<<G, B>>>(devArray<float>(1600), 16);
    return finish();
}
