// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/noraceduetoreturn/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=64 --gridDim=1 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (1), block (32); blockDim reduced from 64

#include "cuda.h"


__device__ int bar(float* A) {

  if(threadIdx.x != 0) {
    return 0;
  }

  A[4] = 26.8f;

  return 1;

}

__global__ void foo(float* A) {

  int y = bar(A);

}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(32);
    foo<<<G, B>>>(devArray<float>(8));
    return finish();
}
