// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/mul24/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=1024 --gridDim=1024 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (2), block (16); dims reduced from 1024x1024

#include <cuda.h>

__global__ void mul24_test (int* A, int* B)
{
  int idxa          = __mul24(blockIdx.x, blockDim.x) + threadIdx.x;
  unsigned int idxb = __umul24(blockIdx.x, blockDim.x) + threadIdx.x;

  A[idxa] = idxa;
  B[idxb] = idxa;
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    mul24_test<<<G, B>>>(devArray<int>(32), devArray<int>(32));
    return finish();
}
