// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/loop_unwind/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//xfail:NOT_ALL_VERIFIED
//--blockDim=512 --gridDim=64 --loop-unwind=2 --no-inline
//kernel.cu: error: possible write-write race on B
// jpipeline label: RACY; launch used here: grid (2), block (16); dims reduced from 512x64

#include <cuda.h>

extern "C" {

__global__ void helloCUDA(float *A)
{
    __shared__ float B[256];
    for(int i = 0; i < 10; i ++) {
        B[i] = A[i];
    }

}

}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    helloCUDA<<<G, B>>>(devArray<float>(10));
    return finish();
}
