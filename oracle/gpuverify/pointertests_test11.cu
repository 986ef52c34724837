// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/pointertests/test11/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=10 --gridDim=64 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (2), block (10); gridDim reduced from 64

#include "cuda.h"


__device__ void bar(int* p) {
  p[threadIdx.x] = 0;
}


__global__ void foo() {

  __shared__ int A[10];

  int* p = A;

  bar(p);

}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(10);
    foo<<<G, B>>>();
    return finish();
}
