// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/basicglobalarray/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=64 --gridDim=1 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (1), block (32); blockDim reduced from 64

#include "cuda.h"


__global__ void foo(int* p) {
    p[threadIdx.x] = 2;
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(32);
    foo<<<G, B>>>(devArray<int>(32));
    return finish();
}
