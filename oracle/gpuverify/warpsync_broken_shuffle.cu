// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/warpsync/broken_shuffle/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//xfail:NOT_ALL_VERIFIED
//--blockDim=1024 --gridDim=1 --warp-sync=16 --no-inline
// jpipeline label: RACY; launch used here: grid (1), block (64); dims reduced from 1024x1

#include <cuda.h>

__global__ void shuffle (int* A)
{
	int tid = threadIdx.x;
	int warp = tid / 32;
	int* B = A + (warp*32);
	A[tid] = B[(tid + 1)%32];
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(64);
    shuffle<<<G, B>>>(devArray<int>(64));
    return finish();
}
