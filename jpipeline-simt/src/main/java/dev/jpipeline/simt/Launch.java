package dev.jpipeline.simt;

import dev.jpipeline.Group;
import dev.jpipeline.internal.BatchSequence;
import dev.jpipeline.internal.ParkListener;
import dev.jpipeline.internal.PhaseBarrier;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * One kernel launch in progress: makes blocks resident (bounded by a semaphore), starts one virtual thread per
 * CUDA thread with its context and its park listener bound, and waits for the end while watching for a failure
 * or a hang (checked every {@link #TICK_MILLIS} ms).
 */
final class Launch {

    private static final long TICK_MILLIS = 20;

    final Dim3 gridDim;
    final Dim3 blockDim;
    private final long dynamicSharedBytes;
    private final KernelBody body;
    private final boolean cooperative;
    private final LaunchMonitor monitor;
    private final CountDownLatch done;
    private final Semaphore residency;
    private final AtomicReference<KernelFailure> failure = new AtomicReference<>();
    private final ConcurrentHashMap<Object, Object> globals = new ConcurrentHashMap<>();
    private final SyncSite gridSync;
    private final int totalThreads;

    Launch(Dim3 grid, Dim3 block, long dynamicSharedBytes, KernelBody body, boolean cooperative) {
        this.gridDim = grid;
        this.blockDim = block;
        this.dynamicSharedBytes = dynamicSharedBytes;
        this.body = body;
        this.cooperative = cooperative;
        this.totalThreads = Math.multiplyExact(grid.volume(), block.volume());
        this.monitor = new LaunchMonitor(Kernel.hangPatienceMillis() * 1_000_000L, grid + " x " + block);
        this.done = new CountDownLatch(totalThreads);
        this.residency = new Semaphore(cooperative ? grid.volume()
            : Math.max(1, Runtime.getRuntime().availableProcessors()));
        this.gridSync = cooperative ? new SyncSite("grid sync", new PhaseBarrier(totalThreads)) : null;
    }

    void run() {
        int blocks = gridDim.volume();
        for (int b = 0; b < blocks && !monitor.aborted(); b++) {
            while (!acquireResidency()) {
                watchForHang();
            }
            if (!monitor.aborted()) {
                startBlock(gridDim.index(b));
            }
        }
        try {
            while (!done.await(TICK_MILLIS, TimeUnit.MILLISECONDS)) {
                watchForHang();
                if (monitor.aborted() && monitor.live() == 0) {
                    break;
                }
            }
        } catch (InterruptedException e) {
            monitor.abort("the launching thread was interrupted");
            Thread.currentThread().interrupt();
            throw new KernelFailure("interrupted while waiting for the kernel", e);
        }
        KernelFailure f = failure.get();
        if (f != null) {
            throw f;
        }
    }

    private boolean acquireResidency() {
        try {
            return monitor.aborted() || residency.tryAcquire(TICK_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            monitor.abort("the launching thread was interrupted");
            return true;
        }
    }

    /** Aborts the launch when the hang detector reports that every live thread is stuck. */
    private void watchForHang() {
        if (monitor.aborted()) {
            return;
        }
        String report = monitor.hang();
        if (report != null) {
            failure.compareAndSet(null, new KernelFailure(report, null));
            monitor.abort(report);
        }
    }

    private void startBlock(Dim3 blockIdx) {
        BlockState block = new BlockState(blockIdx, blockDim.volume(), dynamicSharedBytes);
        for (int rank = 0; rank < block.size; rank++) {
            Dim3 threadIdx = blockDim.index(rank);
            KernelContext ctx = new KernelContext(this, block, threadIdx, rank);
            KernelThread kt = new KernelThread(monitor, blockIdx, threadIdx);
            Thread thread = Thread.ofVirtual().name("kernel block " + blockIdx + " thread " + threadIdx)
                .unstarted(() -> runThread(ctx, kt, block));
            kt.runsOn(thread);
            monitor.started(kt, thread);
            thread.start();
        }
    }

    private void runThread(KernelContext ctx, KernelThread kt, BlockState block) {
        try {
            ScopedValue.where(KernelContext.CURRENT, ctx)
                .where(ParkListener.CURRENT, kt)
                .where(BatchSequence.CURRENT, ctx.lane())
                .run(() -> body.run(ctx));
        } catch (KernelAbortedException aborted) {
            // the launch has already failed or hung; its report says why
        } catch (Throwable t) {
            String message = "thread " + kt.threadIdx + " of block " + kt.blockIdx + " failed: " + t;
            if (failure.compareAndSet(null, new KernelFailure(message, t))) {
                monitor.abort(message);
            }
        } finally {
            monitor.finished(kt);
            if (block.threadFinished()) {
                residency.release();            // the block has retired: another may become resident
            }
            done.countDown();
        }
    }

    Group gridGroup(KernelContext ctx) {
        if (!cooperative) {
            throw new IllegalStateException("this_grid() needs a cooperative launch (Kernel.launchCooperative): "
                + "the blocks of an ordinary launch need not run at the same time");
        }
        return new SubGroup("grid", totalThreads, (int) ctx.globalRank(), gridSync);
    }

    @SuppressWarnings("unchecked")
    <T> T global(Object key, Supplier<T> init) {
        return (T) globals.computeIfAbsent(key, k -> init.get());
    }
}
