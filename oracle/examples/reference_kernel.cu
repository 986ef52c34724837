// The libcu++ cuda::pipeline reference example (jpipeline: ReferenceKernel): a block double-buffers group
// copies from two global arrays into shared memory (prime, pipelined copy/compute, drain); compute stores
// global0[i] + global1[i] of each subset in out (ints).
#include <cooperative_groups.h>
#include <cuda/pipeline>
#include "oracle.cuh"

#ifndef GROUP_SIZE
#define GROUP_SIZE 128
#endif
#ifndef SUBSETS
#define SUBSETS 64
#endif
#ifndef ORACLE_NAME
#define ORACLE_NAME "ReferenceKernel"
#endif

namespace cg = cooperative_groups;

__device__ void compute(const int* ptr, const cg::thread_block& group, int* out, int subset) {
  int r = group.thread_rank();
  out[subset * group.size() + r] = ptr[r] + ptr[group.size() + r];
}

__global__ void reference_kernel(const int* global0, const int* global1, int* out, int subsets) {
  extern __shared__ int s[];  // 4 * group.size() ints
  auto group = cg::this_thread_block();
  int* shared[2] = {s, s + 2 * group.size()};
  size_t n = group.size();
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> shared_state;
  auto pipeline = cuda::make_pipeline(group, &shared_state);
  // Prime the pipeline.
  pipeline.producer_acquire();
  cuda::memcpy_async(group, shared[0], &global0[0], sizeof(int) * n, pipeline);
  cuda::memcpy_async(group, shared[0] + n, &global1[0], sizeof(int) * n, pipeline);
  pipeline.producer_commit();
  // Pipelined copy/compute.
  for (int subset = 1; subset < subsets; ++subset) {
    pipeline.producer_acquire();
    cuda::memcpy_async(group, shared[subset % 2], &global0[subset * n], sizeof(int) * n, pipeline);
    cuda::memcpy_async(group, shared[subset % 2] + n, &global1[subset * n], sizeof(int) * n, pipeline);
    pipeline.producer_commit();
    pipeline.consumer_wait();
    compute(shared[(subset - 1) % 2], group, out, subset - 1);
    pipeline.consumer_release();
  }
  // Drain the pipeline.
  pipeline.consumer_wait();
  compute(shared[(subsets - 1) % 2], group, out, subsets - 1);
  pipeline.consumer_release();
}

int main() {
  const int total = GROUP_SIZE * SUBSETS;
  auto global0 = host_array<int>(total, [](long long i) { return i; });
  auto global1 = host_array<int>(total, [](long long i) { return 7 * i; });
  auto out = host_array<int>(total, [](long long) { return 0; });
  int* d0 = to_device(global0);
  int* d1 = to_device(global1);
  int* d_out = to_device(out);
  reference_kernel<<<1, GROUP_SIZE, 4 * sizeof(int) * GROUP_SIZE>>>(d0, d1, d_out, SUBSETS);
  print_output(ORACLE_NAME, from_device(d_out, out.size()), host_array<int>(total, [](long long i) { return 8 * i; }));
  return 0;
}
