// The role-partitioned pattern of the pipeline notes (jpipeline: RolePartition): the block's first quarter
// produces, each producer copying its share of the batch into the stage's shared buffer; the others consume
// (out = 3 * in); make_pipeline derives the counts from the roles. FAULT_READ_AFTER_RELEASE plants
// Fault.READ_AFTER_RELEASE.
#include <cooperative_groups.h>
#include <cuda/pipeline>
#include "oracle.cuh"

#ifndef THREADS
#define THREADS 128
#endif
#ifndef BATCH_LEN
#define BATCH_LEN 512
#endif
#ifndef BATCHES
#define BATCHES 64
#endif
#ifndef ORACLE_NAME
#define ORACLE_NAME "RolePartition"
#endif

namespace cg = cooperative_groups;
constexpr int STAGES = 2;

__global__ void role_partition(const float* global_in, float* global_out) {
  extern __shared__ float shared[];  // BATCH_LEN * STAGES floats
  auto block = cg::this_thread_block();
  const int threads = THREADS, batch_len = BATCH_LEN, batches = BATCHES, producers = THREADS / 4;
  int t = block.thread_rank();
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
  auto thread_role = t < producers ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;
  auto pipeline = cuda::make_pipeline(block, &state, thread_role);
  for (int batch = 0; batch < batches; batch++) {
    int shared_idx = batch % STAGES;
    if (thread_role == cuda::pipeline_role::producer) {
      // Only the producer threads schedule asynchronous copies: each its share of the batch
      pipeline.producer_acquire();
      int share = batch_len / producers;
      cuda::memcpy_async(&shared[shared_idx * batch_len + t * share], &global_in[batch * batch_len + t * share],
                         sizeof(float) * share, pipeline);
      pipeline.producer_commit();
    } else {
      // Only the consumer threads compute
      pipeline.consumer_wait();
#ifdef FAULT_READ_AFTER_RELEASE
      pipeline.consumer_release();  // BUG: the producers may refill the stage now
#endif
      for (int i = t - producers; i < batch_len; i += threads - producers) {
        global_out[batch * batch_len + i] = shared[shared_idx * batch_len + i] * 3;
      }
#ifndef FAULT_READ_AFTER_RELEASE
      pipeline.consumer_release();
#endif
    }
  }
  pipeline.quit();
}

int main() {
  const int total = BATCH_LEN * BATCHES;
  auto in = host_array<float>(total, [](long long i) { return (double)i; });
  auto out = host_array<float>(total, [](long long) { return 0.0; });
  float* d_in = to_device(in);
  float* d_out = to_device(out);
  role_partition<<<1, THREADS, sizeof(float) * BATCH_LEN * STAGES>>>(d_in, d_out);
  print_output(ORACLE_NAME, from_device(d_out, out.size()), host_array<float>(total, [](long long i) { return 3.0 * i; }));
  return 0;
}
