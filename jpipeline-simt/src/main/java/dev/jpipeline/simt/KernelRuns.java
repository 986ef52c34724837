package dev.jpipeline.simt;

import java.util.List;

/**
 * How this JVM's kernel launches have run so far: how many thread blocks ran compiled (as loops over their threads,
 * without a thread per CUDA thread) and how many on strands (each CUDA thread on a stack of its own that hands the
 * block's turn over at each wait), and why each kernel that could not be compiled fell back. Not in CUDA, whose
 * kernels are compiled ahead of time: a diagnostic of this runtime, read with {@link Kernel#runs()}.
 *
 * <p>A kernel is compiled when the runtime can read its code and its only waits are {@code syncThreads()} calls in
 * its own body (see the SIMT documentation, "Compiled kernels"); under checked execution no kernel is compiled.
 * Each kernel class falls back at most once per JVM: its reason is kept from its first launch on (the list holds
 * the first 1000).
 *
 * @param compiledBlocks blocks run compiled since the JVM started
 * @param strandBlocks   blocks run on strands since the JVM started (checked execution's included)
 * @param fallbacks      one line per kernel class that was not compiled: its class name and why, in the order
 *                       first launched; unmodifiable
 */
public record KernelRuns(long compiledBlocks, long strandBlocks, List<String> fallbacks) {

    /**
     * Makes a snapshot, copying {@code fallbacks}.
     *
     * @throws NullPointerException when {@code fallbacks} is null or holds null
     */
    public KernelRuns {
        fallbacks = List.copyOf(fallbacks);
    }
}
