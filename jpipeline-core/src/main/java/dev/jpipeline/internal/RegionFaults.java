package dev.jpipeline.internal;

import dev.jpipeline.internal.process.MappedAtomics;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What an access to a region whose file was truncated under it becomes: an {@link IllegalStateException} in the
 * accessing thread, naming the region and the rule (issue 26). HotSpot reports such an access (SIGBUS on a mapped
 * page past the file's end) as an {@link InternalError} with a fixed message, in compiled code and in the
 * interpreter's loads and stores; MappedAtomics makes the interpreter's compare-and-sets load first, so that they
 * report it the same way. The entry points of system scope (the operations of a region pipeline, a region's join,
 * members and close, and a region group's sync) translate it here; any other InternalError passes unchanged.
 */
public final class RegionFaults {

    /** HotSpot's message for a fault in an unsafe (or memory segment) access to mapped memory. */
    private static final String ACCESS_FAULT = "a fault occurred in an unsafe memory access operation";

    private RegionFaults() {
    }

    /** Whether {@code error} is HotSpot's report of a fault in an access to mapped memory (SIGBUS). */
    public static boolean isAccessFault(InternalError error) {
        return ACCESS_FAULT.equals(error.getMessage());
    }

    /**
     * The exception for {@code fault}, raised by an access to the region described by {@code what}.
     *
     * @param file   the region's file where known (its size now is named), else null
     * @param mapped the bytes this process mapped, where known, else -1
     * @throws InternalError {@code fault} itself, when it is not a fault of an access to mapped memory
     */
    public static IllegalStateException lost(InternalError fault, String what, Path file, long mapped) {
        if (!isAccessFault(fault)) {
            throw fault;
        }
        String sizes = "";
        if (file != null) {
            String now;
            try {
                now = Files.size(file) + " bytes";
            } catch (IOException | SecurityException e) {
                now = "gone (" + e + ")";
            }
            sizes = " (the file is now " + now + (mapped >= 0 ? ", " + mapped + " bytes are mapped here" : "") + ")";
        }
        IllegalStateException lost = new IllegalStateException(what + ": an access to the shared region faulted: "
            + "its file was truncated by another process while this process mapped it" + sizes + ". A region's "
            + "file must keep its size while any process maps it; the region's state is lost: close it and create "
            + "it again");
        lost.initCause(fault);
        return lost;
    }
}
