/* OpenCL C anchor kernels: block reduction, barrier loop, empty kernel. */
#define RED_THREADS 256
#define BAR_THREADS 128
#define BAR_ROUNDS 1000

__kernel void reduce_kernel(__global const ulong* input, __global ulong* blockSums) {
    __local ulong partial[RED_THREADS];
    const int t = (int)get_local_id(0);
    const int b = (int)get_group_id(0);
    partial[t] = input[b * RED_THREADS + t];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = RED_THREADS / 2; h > 0; h /= 2) {
        if (t < h) partial[t] += partial[t + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) blockSums[b] = partial[0];
}

__kernel void barrier_kernel(__global int* errors) {
    __local long shared_[BAR_THREADS];
    const int t = (int)get_local_id(0);
    shared_[t] = 0; /* each work-item owns shared_[t] */
    for (int round = 0; round < BAR_ROUNDS; ++round) {
        shared_[t] += 1;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (shared_[t] != BAR_ROUNDS) atomic_inc(errors);
}

__kernel void empty_kernel(void) {}
