// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/misc/fail/miscfail4/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//xfail:NOT_ALL_VERIFIED
//--blockDim=1024 --gridDim=1 --no-inline
//kernel.cu: error: possible read-write race
//GPUVerify kernel analyser finished with 0 verified, 1 error
// jpipeline label: RACY; launch used here: grid (1), block (32); dims reduced from 1024x1; offset = 1 (the racy path)

// In CUDA providing static and __attribute__((always_inline)) should not
// keep a copy of inlined function around.

#define tid threadIdx.x

__device__ static __attribute__((always_inline))
void inlined(int *A, int offset)
{
   int temp = A[tid + offset];
   A[tid] += temp;
}

__global__ void inline_test(int *A, int offset) {
  inlined(A, offset);
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
    dim3 G = dim3(1), B = dim3(32);
    inline_test<<<G, B>>>(devArray<int>(33), 1);
    return finish();
}
