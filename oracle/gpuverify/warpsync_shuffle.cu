// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/warpsync/shuffle/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=512 --gridDim=1 --warp-sync=32 --no-inline
// jpipeline label: ASSUMED_RACE_FREE; launch used here: grid (1), block (64); blockDim reduced from 512; passes only with --warp-sync=32 (lanes in lockstep), which sm_70+ does not give

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
