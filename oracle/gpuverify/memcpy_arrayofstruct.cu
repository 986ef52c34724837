// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/memcpy/arrayofstruct/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--gridDim=1 --blockDim=2 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (1), block (2)

//This kernel is race-free.
//
//It uses uses struct-assignment, which is translated into a memcpy by clang and
//dealt with as a series of reads/writes by bugle.

typedef struct {
  short x;
  short y;
} pair_t;

__global__ void k(pair_t *pairs) {
  pair_t fresh;
  pairs[threadIdx.x] = fresh;
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(2);
    k<<<G, B>>>((pair_t *) devBytes(2 * sizeof(pair_t)));
    return finish();
}
