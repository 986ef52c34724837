// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/pointertests/test_copy_between_pointers/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--blockDim=64 --gridDim=64 --equality-abstraction --no-inline
// jpipeline label: ASSUMED_RACE_FREE; launch used here: grid (2), block (16); dims reduced from 64x64; passes only because GPUVerify takes writes of one value by all threads as benign

#include "cuda.h"

__global__ void foo(int* p) {

  __shared__ int A[10];

  int* x;

  x = p;

  x[0] = 0;

  x = A;

  x[0] = 0;

}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

// A device array of n elements of T, element i set to T(i) (or to `fill` when fill >= 0).
template <class T> static inline T *devArray(size_t n, int fill = -1) {
    T *host = (T *) calloc(n, sizeof(T));
    for (size_t i = 0; i < n; i++) host[i] = (T) (fill >= 0 ? fill : (int) i);
    T *dev = nullptr;
    cudaMalloc((void **) &dev, n * sizeof(T));
    cudaMemcpy(dev, host, n * sizeof(T), cudaMemcpyHostToDevice);
    free(host);
    return dev;
}

// A device buffer of n bytes, byte i set to i.
[[maybe_unused]] static void *devBytes(size_t n) {
    unsigned char *host = (unsigned char *) malloc(n);
    for (size_t i = 0; i < n; i++) host[i] = (unsigned char) i;
    void *dev = nullptr;
    cudaMalloc(&dev, n);
    cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice);
    free(host);
    return dev;
}

static inline int finish() {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("%s\n", cudaGetErrorString(e));
        return 1;
    }
    printf("ok\n");
    return 0;
}

int main() {
    dim3 G = dim3(2), B = dim3(16);
    foo<<<G, B>>>(devArray<int>(1));
    return finish();
}
