// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/pointeranalysistests/testbasicaliasing/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//xfail:NOT_ALL_VERIFIED
//--blockDim=64 --gridDim=64 --no-inline
//
// jpipeline label: RACY; launch used here: grid (2), block (16); dims reduced from 64x64

#include "cuda.h"

__global__ void foo (int* p, int* q, int* r){

    int a, b, c;
    int* d;

    a = 10;

    d = &a;
    d = &b;

    if (a > 10)
    {
        d = &c;
    }
    else
    {
        p = q;
        q = p;
    }

    d[1] = 200;

    p[100] = q[100] + 1;

}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(2), B = dim3(16);
    foo<<<G, B>>>(devArray<int>(101), devArray<int>(101), devArray<int>(101));
    return finish();
}
