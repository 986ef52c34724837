// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/memset_simplification/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=2048 --gridDim=64
// jpipeline label: RACE_FREE; launch used here: grid (2), block (16); dims reduced from 2048x64

struct s {
  float x, y, z;
};

__global__ void foo(s *q) {
  s p = { 0.0f, 0.0f, 0.0f };
  q[threadIdx.x + blockIdx.x * blockDim.x] = p;
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    foo<<<G, B>>>((s *) devBytes(32 * sizeof(s)));
    return finish();
}
