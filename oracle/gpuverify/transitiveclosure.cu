// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/transitiveclosure/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=[8,8] --gridDim=[1,1] --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (1), block (8,8)

#include <cuda.h>


#define _2D_ACCESS(A, y, x, X_DIM) A[(y)*(X_DIM)+(x)]

#define X_DIMENSION 0
#define Y_DIMENSION 1

#define BLOCK_DIM (1 << 3)


#define num_vertices (1 << 6)

#define _U 0
#define _I 2

__global__ void transitive_closure_stage1_kernel(unsigned int* graph, int passnum)
{
    
    __shared__ unsigned int primary_block_buffer[BLOCK_DIM][BLOCK_DIM];

    int idxY = passnum * BLOCK_DIM + threadIdx.y;
    int idxX = passnum * BLOCK_DIM + threadIdx.x;

    primary_block_buffer[threadIdx.y][threadIdx.x] = _2D_ACCESS(graph, idxY, idxX, num_vertices);

    __syncthreads();

    for (unsigned int k = 0; k < BLOCK_DIM; ++k)
    {
        if ( primary_block_buffer[threadIdx.y][threadIdx.x] == _U)
        {
            if ( (primary_block_buffer[threadIdx.y][k] != _U) && (primary_block_buffer[k][threadIdx.x] != _U) )
            {
                primary_block_buffer[threadIdx.y][threadIdx.x] = passnum*BLOCK_DIM + k + _I;
            }
        }

        __syncthreads();
    }

    _2D_ACCESS(graph, idxY, idxX, num_vertices) = primary_block_buffer[threadIdx.y][threadIdx.x];
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(8,8);
    unsigned int *graph = devArray<unsigned int>(64 * 64, 0);
    unsigned int edges[8] = {1, 1, 0, 1, 0, 0, 1, 0};  // row 0 of the first 8x8 tile: some edges
    cudaMemcpy(graph, edges, sizeof edges, cudaMemcpyHostToDevice);
    transitive_closure_stage1_kernel<<<G, B>>>(graph, 0);
    return finish();
}
