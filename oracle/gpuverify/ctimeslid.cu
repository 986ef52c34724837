// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/ctimeslid/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=64 --gridDim=16 -DWIDTH=256 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (2), block (16); dims reduced from 64x16, WIDTH from 256 to 8; the shared array shrunk from 16384 to 128 (64 KiB of static shared memory does not compile)

#define WIDTH 8
/*
 * Each thread writes to a shared array and updates indicies [256*tid, 256*(tid+1)).
 * Test that GPUVerify generates a CTimesLid invariant.
 */

__global__ void k() {
  __shared__ unsigned int A[16 * WIDTH]  /* was A[16384]: see README */;

  for (unsigned int i=0; i<WIDTH; i++) {
    A[i+threadIdx.x*WIDTH] = threadIdx.x;
  }

#ifdef FORCE_FAIL
#endif
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    k<<<G, B>>>();
    return finish();
}
