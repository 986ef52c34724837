// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/pointeranalysistests/testinterprocedural3/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=64 --gridDim=64 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (2), block (16); dims reduced from 64x64; *q = 1

#include "cuda.h"

__device__ void baz (int p []){
    int a;

    p = &a;
}

__device__ void bar (int *p){
  
    int a;

    p = &a;
}


__global__ void foo (int* p, int* q){

    __shared__ int sharedArr  [100];

    __shared__ int sharedArr2 [50];

    bar(p);

    baz (sharedArr);

    bar(q);

    if (*q){
        baz(sharedArr2);
    }
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    foo<<<G, B>>>(devArray<int>(1), devArray<int>(1, 1));
    return finish();
}
