package dev.jpipeline.internal.process;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Locale;
import java.util.Objects;

/**
 * Linux {@code futex(2)} on a 32-bit word of native memory, through the FFM API (no JNI, no {@code Unsafe}): the
 * kernel half of {@link ProcessWaiting}. The word may be in a file mapped by several processes.
 *
 * <pre>
 * How it is called
 *
 *   libc's syscall(long number, ...) through a downcall handle: number is SYS_futex (202 on x86_64, 98 on
 *   aarch64), the variadic rest is (uaddr, op, val[, timeout]). Every scalar is passed as a long, which is how
 *   glibc's syscall reads its variadic arguments; the kernel truncates op and val to int / u32.
 *   ops: FUTEX_WAIT (0) and FUTEX_WAKE (1), not their _PRIVATE variants (128 | op): a private futex is keyed by
 *   (process, virtual address), so a waker in another process would never find the waiter. A shared futex on a
 *   file mapping is keyed by (inode, offset in the file), so processes that map the file at different addresses
 *   meet on the same word; on anonymous memory it works within the process, only a little slower.
 *   errno: Linker.Option.captureCallState("errno"), read right after the call (the JVM may overwrite errno).
 *   EAGAIN (11), EINTR (4) and ETIMEDOUT (110) are the same on both architectures (asm-generic numbering).
 *
 * FUTEX_WAIT(addr, expected, timeout) compares *addr with expected and, if equal, sleeps, both under the kernel's
 * hash-bucket lock that FUTEX_WAKE(addr) also takes: a wake that follows a store to the word (in any process)
 * either finds the waiter queued or makes its compare fail. That is the kernel's half of ProcessWaiting's
 * no-lost-wake-up argument.
 *
 * Scratch memory: the relative struct timespec and the errno capture live in one 32-byte segment per thread
 * (a ThreadLocal, allocated once in an automatic arena). Against a confined arena opened and closed per call it
 * saves 10-20% of a futex call that returns at once (EAGAIN) on the project's 2-core VM: 1.21-1.35 us a call
 * against 1.36-1.65 us in a plain loop; see docs/performance.md.
 *
 * Availability is probed once, when the class initializes: Linux, x86_64 or aarch64, native access allowed,
 * a "syscall" symbol, and a FUTEX_WAIT on a word that differs from the expected value returning EAGAIN (a
 * seccomp filter or an emulating kernel may answer ENOSYS). -Djpipeline.futex=false turns it off.
 * </pre>
 *
 * A thread in a futex wait is in native code: it shows as {@link Thread.State#RUNNABLE}, does not see
 * {@link Thread#interrupt()} until the wait returns, and a virtual thread there pins its carrier. Callers bound
 * their waits accordingly (see {@link ProcessWaiting}). The segment of a word is kept alive for the duration of
 * a call, so a shared arena cannot be closed under a waiting thread (its {@code close()} fails instead).
 */
public final class Futex {

    /** How a {@link #wait} ended. */
    public enum WaitOutcome {
        /** Woken by a {@link #wake}, or spuriously: the caller reads the word again. */
        WOKEN,
        /** The word did not hold the expected value when the kernel compared it (EAGAIN). */
        VALUE_CHANGED,
        /** The timeout elapsed (ETIMEDOUT). */
        TIMED_OUT,
        /** A signal interrupted the wait (EINTR); a {@link Thread#interrupt()} does not. */
        INTERRUPTED
    }

    /** A {@link #wait} timeout meaning "until woken". */
    public static final long NO_TIMEOUT = Long.MAX_VALUE;

    /** System property that turns futex use off when set to {@code false}: waits then sleep and poll. */
    public static final String ENABLED_PROPERTY = "jpipeline.futex";

    private static final long FUTEX_WAIT = 0;
    private static final long FUTEX_WAKE = 1;
    private static final int EAGAIN = 11;
    private static final int EINTR = 4;
    private static final int ETIMEDOUT = 110;
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO =
        CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    /** Bytes of a thread's scratch segment: the errno capture (at 0), then the timespec (at 16). */
    private static final long SCRATCH_BYTES = 32;
    private static final long TIMESPEC_OFFSET = 16;

    /** The calls, or null where futex is unavailable. */
    private static final Syscalls SYSCALLS;
    /** Why futex is unavailable, or null. */
    private static final String UNAVAILABLE;

    static {
        Syscalls calls = null;
        String reason;
        try {
            reason = reasonUnavailable();
            if (reason == null) {
                calls = Syscalls.link();
                reason = calls.probe();
            }
        } catch (IllegalCallerException e) {          // --illegal-native-access=deny, and no grant for us
            Module us = Futex.class.getModule();
            reason = e.getMessage() + ": start java with --enable-native-access="
                + (us.isNamed() ? us.getName() : "ALL-UNNAMED");
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            reason = e.toString();
        }
        SYSCALLS = reason == null ? calls : null;
        UNAVAILABLE = reason;
    }

    /** Each thread's errno capture and timespec, reused by every call of that thread. */
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private Futex() {
    }

