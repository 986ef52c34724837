// Fault.UNGUARDED_ROLES: binary partitions, every thread runs both the producer and the consumer code.
// The CUDA twin of Examples.faulty()'s variant (jpipeline-examples Fault.java), at the same small size.
#define UNGUARDED 1
#define THREADS 16
#define ORACLE_NAME "UNGUARDED_ROLES"
#include "../examples/binary_partitions_guarded.cu"
