// Fault.NO_SYNCTHREADS: 4.10.6 cuda::pipeline, no __syncthreads between the waits and the use.
// The CUDA twin of Examples.faulty()'s variant (jpipeline-examples Fault.java), at the same small size.
#define FAULT_NO_SYNCTHREADS
#define BLOCK_SIZE 16
#define ORACLE_NAME "NO_SYNCTHREADS"
#include "../examples/tracking_async_copies.cu"
