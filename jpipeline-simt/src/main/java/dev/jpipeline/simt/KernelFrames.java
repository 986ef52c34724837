package dev.jpipeline.simt;

import java.util.Arrays;

/**
 * Puts a compiled kernel's own frame back into the stack traces of what it throws. The kernel's code runs as a
 * method of a hidden class (RegionCompiler), and the JVM leaves hidden frames out of stack traces (JEP 371), so a
 * throwable that leaves a compiled kernel would not say where in the kernel it came from. The step's outermost
 * handler calls {@link #add} with the source line it was on: the frame is inserted where the hidden frames were,
 * just above the runtime's (the first frame of {@link Strand}, which runs the compiled block), naming the kernel's class, method, file
 * and line. Not restored: the JVM's helpful NullPointerException message, which it does not compute for hidden
 * frames.
 */
final class KernelFrames {

    /** The class whose frame follows the hidden ones (Strand.runCompiledBlock and unwindStopped call the step). */
    private static final String RUNNER = Strand.class.getName();

    private KernelFrames() {
    }

    /**
     * @param className  the kernel's class
     * @param methodName the kernel's method (a lambda's implementation method)
     * @param fileName   its source file, or null
     * @param thrown     what leaves the kernel's code
     * @param line       the source line the kernel was on, 0 when unknown
     */
    static void add(String className, String methodName, String fileName, Throwable thrown, int line) {
        if (thrown instanceof KernelAbortedException) {
            return;                             // the runtime's own unwinding: no frame of the kernel matters
        }
        StackTraceElement[] frames = thrown.getStackTrace();
        int at = 0;
        while (at < frames.length && !frames[at].getClassName().equals(RUNNER)) {
            at++;
        }
        if (at == frames.length || at > 0 && frames[at - 1].getClassName().equals(className)
            && frames[at - 1].getMethodName().equals(methodName)) {
            // made outside a kernel (its trace has no runner's frame), or its kernel's frame is there already (made
            // by an earlier launch and thrown again): strands leave such a trace as it is, and so does this
            return;
        }
        StackTraceElement[] with = Arrays.copyOf(frames, frames.length + 1);
        System.arraycopy(frames, at, with, at + 1, frames.length - at);
        with[at] = new StackTraceElement(className, methodName, fileName, line > 0 ? line : -1);
        thrown.setStackTrace(with);
    }
}
