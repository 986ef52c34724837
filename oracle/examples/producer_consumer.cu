// CUDA Programming Guide 4.10.7, the producer-consumer pattern (jpipeline: ProducerConsumer): a block-scope
// pipeline partitioned by count, two stages; the first half of each block produces (a group memcpy_async of a
// batch into the stage buffer), the other half consumes (out = 2 * in + 1). Each block streams its own slice
// of `in`. FAULT_READ_BEFORE_WAIT plants Fault.READ_BEFORE_WAIT.
#include <cooperative_groups.h>
#include <cuda/pipeline>
#include "oracle.cuh"

#ifndef N
#define N (1 << 20)
#endif
#ifndef BLOCKS
#define BLOCKS 4
#endif
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#ifndef BUFFER_LEN
#define BUFFER_LEN 1024
#endif
#ifndef ORACLE_NAME
#define ORACLE_NAME "ProducerConsumer"
#endif

namespace cg = cooperative_groups;
using block_pipeline = cuda::pipeline<cuda::thread_scope_block>;

template <typename Group>
__device__ void produce(block_pipeline& pipe, const Group& producers, int num_stages, int stage, int num_batches,
                        int batch, float* buffer, int buffer_len, const float* in) {
  if (batch < num_batches) {
    pipe.producer_acquire();
    // copy data from in(batch) to buffer(stage), shared by the producers
    cuda::memcpy_async(producers, buffer + stage * buffer_len, in + batch * buffer_len, sizeof(float) * buffer_len,
                       pipe);
    pipe.producer_commit();
  }
}

__device__ void consume(block_pipeline& pipe, int consumer, int consumers, int stage, int batch, float* buffer,
                        int buffer_len, float* out) {
#ifndef FAULT_READ_BEFORE_WAIT
  pipe.consumer_wait();
#endif
  // consume buffer(stage) and update out(batch)
  for (int i = consumer; i < buffer_len; i += consumers) {
    out[batch * buffer_len + i] = 2 * buffer[stage * buffer_len + i] + 1;
  }
#ifdef FAULT_READ_BEFORE_WAIT
  pipe.consumer_wait();  // BUG: too late, the loop above has read the stage already
#endif
  pipe.consumer_release();
}

__global__ void producer_consumer_pattern(const float* in_all, float* out_all, int n, int buffer_len) {
  extern __shared__ float buffer[];  // 2 * buffer_len floats
  const float* in = in_all + blockIdx.x * n;
  float* out = out_all + blockIdx.x * n;
  auto block = cg::this_thread_block();
  int num_batches = n / buffer_len;
  constexpr int num_stages = 2;
  int producer_count = block.size() / 2;
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, num_stages> shared_state;
  block_pipeline pipe = cuda::make_pipeline(block, &shared_state, producer_count);
  bool producer = block.thread_rank() < producer_count;
  auto producers = cg::tiled_partition<BLOCK_SIZE / 2>(block);  // ranks 0 .. producer_count - 1 for producers
  int consumer = block.thread_rank() - producer_count;
  // Fill the pipeline
  if (producer) {
    for (int s = 0; s < num_stages; ++s) {
      produce(pipe, producers, num_stages, s, num_batches, s, buffer, buffer_len, in);
    }
  }
  // Process the batches
  int stage = 0;
  for (int b = 0; b < num_batches; ++b) {
    if (producer) {
      // Prefetch the next batch
      produce(pipe, producers, num_stages, stage, num_batches, b + num_stages, buffer, buffer_len, in);
    } else {
      // Consume the oldest batch
      consume(pipe, consumer, block.size() - producer_count, stage, b, buffer, buffer_len, out);
    }
    stage = (stage + 1) % num_stages;
  }
  pipe.quit();
}

int main() {
  auto in = host_array<float>(N, [](long long i) { return i % 1000 - 500; });
  auto out = host_array<float>(N, [](long long) { return 0.0; });
  float* d_in = to_device(in);
  float* d_out = to_device(out);
  producer_consumer_pattern<<<BLOCKS, BLOCK_SIZE, 2 * BUFFER_LEN * sizeof(float)>>>(d_in, d_out, N / BLOCKS,
                                                                                  BUFFER_LEN);
  auto expected = host_array<float>(N, [](long long i) { return 2.0f * (i % 1000 - 500) + 1; });
  print_output(ORACLE_NAME, from_device(d_out, out.size()), expected);
  return 0;
}
