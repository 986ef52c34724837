// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/param_values/value_causing_race/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//xfail:NOT_ALL_VERIFIED
//--gridDim=1 --blockDim=512 --no-inline
//Write by thread 200
//Write by thread 15
//x = 185
// jpipeline label: RACY; launch used here: grid (1), block (256); blockDim reduced from 512 to 256 (threads 15 and 200 still exist); x = 185, the value GPUVerify names

__global__ void example(float * A, int x) {

    if(threadIdx.x == 15) {
        A[threadIdx.x + x] = threadIdx.x;
    }

    if(threadIdx.x == 200) {
        A[threadIdx.x] = threadIdx.x;
    }
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(256);
    example<<<G, B>>>(devArray<float>(256), 185);
    return finish();
}
