// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/fresh_arrays/fail/struct_float/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//xfail:NOT_ALL_VERIFIED
//--blockDim=2048 --gridDim=64
//possible write-write race on q.p\[0\]
// jpipeline label: RACY; launch used here: grid (2), block (16); dims reduced from 2048x64 (2048 threads per block is not a valid CUDA launch)

struct s {
  float *p;
};

__global__ void foo(s q) {
  q.p[0] = threadIdx.x;
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    s q; q.p = devArray<float>(64);
    foo<<<G, B>>>(q);
    return finish();
}
