// Fault.DIVERGENT_SYNCTHREADS: 4.10.6 cuda::pipeline, __syncthreads in both branches of an if.
// The CUDA twin of Examples.faulty()'s variant (jpipeline-examples Fault.java), at the same small size.
#define FAULT_DIVERGENT_SYNCTHREADS
#define BLOCK_SIZE 16
#define ORACLE_NAME "DIVERGENT_SYNCTHREADS"
#include "../examples/tracking_async_copies.cu"
