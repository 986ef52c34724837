package dev.jpipeline.simt;

/**
 * Thrown in a kernel thread, under checked execution, where the thread breaks a rule that a GPU would not report:
 * a read of poisoned shared memory, a barrier reached from another call site, a {@code __syncwarp} mask that the
 * arriving lanes disagree on. It fails the launch ({@link KernelFailure} with this as the cause); the finding is
 * recorded for the exploration even if the kernel's caller catches the failure. No CUDA counterpart
 * (compute-sanitizer prints similar reports).
 */
public final class CheckViolation extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /** The finding's class, not serialized with the exception. */
    private final transient FindingKind kind;

    CheckViolation(FindingKind kind, String message) {
        super(message);
        this.kind = kind;
    }

    /**
     * What was found.
     *
     * @return the class of bug
     */
    public FindingKind kind() {
        return kind;
    }
}
