// Timed waits (jpipeline: TimedWaits): one slow producer thread, which pauses about 2 ms before each of its 8
// batches, and the block's other threads as consumers that poll with consumer_wait_for(1 ms), doing other work
// between polls, and finish with consumer_wait_until(now + 30 s). Consumer t stores what it read of batch b in
// out[b * THREADS + t] (-2 when its wait timed out; -1 is left where nothing is read: thread 0, the producer).
#include <cooperative_groups.h>
#include <cuda/pipeline>
#include <cuda/std/chrono>
#include "oracle.cuh"

#ifndef THREADS
#define THREADS 32
#endif
#ifndef ORACLE_NAME
#define ORACLE_NAME "TimedWaits"
#endif

namespace cg = cooperative_groups;
constexpr int BATCHES = 8;
using block_pipeline = cuda::pipeline<cuda::thread_scope_block>;

// A pause of about `nanos` nanoseconds (__nanosleep sleeps at most about 1 ms at a time).
__device__ void pause(long long nanos) {
  unsigned long long begin;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(begin));
  for (;;) {
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if ((long long)(now - begin) >= nanos) break;
    __nanosleep(100000);
  }
}

__device__ bool poll_until_ready(block_pipeline& pipe) {
  for (int polls = 0; polls < 30000; polls++) {
    if (pipe.consumer_wait_for(cuda::std::chrono::milliseconds(1))) {
      return true;
    }
    // "other work" between polls
  }
  return false;
}

__global__ void timed_waits(const float* in, float* out, long long delay_ns) {
  __shared__ float smem[2];
  auto block = cg::this_thread_block();
  const int threads = THREADS;
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> state;
  block_pipeline pipe = cuda::make_pipeline(block, &state, 1);
  for (int b = 0; b < BATCHES; b++) {
    if (block.thread_rank() == 0) {
      pause(delay_ns);  // a slow producer
      pipe.producer_acquire();
      cuda::memcpy_async(&smem[b % 2], &in[b], sizeof(float), pipe);
      pipe.producer_commit();
    } else {
      bool ready = b == BATCHES - 1
                       ? pipe.consumer_wait_until(cuda::std::chrono::system_clock::now() + cuda::std::chrono::seconds(30))
                       : poll_until_ready(pipe);
      out[b * threads + block.thread_rank()] = ready ? smem[b % 2] : -2.0f;
      pipe.consumer_release();
    }
  }
  pipe.quit();
}

int main() {
  const int threads = THREADS;
  auto in = host_array<float>(BATCHES, [](long long i) { return 100.0 + i; });
  auto out = host_array<float>(BATCHES * threads, [](long long) { return -1.0; });
  float* d_in = to_device(in);
  float* d_out = to_device(out);
  timed_waits<<<1, threads>>>(d_in, d_out, 2000000LL);
  auto expected = host_array<float>(BATCHES * threads, [&](long long i) {
    return i % threads == 0 ? -1.0 : 100.0 + i / threads;
  });
  print_output(ORACLE_NAME, from_device(d_out, out.size()), expected);
  return 0;
}
