// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/memcpy/mismatch/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//pass
//--gridDim=1 --blockDim=2 --no-inline
// jpipeline label: RACE_FREE; launch used here: grid (1), block (2)

//This kernel is race-free.
//
//The memcpy is between different src and dst types so we have to handle the
//arrays in and out at the byte-level.

#define memcpy(dst, src, len) __builtin_memcpy(dst, src, len)

typedef struct {
  short x;
  char y;
} s1_t; //< sizeof(s1_t) == 4

typedef struct {
  short x;
  short y;
} s2_t; //< sizeof(s2_t) == 4

__global__ void k(s1_t *in, s2_t *out) {
  size_t len = 4;
  memcpy(&out[threadIdx.x], &in[threadIdx.x], len);
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
    dim3 G = dim3(1), B = dim3(2);
    k<<<G, B>>>((s1_t *) devBytes(8), (s2_t *) devBytes(8));
    return finish();
}
