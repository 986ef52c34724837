// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/misc/pass/misc8/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=1024 --gridDim=1
// jpipeline label: RACE_FREE; launch used here: grid (1), block (32); blockDim reduced from 1024; c = 1

__device__ void bar(char **in, char **out) {
  char tmp = (*in)[threadIdx.x];
  out[0][threadIdx.x] = tmp;
  *out = *in;
}

__global__ void foo(char *A, char *B, char c)
{
  char *choice1 = c ? A : B;
  char *choice2 = c ? B : A;
  bar(&choice1, &choice2);
  bar(&choice1, &choice2);
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(32);
    foo<<<G, B>>>(devArray<char>(32), devArray<char>(32), 1);
    return finish();
}
