// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/align/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=2 --gridDim=2 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (2), block (2)

#include <cuda.h>

typedef struct __align__(64) {
  unsigned int tid, bid;
} pair;

__global__ void align_test (pair* A)
{
  int tid = threadIdx.x;
  int bid = blockIdx.x;

  int idx = blockDim.x * bid + tid;

  A[idx].tid = tid;
  A[idx].bid = bid;
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(2);
    align_test<<<G, B>>>((pair *) devBytes(4 * sizeof(pair)));
    return finish();
}