    /**
     * Whether futex works here: probed once, when the class initializes.
     *
     * @return true where {@link #wait} and {@link #wake} may be called
     */
    public static boolean available() {
        return SYSCALLS != null;
    }

    /**
     * Why futex is unavailable: for a system-scope pipeline to report why its waits sleep and poll.
     *
     * @return the reason (a platform, a property, or the exception that linking threw, such as the
     *         {@code IllegalCallerException} of a JVM that denies native access), or {@code null} where
     *         {@link #available()}
     */
    public static String unavailableReason() {
        return UNAVAILABLE;
    }

    /**
     * FUTEX_WAIT: sleeps while the 32-bit word at {@code offset} of {@code segment} holds {@code expected}, until
     * a {@link #wake}, the timeout, or a signal. The kernel compares the word and queues the thread atomically
     * with respect to {@link #wake}.
     *
     * @param segment      native memory: a mapped file shared by processes, or an arena's segment
     * @param offset       where the word is: 4-byte aligned (as an address), inside the segment
     * @param expected     the value the caller last read from the word
     * @param timeoutNanos a relative timeout, 0 or more; {@link #NO_TIMEOUT} to wait until woken
     * @return how the wait ended: {@link WaitOutcome#WOKEN} includes spurious wake-ups
     * @throws IllegalArgumentException      if the segment is on the heap, the word is outside it or misaligned,
     *                                       or the timeout is negative
     * @throws UnsupportedOperationException if futex is not {@link #available()}
     * @throws IllegalStateException         if the kernel refuses the call (an errno other than the outcomes')
     */
    public static WaitOutcome wait(MemorySegment segment, long offset, int expected, long timeoutNanos) {
        MemorySegment word = word(segment, offset);
        if (timeoutNanos < 0) {
            throw new IllegalArgumentException("futex wait timeout must be 0 or more nanoseconds, got " + timeoutNanos);
        }
        Syscalls calls = calls();
        Scratch scratch = SCRATCH.get();
        MemorySegment timespec = MemorySegment.NULL;
        if (timeoutNanos != NO_TIMEOUT) {
            timespec = scratch.timespec;
            timespec.set(JAVA_LONG, 0, timeoutNanos / NANOS_PER_SECOND);
            timespec.set(JAVA_LONG, 8, timeoutNanos % NANOS_PER_SECOND);
        }
        long result;
        try {
            result = (long) calls.wait.invokeExact(scratch.callState, calls.sysFutex, word, FUTEX_WAIT,
                (long) expected, timespec);
        } catch (Throwable e) {
            throw rethrow(e);
        }
        if (result == 0) {
            return WaitOutcome.WOKEN;
        }
        int errno = (int) ERRNO.get(scratch.callState, 0L);
        return switch (errno) {
            case EAGAIN -> WaitOutcome.VALUE_CHANGED;
            case ETIMEDOUT -> WaitOutcome.TIMED_OUT;
            case EINTR -> WaitOutcome.INTERRUPTED;
            default -> throw failed("FUTEX_WAIT", errno, word);
        };
    }

    /**
     * FUTEX_WAKE: wakes up to {@code count} threads, in any process, waiting on the word at {@code offset} of
     * {@code segment}. Costs a system call even when nobody waits; {@link ProcessWaiting#wakeAll} skips it then.
     *
     * @param segment native memory holding the word
     * @param offset  where the word is: 4-byte aligned (as an address), inside the segment
     * @param count   how many waiters to wake at most, 1 or more ({@link Integer#MAX_VALUE}: all)
     * @return the number of threads woken
     * @throws IllegalArgumentException      if the segment is on the heap, the word is outside it or misaligned,
     *                                       or {@code count} is less than 1
     * @throws UnsupportedOperationException if futex is not {@link #available()}
     * @throws IllegalStateException         if the kernel refuses the call
     */
    public static int wake(MemorySegment segment, long offset, int count) {
        MemorySegment word = word(segment, offset);
        if (count < 1) {
            throw new IllegalArgumentException("futex wake count must be 1 or more, got " + count);
        }
        Syscalls calls = calls();
        Scratch scratch = SCRATCH.get();
        long result;
        try {
            result = (long) calls.wake.invokeExact(scratch.callState, calls.sysFutex, word, FUTEX_WAKE, (long) count);
        } catch (Throwable e) {
            throw rethrow(e);
        }
        if (result < 0) {
            throw failed("FUTEX_WAKE", (int) ERRNO.get(scratch.callState, 0L), word);
        }
        return (int) result;
    }

