// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/atomics/add_zero/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//xfail:NOT_ALL_VERIFIED
//--blockDim=2 --gridDim=1 --no-inline
// jpipeline label: RACY; launch used here: grid (1), block (2)

#include <cuda.h>

__global__ void race_test (unsigned int* i, int* A)
{
  int tid = threadIdx.x;
  int j = atomicAdd(i,0);
  A[j] = tid;
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(2);
    race_test<<<G, B>>>(devArray<unsigned int>(1, 0), devArray<int>(2));
    return finish();
}
