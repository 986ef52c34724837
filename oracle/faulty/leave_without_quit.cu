// Fault.LEAVE_WITHOUT_QUIT: 4.10.5 early exit, the leavers return without quit().
// The CUDA twin of Examples.faulty()'s variant (jpipeline-examples Fault.java), at the same small size.
#define FAULT_LEAVE_WITHOUT_QUIT
#define THREADS 8
#define BATCHES 8
#define ORACLE_NAME "LEAVE_WITHOUT_QUIT"
#include "../examples/early_exit.cu"
