// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/large_constant_array/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=2048 --gridDim=2 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (2), block (32); blockDim reduced from 2048 (not a valid CUDA launch)

__constant__ int A[4096];
__constant__ int B[3] = {0,1,2};

__global__ void kernel() {
  int x = A[threadIdx.x] + B[0];
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(32);
    kernel<<<G, B>>>();
    return finish();
}
