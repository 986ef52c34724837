// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/reduced_strength_blockwise/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=256 --gridDim=2 -DWIDTH=2064 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (2), block (16); blockDim reduced from 256, WIDTH from 2064 to 40 (still not a multiple of blockDim)

#define WIDTH 40
#include <cuda.h>

/*
 * This kernel demonstrates a blockwise strength-reduction loop.
 * Each block is given a disjoint partition (of length WIDTH) of A.
 * Then each thread writes multiple elements in the partition.
 * It is not necessarily the case that WIDTH%blockDim.x == 0
 */

__global__ void k(int *A) {
#ifdef BLOCK_DIVIDES_WIDTH
#endif

  for (int i=threadIdx.x; 

#ifndef BLOCK_DIVIDES_WIDTH
    // working set(1) using global invariants
#else
    // working set(2) iff WIDTH % blockDim.x == 0
#endif

    i<WIDTH; i+=blockDim.x) {
    A[blockIdx.x*WIDTH+i] = i;
  }

#ifdef FORCE_FAIL
#endif
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    k<<<G, B>>>(devArray<int>(2 * WIDTH));
    return finish();
}
