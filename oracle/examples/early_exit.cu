// CUDA Programming Guide 4.10.5, early exit (jpipeline: EarlyExit): in a unified block-scope pipeline the last
// quarter of the block quits after a quarter of the batches (4 of 16); out[b * THREADS + t] = in[...] + 1 for
// each batch a thread runs, -1 for the others. libcu++'s quit only lowers the pipeline's reference count, so
// the staying threads wait for the leavers' arrivals: on a GPU this kernel is expected to hang (jpipeline
// follows the Guide's "the remaining threads can proceed normally").
#include <cooperative_groups.h>
#include <cuda/pipeline>
#include "oracle.cuh"

#ifndef THREADS
#define THREADS 128
#endif
#ifndef BATCHES
#define BATCHES 16
#endif
#ifndef ORACLE_NAME
#define ORACLE_NAME "EarlyExit"
#endif

namespace cg = cooperative_groups;

__global__ void early_exit(const float* in, float* out, int* last_owners) {
  extern __shared__ float smem[];
  auto block = cg::this_thread_block();
  const int threads = THREADS;
  const int batches = BATCHES;
  int t = block.thread_rank();
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> state;
  auto pipe = cuda::make_pipeline(block, &state);
  int my_batches = t >= threads * 3 / 4 ? batches / 4 : batches;
  for (int b = 0; b < my_batches; b++) {
    pipe.producer_acquire();
    cuda::memcpy_async(&smem[(b % 2) * threads + t], &in[b * threads + t], sizeof(float), pipe);
    pipe.producer_commit();
    pipe.consumer_wait();
    out[b * threads + t] = smem[(b % 2) * threads + t] + 1;
    pipe.consumer_release();
  }
#ifdef FAULT_LEAVE_WITHOUT_QUIT
  if (my_batches < batches) {
    return;  // BUG: the leavers end without quit() (the pipeline's destructor quits for them)
  }
#endif
  if (pipe.quit()) {  // the leavers quit early; the others when they are done
    atomicAdd(last_owners, 1);
  }
}

int main() {
  const int threads = THREADS, batches = BATCHES;
  auto in = host_array<float>(threads * batches, [](long long i) { return (double)i; });
  auto out = host_array<float>(threads * batches, [](long long) { return -1.0; });
  float* d_in = to_device(in);
  float* d_out = to_device(out);
  int* d_last_owners = to_device(std::vector<int>(1, 0));
  early_exit<<<1, threads, 2 * sizeof(float) * threads>>>(d_in, d_out, d_last_owners);
  auto expected = host_array<float>(threads * batches, [&](long long i) {
    long long b = i / threads, t = i % threads;
    return b < batches / 4 || t < threads * 3 / 4 ? (double)(i + 1) : -1.0;
  });
  print_output(ORACLE_NAME, from_device(d_out, out.size()), expected);
  return 0;
}
