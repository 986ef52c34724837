// CUDA Programming Guide 4.10.1, the ways to create a pipeline (jpipeline: PipelineCreation): a thread-scope
// round trip, a unified block-scope one, and a partitioned one in which only thread 0 produces. Each thread
// stores what it read in out[3 * THREADS] (-1 where it reads nothing). FAULT_WAIT_PRIOR_TOO_LARGE plants
// Fault.WAIT_PRIOR_TOO_LARGE.
#include <cooperative_groups.h>
#include <cuda/pipeline>
#include "oracle.cuh"

#ifndef THREADS
#define THREADS 64
#endif
#ifndef ORACLE_NAME
#define ORACLE_NAME "PipelineCreation"
#endif

namespace cg = cooperative_groups;

__global__ void pipeline_creation(const float* in, float* out) {
  extern __shared__ float smem[];
  auto group = cg::this_thread_block();
  const int threads = THREADS;
  int t = group.thread_rank();
  // Create a pipeline at thread scope
  cuda::pipeline<cuda::thread_scope_thread> thread_pipeline = cuda::make_pipeline();
  thread_pipeline.producer_acquire();
  cuda::memcpy_async(&smem[t], &in[t], sizeof(float), thread_pipeline);
  thread_pipeline.producer_commit();
#ifdef FAULT_WAIT_PRIOR_TOO_LARGE
  cuda::pipeline_consumer_wait_prior<1>(thread_pipeline);  // BUG: leaves in flight the batch it reads
#else
  thread_pipeline.consumer_wait();
#endif
  out[t] = smem[t];
#ifndef FAULT_WAIT_PRIOR_TOO_LARGE
  thread_pipeline.consumer_release();  // wait_prior has released what it waited for
#endif
  // Create a pipeline at block scope
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> shared_state;
  auto pipeline = cuda::make_pipeline(group, &shared_state);
  pipeline.producer_acquire();
  cuda::memcpy_async(group, &smem[threads], in, sizeof(float) * threads, pipeline);
  pipeline.producer_commit();
  pipeline.consumer_wait();
  out[threads + t] = smem[threads + (threads - 1 - t)];
  pipeline.consumer_release();
  pipeline.quit();
  // Create a partitioned pipeline at block scope where only thread 0 is a producer
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> partitioned_state;
  auto thread_role = t == 0 ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;
  auto partitioned = cuda::make_pipeline(group, &partitioned_state, thread_role);
  if (thread_role == cuda::pipeline_role::producer) {
    partitioned.producer_acquire();
    cuda::memcpy_async(&smem[2 * threads], in, sizeof(float) * threads, partitioned);
    partitioned.producer_commit();
  } else {
    partitioned.consumer_wait();
    out[2 * threads + t] = smem[2 * threads + t];
    partitioned.consumer_release();
  }
  partitioned.quit();
}

int main() {
  const int threads = THREADS;
  auto in = host_array<float>(threads, [](long long i) { return i + 0.25; });
  auto out = host_array<float>(3 * threads, [](long long) { return -1.0; });
  float* d_in = to_device(in);
  float* d_out = to_device(out);
  pipeline_creation<<<1, threads, 3 * sizeof(float) * threads>>>(d_in, d_out);
  auto expected = host_array<float>(3 * threads, [&](long long i) {
    long long t = i % threads;
    return i < threads ? in[t] : i < 2 * threads ? in[threads - 1 - t] : t == 0 ? -1.0f : in[t];
  });
  print_output(ORACLE_NAME, from_device(d_out, out.size()), expected);
  return 0;
}
