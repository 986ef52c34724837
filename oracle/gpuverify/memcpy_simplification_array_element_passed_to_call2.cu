// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/memcpy_simplification/array_element_passed_to_call2/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=256 --gridDim=128
// jpipeline label: RACE_FREE; launch used here: grid (2), block (16); dims reduced from 256x128; bar, only declared in GPUVerify, is given an empty body so that it links

struct s {
  int a;
};

__device__ void bar(s x) {}  // body added: see README

__global__ void foo(s *x)
{
  bar(x[1]);
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    foo<<<G, B>>>((s *) devArray<int>(2));
    return finish();
}
