// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/fail_tests/race_on_shared/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//xfail:NOT_ALL_VERIFIED
//--blockDim=16 --gridDim=1 --no-inline
//
// jpipeline label: RACY; launch used here: grid (1), block (16)

#include <cuda.h>


__global__ void foo()
{
  __shared__ int A[16];

  A[0] = threadIdx.x;

}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(16);
    foo<<<G, B>>>();
    return finish();
}
