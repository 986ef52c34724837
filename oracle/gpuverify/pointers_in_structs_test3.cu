// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/pointers_in_structs/test3/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=2 --gridDim=2
// jpipeline label: RACE_FREE; launch used here: grid (2), block (2)

struct S {
  struct {
    int * p;
  } s;
};

__global__ void foo(struct S A) {
  A.s.p[threadIdx.x + blockDim.x*blockIdx.x] = threadIdx.x;
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(2);
    S a; a.s.p = devArray<int>(4);
    foo<<<G, B>>>(a);
    return finish();
}
