// Fault.CLEAR_AFTER_COMMIT: binary partitions, each producer clears its pair's output after producer_commit.
// The CUDA twin of Examples.faulty()'s variant (jpipeline-examples Fault.java), at the same small size.
#define FAULT_CLEAR_AFTER_COMMIT
#define THREADS 16
#define ORACLE_NAME "CLEAR_AFTER_COMMIT"
#include "../examples/binary_partitions_guarded.cu"
