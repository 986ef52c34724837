// Fault.READ_BEFORE_WAIT: 4.10.7 producer-consumer, the consumers read the stage, then wait for it.
// The CUDA twin of Examples.faulty()'s variant (jpipeline-examples Fault.java), at the same small size.
#define FAULT_READ_BEFORE_WAIT
#define N 256
#define BLOCKS 2
#define BLOCK_SIZE 16
#define BUFFER_LEN 32
#define ORACLE_NAME "READ_BEFORE_WAIT"
#include "../examples/producer_consumer.cu"
