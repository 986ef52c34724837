// Fault.SYNCWARP_MASKS_DISAGREE: 4.10.6 cuda::pipeline in one warp, lane 0 calls __syncwarp(0x0000ffff), the others __syncwarp(0xffffffff).
// The CUDA twin of Examples.faulty()'s variant (jpipeline-examples Fault.java), at the same small size.
#define FAULT_SYNCWARP_MASKS_DISAGREE
#define BLOCK_SIZE 32
#define ORACLE_NAME "SYNCWARP_MASKS_DISAGREE"
#include "../examples/tracking_async_copies.cu"
