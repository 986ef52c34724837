package dev.jpipeline.simt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.StageFailedException;
import dev.jpipeline.ThreadScope;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The block scheduler: one thread of a block at a time, lazy threads, the pluggable turn policy. */
@Timeout(60)
class BlockSchedulerTest {

    @Test
    void oneThreadOfABlockRunsAtATime() {
        int blocks = 4;
        AtomicInteger[] running = new AtomicInteger[blocks];
        AtomicInteger[] most = new AtomicInteger[blocks];
        for (int b = 0; b < blocks; b++) {
            running[b] = new AtomicInteger();
            most[b] = new AtomicInteger();
        }
        AtomicInteger blocksAtOnce = new AtomicInteger();
        AtomicInteger mostBlocksAtOnce = new AtomicInteger();
        Kernel.launch(Dim3.of(blocks), Dim3.of(128), 0, ctx -> {
            int b = ctx.blockIdx().x();
            for (int round = 0; round < 10; round++) {
                int now = running[b].incrementAndGet();
                most[b].accumulateAndGet(now, Math::max);
                if (now == 1) {
                    mostBlocksAtOnce.accumulateAndGet(blocksAtOnce.incrementAndGet(), Math::max);
                    Thread.yield();             // free-running threads of one block would overlap here
                    blocksAtOnce.decrementAndGet();
                }
                running[b].decrementAndGet();
                ctx.syncThreads();
            }
        });
        for (int b = 0; b < blocks; b++) {
            assertEquals(1, most[b].get(), "threads of block " + b + " ran at the same time");
        }
        assertTrue(mostBlocksAtOnce.get() <= Runtime.getRuntime().availableProcessors(),
            "more blocks ran at once than there are slots: " + mostBlocksAtOnce.get());
    }

    @Test
    void threadsThatNeverBlockRunAsCallsOnOneStrand() {
        Set<Thread> strands = ConcurrentHashMap.newKeySet();
        AtomicInteger ran = new AtomicInteger();
        Kernel.launch(Dim3.of(1), Dim3.of(1024), 0, ctx -> {
            strands.add(Thread.currentThread());
            ran.incrementAndGet();
        });
        assertEquals(1024, ran.get());
        assertEquals(1, strands.size(), "a block whose threads never block runs on one strand");
    }

    @Test
    void aThreadThatBlocksKeepsAStrandOfItsOwn() {
        Set<Thread> strands = ConcurrentHashMap.newKeySet();
        CompiledOrStrands.onStrands(() -> {
            Kernel.launch(Dim3.of(1), Dim3.of(256), 0, ctx -> {
                Thread before = Thread.currentThread();
                ctx.syncThreads();
                assertEquals(before, Thread.currentThread(), "a thread changed strands across __syncthreads");
                strands.add(before);
            });
            return null;
        });
        assertEquals(256, strands.size(), "each of the 256 threads blocks (or trips the barrier) on its own strand");
    }

    /**
     * Compiled on the scheduler (Thread.currentThread is unknown to the scan), a thread gives its stack up at
     * __syncthreads: the block needs one strand, however many of its threads meet at the sync.
     */
    @Test
    void compiledThreadsMeetAtASyncWithoutAStackEach() {
        Set<Thread> strands = ConcurrentHashMap.newKeySet();
        AtomicInteger after = new AtomicInteger();
        KernelBody body = ctx -> {
            addCurrentThread(strands);      // in a helper: the kernel's own code does not name the Java thread
            ctx.syncThreads();
            after.incrementAndGet();
        };
        org.junit.jupiter.api.Assumptions.assumeTrue(ResumptionScan.switchedOn(), "compilation is switched off");
        assertTrue(ResumptionScan.scan(body).onScheduler(), ResumptionScan.scan(body).reason());
        Kernel.launch(Dim3.of(1), Dim3.of(256), 0, body);
        assertEquals(256, after.get());
        assertEquals(1, strands.size(), "threads that only meet at a sync share one strand");
    }

    private static void addCurrentThread(Set<Thread> strands) {
        strands.add(Thread.currentThread());
    }

    /** The order in which one block's threads pass the point after a barrier. */
    private static List<Integer> orderAfterBarrier() {
        List<Integer> order = new ArrayList<>();
        Kernel.launch(Dim3.of(1), Dim3.of(8), 0, ctx -> {
            ctx.syncThreads();
            order.add(ctx.threadRank());        // one thread at a time: a plain list is safe
        });
        return order;
    }

    @Test
    void theTurnGoesRoundRobinAndTheOrderIsRepeatable() {
        List<Integer> first = orderAfterBarrier();
        // the last to arrive goes on; the barrier wakes the others newest first (its waiters are a stack), and the
        // turn passes in wake order
        assertEquals(List.of(7, 6, 5, 4, 3, 2, 1, 0), first);
        for (int run = 0; run < 3; run++) {
            assertEquals(first, orderAfterBarrier(), "round-robin order changed");
        }
    }

    @Test
    void aCudaThreadThatReturnsWithoutQuitIsAbandonedThoughItsStrandLivesOn() {
        AtomicReference<Throwable> consumerSaw = new AtomicReference<>();
        Kernel.launch(Dim3.of(1), Dim3.of(2), 8, ctx -> {
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 1));
            if (ctx.threadRank() == 0) {
                Pipeline p = Pipeline.make(ctx.block(), state, PipelineRole.PRODUCER);
                p.producerAcquire();
                // returns holding the stage, without commit or quit: the runtime must quit on its behalf
            } else {
                Pipeline p = Pipeline.make(ctx.block(), state, PipelineRole.CONSUMER);
                try {
                    p.consumerWait();
                } catch (StageFailedException expected) {
                    consumerSaw.set(expected);
                }
                p.quit();
            }
        });
        Throwable seen = consumerSaw.get();
        assertTrue(seen != null && seen.getMessage().contains("ended"), String.valueOf(seen));
    }

    /**
     * The policy seam: the scheduler names no type of checked execution's (CheckedLaunch, CheckedSession); only its
     * TurnPolicy, CheckedTurns for a checked launch, keeps that state.
     */
    @Test
    void theSchedulerLeavesCheckedExecutionsStateToItsPolicy() throws Exception {
        byte[] bytes;
        try (java.io.InputStream in = BlockScheduler.class.getResourceAsStream("BlockScheduler.class")) {
            bytes = in.readAllBytes();
        }
        java.lang.classfile.ClassModel model = java.lang.classfile.ClassFile.of().parse(bytes);
        List<String> named = new ArrayList<>();
        for (java.lang.classfile.constantpool.PoolEntry e : model.constantPool()) {
            if (e instanceof java.lang.classfile.constantpool.ClassEntry c
                && Set.of("dev/jpipeline/simt/CheckedLaunch", "dev/jpipeline/simt/CheckedSession")
                    .contains(c.asInternalName())) {
                named.add(c.asInternalName());
            }
        }
        assertEquals(List.of(), named, "checked execution's types named by BlockScheduler");
    }
}
