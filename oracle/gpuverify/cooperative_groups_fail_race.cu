// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/cooperative_groups/fail/race/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//xfail:NOT_ALL_VERIFIED
//--blockDim=32 --gridDim=2
// jpipeline label: RACY; launch used here: grid (2), block (32)

#include <cooperative_groups.h>
// GPUVerify models cooperative_groups::sync as synchronize(group)
namespace cooperative_groups {
template <class Group> __device__ void synchronize(Group g) { g.sync(); }
}

#include <cuda.h>

__global__ void race (int* A)
{
  int tid = threadIdx.x;
  int bid = blockIdx.x;

  int idx = blockDim.x * bid + tid;

  int temp = A[idx + 1];
  A[idx] = temp;
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(32);
    race<<<G, B>>>(devArray<int>(65));
    return finish();
}
