// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/memset/initstruct/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--gridDim=1 --blockDim=32 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (1), block (16); blockDim reduced from 32

__global__ void kernel(uint4 *out) {
  uint4 vector = {0,0,0,0};
  out[threadIdx.x] = vector;
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(16);
    kernel<<<G, B>>>((uint4 *) devBytes(16 * sizeof(uint4)));
    return finish();
}
