// "Cuda Binary Partitions and Pipelines" (jpipeline: BinaryPartitions): even threads produce, odd threads
// consume, a pipeline partitioned by role with one stage; each producer copies a pair of floats for itself and
// its odd neighbour, which stores the four floats around its pair in out. This is the corrected (guarded)
// version; UNGUARDED (binary_partitions_unguarded.cu, Fault.UNGUARDED_ROLES) runs the article's first
// version, in which every thread runs both the producer and the consumer code.
#include <cooperative_groups.h>
#include <cuda/pipeline>
#include "oracle.cuh"

#ifndef THREADS
#define THREADS 64
#endif
#ifndef UNGUARDED
#define UNGUARDED 0
#endif
#ifndef ORACLE_NAME
#define ORACLE_NAME "BinaryPartitionsGuarded"
#endif

namespace cg = cooperative_groups;

__global__ void binary_partitions(const float* g, float* out) {
  extern __shared__ float s[];  // 2 * THREADS floats
  auto block = cg::this_thread_block();
  int t = block.thread_rank();
  const bool unguarded = UNGUARDED;
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 1> state;
  auto role = t % 2 == 0 ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;
  auto pipe = cuda::make_pipeline(block, &state, role);
  // the producer loads a pair of floats for itself and its odd neighbour
  if (unguarded || role == cuda::pipeline_role::producer) {
    pipe.producer_acquire();
    cuda::memcpy_async(&s[2 * t], &g[2 * t], 16, pipe);
    pipe.producer_commit();
#ifdef FAULT_CLEAR_AFTER_COMMIT
    for (int k = 0; k < 4; k++) {
      out[2 * t + k] = 0;  // BUG: may overwrite what the consumer wrote
    }
#endif
  }
  if (unguarded || role == cuda::pipeline_role::consumer) {
    pipe.consumer_wait();
    out[2 * t - 2] = s[2 * t - 2];  // the pair the neighbour loaded
    out[2 * t - 1] = s[2 * t - 1];
    out[2 * t] = s[2 * t];
    out[2 * t + 1] = s[2 * t + 1];
    pipe.consumer_release();
  }
  pipe.quit();
}

int main() {
  const int threads = THREADS;
  // (the unguarded version's first and last threads reach past the ends of g, s and out, as they would in
  // jpipeline, which stops at the first role mix-up before that)
  auto g = host_array<float>(2 * threads, [](long long i) { return 10.0 + i; });
  auto out = host_array<float>(2 * threads, [](long long) { return -1.0; });
  float* d_g = to_device(g);
  float* d_out = to_device(out);
  binary_partitions<<<1, threads, 2 * sizeof(float) * threads>>>(d_g, d_out);
  print_output(ORACLE_NAME, from_device(d_out, out.size()), g);
  return 0;
}
