// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/store_in_byval_function/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=2048 --gridDim=64
// jpipeline label: RACE_FREE; launch used here: grid (2), block (16); dims reduced from 2048x64

class s {
 int *p;

public:
 __device__ void store(int val) {
   p[threadIdx.x + blockDim.x * blockIdx.x] = val;
 }
};

__global__ void foo(s q) {
  q.store(42);
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    int *p = devArray<int>(32);
    s q; memcpy(&q, &p, sizeof p);  // s has one private member, int *p
    foo<<<G, B>>>(q);
    return finish();
}
