package dev.jpipeline.examples;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.FindingKind;
import dev.jpipeline.simt.Kernel;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * CUDA Programming Guide 4.10.5, early exit: in a unified pipeline the last quarter of the block leaves after a
 * quarter of the batches (4 of 16) with {@code quit()}; "the remaining participating threads can proceed normally". (With libcu++
 * they would hang: its quit keeps the leaver's arrivals expected, and checked execution reports
 * {@link FindingKind#HANGS_ON_GPU}.) Exactly one thread's quit returns true.
 */
public final class EarlyExit implements Example {

    private final int threads;
    private final int batches;
    /** The planted mistake, or null for the documentation's code. */
    private final Fault fault;

    /** The example at its built-in size: 128 threads, 16 batches. */
    public EarlyExit() {
        this(128, 16);
    }

    private EarlyExit(int threads, int batches, Fault fault) {
        this.threads = threads;
        this.batches = batches;
        this.fault = fault;
    }

    private EarlyExit(int threads, int batches) {
        this(threads, batches, null);
    }

    /** 8 threads, 8 batches, with {@code fault} planted (or none: null). */
    static EarlyExit small(Fault fault) {
        return new EarlyExit(8, 8, fault);
    }

    /** 8 threads, 8 batches: the last 2 threads leave after 2 batches. */
    @Override
    public Example forChecking() {
        return small(null);
    }

    /** The leavers' arrivals, which jpipeline drops at their quit and libcu++ goes on expecting. */
    @Override
    public FindingKind checkedFinding() {
        return FindingKind.HANGS_ON_GPU;
    }

    @Override
    public String name() {
        return "4.10.5 early exit with quit()";
    }

    @Override
    public String source() {
        return "CUDA Programming Guide 4.10.5";
    }

    @Override
    public int threads() {
        return threads;
    }

    @Override
    public boolean run() {
        MemorySegment out = Floats.floats(threads * batches, i -> -1);
        int lastOwners = launch(out);
        for (int b = 0; b < batches; b++) {
            for (int t = 0; t < threads; t++) {
                float expected = b < batches / 4 || t < threads * 3 / 4 ? b * threads + t + 1 : -1;
                if (Floats.get(out, (long) b * threads + t) != expected) {
                    return false;
                }
            }
        }
        return lastOwners == 1;     // without the leavers' quit, the others' last quit is the last owner's
    }

    /**
     * {@code out[b * threads + t]}: {@code in + 1} for each batch b that thread t runs, -1 for the batches the
     * leavers skip. (On a GPU the CUDA twin hangs instead: libcu++'s quit keeps the leavers' arrivals expected.)
     */
    @Override
    public int[] output() {
        MemorySegment out = Floats.floats(threads * batches, i -> -1);
        launch(out);
        return Floats.bits(out, threads * batches);
    }

    /** Runs the kernel, writing {@code out}; returns how many quits returned true. */
    private int launch(MemorySegment out) {
        MemorySegment in = Floats.floats(threads * batches, i -> i);
        AtomicInteger lastOwners = new AtomicInteger();
        Kernel.launch(Dim3.of(1), Dim3.of(threads), 4L * 2 * threads, ctx -> {
            var block = ctx.block();
            int t = block.threadRank();
            MemorySegment smem = ctx.dynamicShared();
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(block, state);
            int myBatches = t >= threads * 3 / 4 ? batches / 4 : batches;
            for (int b = 0; b < myBatches; b++) {
                pipe.producerAcquire();
                memcpyAsync(Floats.slice(smem, (long) (b % 2) * threads + t, 1),
                    Floats.slice(in, (long) b * threads + t, 1), 4, pipe);
                pipe.producerCommit();
                pipe.consumerWait();
                Floats.set(out, (long) b * threads + t, ctx.loadFloat(smem, (long) (b % 2) * threads + t) + 1);
                pipe.consumerRelease();
            }
            if (fault == Fault.LEAVE_WITHOUT_QUIT && myBatches < batches) {
                return;                         // BUG: the leavers end without quit()
            }
            if (pipe.quit()) {                  // the leavers quit early; the others when they are done
                lastOwners.incrementAndGet();
            }
        });
        return lastOwners.get();
    }
}
