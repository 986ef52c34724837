// The article's first version of binary partitions (jpipeline: new BinaryPartitions(true)): every thread runs
// both the producer and the consumer code of a pipeline partitioned by role. jpipeline fails the launch with an
// IllegalStateException naming the rule; this program records what a GPU does.
#define UNGUARDED 1
#define ORACLE_NAME "BinaryPartitionsUnguarded"
#include "binary_partitions_guarded.cu"