    /**
     * The 4-byte word at {@code offset} of {@code segment}, checked: native, inside, 4-byte aligned as an address
     * (the kernel refuses a misaligned futex with EINVAL).
     */
    static MemorySegment word(MemorySegment segment, long offset) {
        Objects.requireNonNull(segment, "segment");
        if (!segment.isNative()) {
            throw new IllegalArgumentException(
                "a futex word must be in native memory (a mapped file or an arena's segment), got " + segment);
        }
        if (offset < 0 || offset > segment.byteSize() - Integer.BYTES) {
            throw new IllegalArgumentException("futex word offset " + offset + " is outside the segment's "
                + segment.byteSize() + " bytes (a word takes 4)");
        }
        long address = segment.address() + offset;
        if ((address & (Integer.BYTES - 1)) != 0) {
            throw new IllegalArgumentException("a futex word must be 4-byte aligned: offset " + offset
                + " is at address 0x" + Long.toHexString(address));
        }
        return segment.asSlice(offset, Integer.BYTES);
    }

    private static Syscalls calls() {
        Syscalls calls = SYSCALLS;
        if (calls == null) {
            throw new UnsupportedOperationException("futex is unavailable here: " + UNAVAILABLE);
        }
        return calls;
    }

    private static IllegalStateException failed(String op, int errno, MemorySegment word) {
        return new IllegalStateException(op + " on address 0x" + Long.toHexString(word.address())
            + " failed with errno " + errno);
    }

    private static RuntimeException rethrow(Throwable e) {
        if (e instanceof RuntimeException r) {
            throw r;
        }
        if (e instanceof Error err) {
            throw err;
        }
        throw new IllegalStateException("futex downcall failed", e);
    }

    /** Why this platform has no futex for us (before linking), or null. */
    private static String reasonUnavailable() {
        if ("false".equalsIgnoreCase(System.getProperty(ENABLED_PROPERTY))) {
            return "turned off by -D" + ENABLED_PROPERTY + "=false";
        }
        String os = System.getProperty("os.name", "");
        if (!os.toLowerCase(Locale.ROOT).startsWith("linux")) {
            return "futex is Linux only, this is " + os;
        }
        if (Syscalls.number() < 0) {
            return "no SYS_futex number known for os.arch " + System.getProperty("os.arch")
                + " (known: amd64/x86_64, aarch64)";
        }
        return null;
    }

    /** The two downcall handles and the system call number. */
    private static final class Syscalls {
        final long sysFutex;
        /** long syscall(SYS_futex, uaddr, FUTEX_WAIT, expected, timeout), capturing errno. */
        final MethodHandle wait;
        /** long syscall(SYS_futex, uaddr, FUTEX_WAKE, count), capturing errno. */
        final MethodHandle wake;

        private Syscalls(long sysFutex, MethodHandle wait, MethodHandle wake) {
            this.sysFutex = sysFutex;
            this.wait = wait;
            this.wake = wake;
        }

        /** SYS_futex on this architecture, or -1. */
        static long number() {
            return switch (System.getProperty("os.arch", "")) {
                case "amd64", "x86_64" -> 202;
                case "aarch64" -> 98;
                default -> -1;
            };
        }

        /** Links libc's syscall: restricted methods, so this is where a JVM without native access warns or fails. */
        @SuppressWarnings("restricted")   // downcallHandle: linking libc's syscall is this method's job
        static Syscalls link() {
            Linker linker = Linker.nativeLinker();
            MemorySegment syscall = linker.defaultLookup().find("syscall")
                .orElseThrow(() -> new UnsupportedOperationException("libc has no syscall symbol"));
            Linker.Option variadic = Linker.Option.firstVariadicArg(1);
            Linker.Option errno = Linker.Option.captureCallState("errno");
            MethodHandle wait = linker.downcallHandle(syscall,
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS), variadic, errno);
            MethodHandle wake = linker.downcallHandle(syscall,
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG), variadic, errno);
            return new Syscalls(number(), wait, wake);
        }

        /**
         * One FUTEX_WAIT that must fail at once (the word differs) and one FUTEX_WAKE that finds nobody: null if
         * both answer as a working futex does, else why not.
         */
        String probe() throws Throwable {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment word = arena.allocate(JAVA_INT);
                word.set(JAVA_INT, 0, 1);
                MemorySegment state = arena.allocate(CALL_STATE);
                long r = (long) wait.invokeExact(state, sysFutex, word, FUTEX_WAIT, 0L, MemorySegment.NULL);
                if (r != -1 || (int) ERRNO.get(state, 0L) != EAGAIN) {
                    return "FUTEX_WAIT on a changed word returned " + r + " with errno " + ERRNO.get(state, 0L)
                        + " instead of EAGAIN";
                }
                r = (long) wake.invokeExact(state, sysFutex, word, FUTEX_WAKE, 1L);
                if (r != 0) {
                    return "FUTEX_WAKE with no waiter returned " + r + " with errno " + ERRNO.get(state, 0L);
                }
                return null;
            }
        }
    }

    /** A thread's errno capture and timespec: one allocation per thread, in an automatic arena. */
    private static final class Scratch {
        final MemorySegment callState;
        final MemorySegment timespec;

        Scratch() {
            MemorySegment all = Arena.ofAuto().allocate(SCRATCH_BYTES, Long.BYTES);
            callState = all.asSlice(0, CALL_STATE.byteSize());
            timespec = all.asSlice(TIMESPEC_OFFSET, 2 * Long.BYTES);
        }
    }
}
