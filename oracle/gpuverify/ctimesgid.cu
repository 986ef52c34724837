// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/ctimesgid/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=64 --gridDim=16 -DWIDTH=256 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (2), block (16); dims reduced from 64x16, WIDTH from 256 to 8

#define WIDTH 8
/*
 * Each thread writes to a global array and updates indicies [256*gid, 256*(gid+1)).
 * Test that GPUVerify generates a CTimesGid invariant.
 */

__global__ void k(unsigned int *A) {

  unsigned gid = threadIdx.x + (blockIdx.x * blockDim.x);
  for (unsigned int i=0; i<WIDTH; i++) {
    A[i+gid*WIDTH] = gid;
  }

#ifdef FORCE_FAIL
#endif
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    k<<<G, B>>>(devArray<unsigned int>(32 * WIDTH));
    return finish();
}
