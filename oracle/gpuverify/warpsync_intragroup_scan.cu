// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/warpsync/intragroup_scan/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=512 --gridDim=1 --warp-sync=32 --no-inline
// jpipeline label: ASSUMED_RACE_FREE; launch used here: grid (1), block (64); blockDim reduced from 512; passes only with --warp-sync=32 (lanes in lockstep), which sm_70+ does not give

#include <cuda.h>

__device__ static __attribute__((always_inline)) void scan_warp (int* A)
{
	unsigned int tid = threadIdx.x;
	unsigned int lane = tid % 32;

	if (lane >= 1) A[tid] = A[tid - 1] + A[tid];
	if (lane >= 2) A[tid] = A[tid - 2] + A[tid];
	if (lane >= 4) A[tid] = A[tid - 4] + A[tid];
	if (lane >= 8) A[tid] = A[tid - 8] + A[tid];
	if (lane >= 16) A[tid] = A[tid - 16] + A[tid];
}

__global__ void scan (int* A)
{
	unsigned int tid = threadIdx.x;
	unsigned int lane = tid % 32;
	int temp [32];
	scan_warp(A);
	__syncthreads();
	if (lane == 31)
		temp[tid / 32] = A[tid];
	__syncthreads();
	if (tid / 32 == 0)
		scan_warp(temp);
	__syncthreads();
	A[tid] += temp[tid/32];
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(64);
    scan<<<G, B>>>(devArray<int>(64));
    return finish();
}
