// Fault.RETURN_BEFORE_SYNCTHREADS: 4.10.6 primitives, the block's last thread returns before __syncthreads.
// The CUDA twin of Examples.faulty()'s variant (jpipeline-examples Fault.java), at the same small size.
#define FAULT_RETURN_BEFORE_SYNCTHREADS
#define BLOCK_SIZE 16
#define ORACLE_NAME "RETURN_BEFORE_SYNCTHREADS"
#include "../examples/tracking_async_copies_primitives.cu"
