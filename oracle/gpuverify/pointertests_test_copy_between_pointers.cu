// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/pointertests/test_copy_between_pointers/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=64 --gridDim=64 --equality-abstraction --no-inline
// jpipeline label: ASSUMED_RACE_FREE; launch used here: grid (2), block (16); dims reduced from 64x64; passes only because GPUVerify takes writes of one value by all threads as benign

#include "cuda.h"

__global__ void foo(int* p) {

  __shared__ int A[10];

  int* x;

  x = p;

  x[0] = 0;

  x = A;

  x[0] = 0;

}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    foo<<<G, B>>>(devArray<int>(1));
    return finish();
}
