// Fault.WAIT_PRIOR_TOO_LARGE: 4.10.1, the thread-scope round trip waits with pipeline_consumer_wait_prior<1>.
// The CUDA twin of Examples.faulty()'s variant (jpipeline-examples Fault.java), at the same small size.
#define FAULT_WAIT_PRIOR_TOO_LARGE
#define THREADS 16
#define ORACLE_NAME "WAIT_PRIOR_TOO_LARGE"
#include "../examples/pipeline_creation.cu"
