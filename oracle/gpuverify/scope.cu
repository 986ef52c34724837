// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/scope/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=64 --gridDim=64 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (1), block (64); gridDim reduced from 64; s_Hist is read beyond the part that was flushed (uninitialized)

#include <cuda.h>

#define BIN_COUNT 64
#define THREAD_N 64

__global__ void k(unsigned int *d_Result) {

    //Per-thread histogram storage
    __shared__ unsigned int s_Hist[THREAD_N * BIN_COUNT];

    //Flush shared memory
    for(int i = 0; 
        i < BIN_COUNT / 4; i++) {
      s_Hist[threadIdx.x + i * THREAD_N] = 0;
    }

    __syncthreads();

    if(threadIdx.x < BIN_COUNT){
        unsigned int sum = 0;
        const int value = threadIdx.x;

        const int valueBase = (value * THREAD_N);
        const int  startPos = (threadIdx.x & 15) * 4;

        for(int i = 0, accumPos = startPos;
            i < THREAD_N; i++){
            sum += s_Hist[valueBase + accumPos];
            accumPos++;
            if(accumPos == THREAD_N) accumPos = 0;
        }

        d_Result[blockIdx.x * BIN_COUNT + value] = sum;
    }

}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(64);
    k<<<G, B>>>(devArray<unsigned int>(64));
    return finish();
}
