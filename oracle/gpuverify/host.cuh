// The host side shared by the CUDA twins of the GPUVerify kernels (jpipeline issue 29): device arrays filled as
// the Java ports fill theirs, and the end of main() (synchronize, print "ok" or the CUDA error).
#pragma once
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
