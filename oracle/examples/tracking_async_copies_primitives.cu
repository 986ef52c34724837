// CUDA Programming Guide 4.10.6, the primitives version (jpipeline: TrackingAsyncCopiesPrimitives): three
// batches of __pipeline_memcpy_async, then waits for all but the 2, 1 and 0 newest batches, each followed by
// __syncthreads and a use of the blocks ready by then: the k-th element thread t reads (element
// BLOCK_SIZE - 1 - t of a block, copied by the mirrored thread) goes to out[k * BLOCK_SIZE + BLOCK_SIZE - 1 - t],
// k = 0..7. FAULT_RETURN_BEFORE_SYNCTHREADS plants Fault.RETURN_BEFORE_SYNCTHREADS.
#include <cuda_pipeline.h>
#include "oracle.cuh"

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 128
#endif
#ifndef ORACLE_NAME
#define ORACLE_NAME "TrackingAsyncCopiesPrimitives"
#endif

__global__ void tracking_async_copies_primitives(const float* in, float* out) {
  __shared__ float buffer[4 * BLOCK_SIZE];
  const int block_size = BLOCK_SIZE;
  int t = threadIdx.x;
  // First batch: one element of the first block
  __pipeline_memcpy_async(&buffer[t], &in[t], sizeof(float));
  __pipeline_commit();
  // Second batch: one element of the second and third blocks
  __pipeline_memcpy_async(&buffer[block_size + t], &in[block_size + t], sizeof(float));
  __pipeline_memcpy_async(&buffer[2 * block_size + t], &in[2 * block_size + t], sizeof(float));
  __pipeline_commit();
  // Third batch: one element of the last block
  __pipeline_memcpy_async(&buffer[3 * block_size + t], &in[3 * block_size + t], sizeof(float));
  __pipeline_commit();
#ifdef FAULT_RETURN_BEFORE_SYNCTHREADS
  if (t == block_size - 1) {
    return;  // BUG: the others wait for it in __syncthreads
  }
#endif
  const int blocks_ready[3] = {1, 3, 4};  // blocks 0 .. n-1 are ready after each wait
  int k = 0;
  for (int step = 0; step < 3; step++) {
    if (step == 0) {
      __pipeline_wait_prior(2);  // all but the 2 newest batches
    } else if (step == 1) {
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();
    for (int block = 0; block < blocks_ready[step]; block++, k++) {
      int i = block * block_size + block_size - 1 - t;
      out[k * block_size + block_size - 1 - t] = buffer[i];
    }
  }
}

int main() {
  const int block_size = BLOCK_SIZE;
  auto in = host_array<float>(4 * block_size, [](long long i) { return 3.0 * i + 1; });
  auto out = host_array<float>(8 * block_size, [](long long) { return -1.0; });
  float* d_in = to_device(in);
  float* d_out = to_device(out);
  tracking_async_copies_primitives<<<1, block_size>>>(d_in, d_out);
  const int block_of_read[8] = {0, 0, 1, 2, 0, 1, 2, 3};  // the block of the k-th read
  auto expected = host_array<float>(8 * block_size, [&](long long i) {
    return in[block_of_read[i / block_size] * block_size + i % block_size];
  });
  print_output(ORACLE_NAME, from_device(d_out, out.size()), expected);
  return 0;
}
