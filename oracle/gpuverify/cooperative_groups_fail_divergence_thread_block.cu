// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/cooperative_groups/fail/divergence_thread_block/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//xfail:NOT_ALL_VERIFIED
//--blockDim=32 --gridDim=1
// jpipeline label: BARRIER_DIVERGENCE; launch used here: grid (1), block (32)

#include <cooperative_groups.h>
// GPUVerify models cooperative_groups::sync as synchronize(group)
namespace cooperative_groups {
template <class Group> __device__ void synchronize(Group g) { g.sync(); }
}

#include <cuda.h>

using namespace cooperative_groups;

__global__ void race (int* A)
{
  int tid = threadIdx.x;
  int bid = blockIdx.x;

  thread_block t = this_thread_block();
  int idx = blockDim.x * bid + tid;

  if (idx % 2 == 0)
  {
	  int temp = A[idx + 2];
	  synchronize(t);
	  A[idx] = temp;
  }
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(32);
    race<<<G, B>>>(devArray<int>(34));
    return finish();
}
