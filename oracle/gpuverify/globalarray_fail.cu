// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/globalarray/fail/kernel.cu
// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.
// GPUVerify label and options, as in the original:
//xfail:NOT_ALL_VERIFIED
//--blockDim=8 --gridDim=1 --no-inline
// jpipeline label: RACY; launch used here: grid (1), block (8)

// The statically given values for A are not preserved when we translate CUDA
// since the host is free to change the contents of A.
// cf. testsuite/OpenCL/globalarray/pass2

__constant__ int A[8] = {0,1,2,3,4,5,6,7};

__global__ void globalarray(float* p) {
  int i = threadIdx.x;
  int a = A[i];

  if(a != threadIdx.x) {
    p[0] = threadIdx.x;
  }
}

// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"

int main() {
    dim3 G = dim3(1), B = dim3(8);
    int zeros[8] = {0};
    cudaMemcpyToSymbol(A, zeros, sizeof zeros);  // the host changes A: the racy path
    globalarray<<<G, B>>>(devArray<float>(1));
    return finish();
}
