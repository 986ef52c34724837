// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/misc/pass/misc1/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=512 --gridDim=1 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (1), block (64); blockDim reduced from 512; x = 143 (its __requires); F is read but never written (uninitialized)

#include <cuda.h>

__global__ void helloCUDA(int x)
{
    __shared__ float S[256*32];
    __shared__ float F[256];

    unsigned int idx;

    //initialise data on shared memory
    for(int i = 0;
            i < x;
            i += (blockDim.x/32))
    {
        if((i+(threadIdx.x/32)) < x){
            idx = (i+(threadIdx.x/32))*32+(threadIdx.x%32);
            S[idx] = F[i+(threadIdx.x/32)];
        }
    }
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(64);
    helloCUDA<<<G, B>>>(143);
    return finish();
}
