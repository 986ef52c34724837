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
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(2);
    k<<<G, B>>>((s1_t *) devBytes(8), (s2_t *) devBytes(8));
    return finish();
}
