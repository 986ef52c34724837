// Fault.READ_AFTER_RELEASE: role partition, the consumers release the stage, then read it.
// The CUDA twin of Examples.faulty()'s variant (jpipeline-examples Fault.java), at the same small size.
#define FAULT_READ_AFTER_RELEASE
#define THREADS 16
#define BATCH_LEN 32
#define BATCHES 4
#define ORACLE_NAME "READ_AFTER_RELEASE"
#include "../examples/role_partition.cu"
