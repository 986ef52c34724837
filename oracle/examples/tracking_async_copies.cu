// CUDA Programming Guide 4.10.6, the cuda::pipeline version (jpipeline: TrackingAsyncCopies): each thread's
// thread-scope pipeline copies its element of four blocks of `in` in three stages; after each stage's wait,
// release and __syncthreads, thread t stores element BLOCK_SIZE - 1 - t of each block of the stage (copied by
// the mirrored thread) in out. FAULT_NO_SYNCTHREADS, FAULT_DIVERGENT_SYNCTHREADS and
// FAULT_SYNCWARP_MASKS_DISAGREE plant the faults of those names.
#include <cuda/pipeline>
#include "oracle.cuh"

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 128
#endif
#ifndef ORACLE_NAME
#define ORACLE_NAME "TrackingAsyncCopies"
#endif

// __syncthreads(), or the planted mistake in its place.
__device__ void sync_threads() {
#if defined(FAULT_NO_SYNCTHREADS)
  // BUG: no __syncthreads: the other threads' copies may still be in flight
#elif defined(FAULT_DIVERGENT_SYNCTHREADS)
  if (threadIdx.x % 2 == 0) {
    __syncthreads();  // BUG: two call sites of __syncthreads
  } else {
    __syncthreads();
  }
#elif defined(FAULT_SYNCWARP_MASKS_DISAGREE)
  // BUG: the block is one warp; lane 0 names only the first half-warp, the others all lanes
  __syncwarp(threadIdx.x == 0 ? 0x0000ffffu : 0xffffffffu);
#else
  __syncthreads();
#endif
}

__global__ void tracking_async_copies(const float* in, float* out) {
  __shared__ float buffer[4 * BLOCK_SIZE];
  const int block_size = BLOCK_SIZE;
  int t = threadIdx.x;
  cuda::pipeline<cuda::thread_scope_thread> pipeline = cuda::make_pipeline();
  // First stage of memory copies: one element of the first block
  pipeline.producer_acquire();
  cuda::memcpy_async(&buffer[t], &in[t], sizeof(float), pipeline);
  pipeline.producer_commit();
  // Second stage: one element of the second and third blocks
  pipeline.producer_acquire();
  cuda::memcpy_async(&buffer[block_size + t], &in[block_size + t], sizeof(float), pipeline);
  cuda::memcpy_async(&buffer[2 * block_size + t], &in[2 * block_size + t], sizeof(float), pipeline);
  pipeline.producer_commit();
  // Third stage: one element of the last block
  pipeline.producer_acquire();
  cuda::memcpy_async(&buffer[3 * block_size + t], &in[3 * block_size + t], sizeof(float), pipeline);
  pipeline.producer_commit();
  const int first_block[3] = {0, 1, 3};
  const int block_count[3] = {1, 2, 1};
  for (int stage = 0; stage < 3; stage++) {
    pipeline.consumer_wait();  // the oldest stage
    pipeline.consumer_release();
    sync_threads();
    for (int j = 0; j < block_count[stage]; j++) {  // use the stage's data
      int i = (first_block[stage] + j) * block_size + block_size - 1 - t;
      out[i] = buffer[i];
    }
  }
}

int main() {
  const int block_size = BLOCK_SIZE;
  auto in = host_array<float>(4 * block_size, [](long long i) { return i * 0.5; });
  auto out = host_array<float>(4 * block_size, [](long long) { return -1.0; });
  float* d_in = to_device(in);
  float* d_out = to_device(out);
  tracking_async_copies<<<1, block_size>>>(d_in, d_out);
  print_output(ORACLE_NAME, from_device(d_out, out.size()), in);
  return 0;
}
