package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.jpipeline.copy.CopyEngine;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression tests for the 17 broken promises of issue 8 (API-SPEC.md, "Behaviour promised"), one test per
 * case: {@code p01} .. {@code p16} here; {@code p17} (the tracer) is {@code trace.TracerBoundTest}, and the parts
 * that need API that does not exist yet ({@code Barrier.tryWait*}, {@code WaitStrategy} as an interface) are in
 * BarrierTest and WaitStrategyTest, so that this class compiles against the code before the change.
 *
 * <p>Each test runs every sub-case of its promise on threads of its own, bounded ({@link Bounded}, or
 * {@code ThreadTeam.run} with a limit), and describes what happened in a few words; it then compares the list
 * of outcomes with the promised one, so that one failure message shows every sub-case that broke, hangs
 * included ("still waiting after 2000 ms in PhaseBarrier.park < ..."). A hung sub-case leaves a daemon thread
 * parked (never spinning) where it hangs.
 */
class BrokenPromisesTest {

    /** A bound for sub-cases that must finish at once (or are expected to hang on the code before the change). */
    private static final Duration QUICK = Duration.ofSeconds(2);
    /** A bound for sub-cases that wait for hang detection (1 s patience by default) or copies. */
    private static final Duration SLOW = Duration.ofSeconds(5);

    // ---------------------------------------------------------------------------------------------------------
    // 1. Count partition: a thread that quits before its first operation stays undecided

    // ---------------------------------------------------------------------------------------------------------
    // 2. Thread-scope timed and interruptible waits

    @Test
    void p02_threadScopeTimedWaits() {
        CopyEngine engine = CopyEngine.builder().workers(1).name("p02-copy").build();
        try {
            List<String> outcomes = new ArrayList<>();
            outcomes.add("consumerWaitFor(100 ms): " + withHeldBackCopy(engine, "p02-wait-for",
                pipe -> timedOutInTime(100, () -> pipe.consumerWaitFor(Duration.ofMillis(100)))));
            outcomes.add("consumerWaitUntil(now + 100 ms): " + withHeldBackCopy(engine, "p02-wait-until",
                pipe -> timedOutInTime(90, () -> pipe.consumerWaitUntil(Instant.now().plusMillis(100)))));
            outcomes.add("consumerWaitInterruptibly, interrupted: " + withHeldBackCopy(engine, "p02-interruptibly",
                pipe -> {
                    Thread me = Thread.currentThread();
                    Thread.ofPlatform().daemon().name("p02-interrupter").start(() -> {
                        try {
                            ThreadStates.awaitWaitingIn(me, "consumerWaitInterruptibly");
                            me.interrupt();
                        } catch (AssertionError notWaiting) {
                            // the wait returned at once: the outcome says so
                        }
                    });
                    try {
                        pipe.consumerWaitInterruptibly();
                        return "returned";
                    } catch (InterruptedException e) {
                        return "InterruptedException";
                    }
                }));
            assertEquals(List.of("consumerWaitFor(100 ms): false in time",
                    "consumerWaitUntil(now + 100 ms): false in time",
                    "consumerWaitInterruptibly, interrupted: InterruptedException"), outcomes,
                "thread-scope waits for a copy that has not landed must honour their limit and interrupts");
        } finally {
            engine.close();
        }
    }

    private interface PipeCheck {
        String check(Pipeline pipe) throws Exception;
    }

    /** A thread-scope wait on a batch whose file copy is held back; the gate opens once the outcome is in. */
    private static String withHeldBackCopy(CopyEngine engine, String name, PipeCheck check) {
        GatedFileChannel file = new GatedFileChannel(new byte[4096]);
        CountDownLatch gate = file.gate(0);
        try {
            return Bounded.outcome(name, QUICK, () -> {
                Pipeline pipe = Pipeline.make(engine);
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(Arena.ofAuto().allocate(4096), file, 0, 4096, pipe);
                pipe.producerCommit();
                return check.check(pipe);
            });
        } finally {
            gate.countDown();
        }
    }

    private interface TimedWait {
        boolean await() throws Exception;
    }

    /** "false in time" when the wait returns false after at least {@code atLeastMillis} and not much later. */
    private static String timedOutInTime(long atLeastMillis, TimedWait wait) throws Exception {
        long start = System.nanoTime();
        boolean ready = wait.await();
        long millis = Teams.millisSince(start);
        if (ready) {
            return "true after " + millis + " ms";
        }
        return millis >= atLeastMillis && millis <= 1500 ? "false in time" : "false after " + millis + " ms";
    }

    // ---------------------------------------------------------------------------------------------------------
    // 3. A copy whose shared Arena is closed before or during the copy fails its own stage only

    @Test
    void p03_closedArenaCopyFailsOnlyItsStage(@TempDir Path dir) throws IOException {
        Path path = dir.resolve("after.bin");
        byte[] content = new byte[8192];
        for (int i = 0; i < content.length; i++) {
            content[i] = (byte) (i * 13 + 1);
        }
        Files.write(path, content);
        CopyEngine engine = CopyEngine.builder().workers(1).inlineThreshold(0).name("p03-copy").build();
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            String outcome = Bounded.outcome("p03", Duration.ofSeconds(20), () -> {
                Pipeline pipe = Pipeline.make(engine);
                long size = 16 << 20;
                MemorySegment dst = Arena.ofAuto().allocate(size);
                // first, for certain: the arena closes while the one worker is held in a landing, before the copy
                Arena early = Arena.ofShared();
                MemorySegment earlySrc = early.allocate(size);
                CountDownLatch holding = new CountDownLatch(1);
                CountDownLatch closed = new CountDownLatch(1);
                engine.copy(Arena.ofAuto().allocate(64), Arena.ofAuto().allocate(64), f -> {
                    holding.countDown();
                    Teams.await(closed, "the early arena's close");
                });
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(dst, earlySrc, size, pipe);
                pipe.producerCommit();
                Teams.await(holding, "the worker held in a landing");
                early.close();
                closed.countDown();
                try {
                    pipe.consumerWait();
                    return "a copy from an arena closed before it ran did not fail its stage";
                } catch (StageFailedException expected) {
                    pipe.consumerRelease();
                }
                // then mid-copy, as far as the JDK lets a close land there: a close during a single large copy may
                // also wait for it to end (the copy then landed whole, and its stage completes)
                for (int attempt = 0; attempt < 100; attempt++) {
                    Arena arena = Arena.ofShared();
                    byte mark = (byte) (attempt + 1);           // this attempt's bytes: not 0, not the last's
                    MemorySegment src = arena.allocate(size).fill(mark);
                    CountDownLatch next = new CountDownLatch(1);
                    // the one worker runs this small copy, then goes straight on to the large one
                    engine.copy(Arena.ofAuto().allocate(64), Arena.ofAuto().allocate(64), f -> next.countDown());
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(dst, src, size, pipe);
                    pipe.producerCommit();
                    if (!next.await(5, TimeUnit.SECONDS)) {
                        return "the copy engine did not run a copy within 5 s";
                    }
                    // observed, not timed: close once the copy's first bytes have landed, at a different point of
                    // the copy each time
                    long started = System.nanoTime();
                    while (dst.get(ValueLayout.JAVA_BYTE, 0) != mark && System.nanoTime() - started < 5e9) {
                        Thread.onSpinWait();
                    }
                    for (int spin = 0; spin < (attempt % 10) * 2_000; spin++) {
                        Thread.onSpinWait();
                    }
                    arena.close();
                    try {
                        pipe.consumerWait();
                        for (long at : new long[] {0, size / 2, size - 1}) {    // the source is freed: its mark
                            if (dst.get(ValueLayout.JAVA_BYTE, at) != mark) {
                                return "attempt " + attempt + ": a stage completed with a copy that did not land "
                                    + "whole (byte " + at + ")";
                            }
                        }
                    } catch (StageFailedException e) {
                        // closed while the copy ran: its stage failed
                    }
                    pipe.consumerRelease();
                }
                AtomicReference<Boolean> workerInterrupted = new AtomicReference<>();
                CountDownLatch asked = new CountDownLatch(1);
                engine.copy(Arena.ofAuto().allocate(64), Arena.ofAuto().allocate(64), f -> {
                    workerInterrupted.set(Thread.currentThread().isInterrupted());
                    asked.countDown();
                });
                asked.await(5, TimeUnit.SECONDS);
                MemorySegment fileDst = Arena.ofAuto().allocate(8192);
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(fileDst, channel, 0, 8192, pipe);
                pipe.producerCommit();
                String read;
                try {
                    pipe.consumerWait();
                    read = MemorySegment.ofArray(content).mismatch(fileDst) == -1 ? "ok" : "wrong bytes";
                } catch (StageFailedException e) {
                    read = "failed with " + e.getCause().getClass().getSimpleName();
                }
                pipe.consumerRelease();
                return "worker interrupted: " + workerInterrupted.get() + "; later file read " + read
                    + "; channel open: " + channel.isOpen();
            });
            assertEquals("worker interrupted: false; later file read ok; channel open: true", outcome,
                "closing a shared Arena during copies from it fails those stages only: the worker must not stay "
                    + "interrupted, a later file read on the engine must succeed, the user's channel stay open");
        } finally {
            engine.close();
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // 4. A source that makes no progress fails its stage

    @Test
    void p04_zeroProgressReadFailsItsStage() {
        List<String> outcomes = new ArrayList<>();
        CopyEngine eofEngine = CopyEngine.builder().workers(1).name("p04-eof-copy").build();
        try {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(eofEngine)
                .build();
            GatedFileChannel shortFile = new GatedFileChannel(new byte[1000]);
            outcomes.add("file ends early: " + Bounded.outcome("p04-eof", Duration.ofSeconds(8), () ->
                readIntoStage(state, shortFile, 0, cause -> cause instanceof EOFException ? "EOFException" : null)));
        } finally {
            eofEngine.close();
        }
        CopyEngine engine = CopyEngine.builder().workers(1).name("p04-copy").build();
        ZeroProgressChannel stalled = new ZeroProgressChannel();
        try {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(engine).build();
            outcomes.add("reads returning 0: " + Bounded.outcome("p04-zero", Duration.ofSeconds(8),
                () -> readIntoStage(state, stalled, 4096, cause -> cause instanceof IOException
                    && String.valueOf(cause.getMessage()).contains(stalled.toString())
                    && cause.getMessage().contains("4096") ? "IOException naming the channel and position" : null)));
        } finally {
            stalled.giveUp();                       // ends the worker's reads whatever happened
            engine.close();
        }
        assertEquals(List.of("file ends early: StageFailedException(EOFException)",
                "reads returning 0: StageFailedException(IOException naming the channel and position)"), outcomes,
            "a read without progress must fail its stage after a bounded number of tries; EOF still fails");
    }

    /** Reads 4096 bytes at {@code position} into a solo unified pipeline's stage and waits up to 5 s for it. */
    private static String readIntoStage(PipelineSharedState state, FileChannel channel, long position,
                                        Function<Throwable, String> expectedCause) {
        Pipeline pipe = Pipeline.make(Teams.soloGroup(), state);
        pipe.producerAcquire();
        MemcpyAsync.memcpyAsync(Arena.ofAuto().allocate(4096), channel, position, 4096, pipe);
        pipe.producerCommit();
        try {
            return pipe.consumerWaitFor(Duration.ofSeconds(5)) ? "stage completed" : "no failure within 5 s";
        } catch (StageFailedException e) {
            String cause = expectedCause.apply(e.getCause());
            return "StageFailedException(" + (cause != null ? cause : Bounded.describe(e.getCause())) + ")";
        }
    }

    /** A channel whose positional reads return 0 (no progress, not EOF) until the test gives up. */
    private static final class ZeroProgressChannel extends PositionalReadChannel {
        private volatile boolean givenUp;

        void giveUp() {
            givenUp = true;
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            if (givenUp) {
                throw new IOException("the test gave up on this channel");
            }
            return 0;
        }

        @Override
        public String toString() {
            return "ZeroProgressChannel[p04]";
        }

        @Override
        public long size() {
            return 1 << 20;
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // 5. A mismatched collective make fails on every rank; consecutive makes work

    // ---------------------------------------------------------------------------------------------------------
    // 6. A handle used by another thread than its owner

    @Test
    void p06_foreignThreadUseIsDetected() {
        List<String> outcomes = new ArrayList<>();
        outcomes.add("thread scope, producerAcquire: " + foreignUse(Pipeline::make, pipe -> { },
            Pipeline::producerAcquire));
        outcomes.add("thread scope, producerCommit: " + foreignUse(Pipeline::make, Pipeline::producerAcquire,
            Pipeline::producerCommit));
        outcomes.add("unified, producerAcquire: " + foreignUse(BrokenPromisesTest::soloUnified, pipe -> { },
            Pipeline::producerAcquire));
        outcomes.add("unified, consumerWait: " + foreignUse(BrokenPromisesTest::soloUnified, pipe -> {
            pipe.producerAcquire();
            pipe.producerCommit();
        }, Pipeline::consumerWait));
        String named = "IllegalStateException naming both threads";
        assertEquals(List.of("thread scope, producerAcquire: " + named, "thread scope, producerCommit: " + named,
                "unified, producerAcquire: " + named, "unified, consumerWait: " + named), outcomes,
            "a handle used from another thread than its owner must throw IllegalStateException naming the owner "
                + "and the caller, with or without -ea");
    }

    private static Pipeline soloUnified() {
        return Pipeline.make(Teams.soloGroup(), PipelineSharedState.create(ThreadScope.BLOCK, 2));
    }

    private interface PipeOp {
        void apply(Pipeline pipe) throws Exception;
    }

    /** The owner thread makes a handle and prepares it; a foreign thread then applies {@code op} to it. */
    private static String foreignUse(java.util.function.Supplier<Pipeline> make, PipeOp ownerFirst, PipeOp op) {
        return Bounded.outcome("p06-owner", SLOW, () -> {
            Pipeline pipe = make.get();
            ownerFirst.apply(pipe);
            return Bounded.outcome("p06-foreign", QUICK, () -> {
                try {
                    op.apply(pipe);
                    return "no exception";
                } catch (IllegalStateException e) {
                    String m = String.valueOf(e.getMessage());
                    return m.contains("p06-owner") && m.contains("p06-foreign")
                        ? "IllegalStateException naming both threads" : "IllegalStateException: " + m;
                }
            });
        });
    }

    // ---------------------------------------------------------------------------------------------------------
    // 7. Dead and idle participants: treated as quit, or reported as a hang

    // ---------------------------------------------------------------------------------------------------------
    // 8. A unified thread waiting for a batch it never committed: "would wait forever", whatever the timeout

    @Test
    void p08_unifiedSelfWaitIsRefusedWhateverTheTimeout() {
        Bounded.Run untimed = selfWait("p08-wait", pipe -> {
            pipe.consumerWait();
            return "returned";
        });
        Bounded.Run century = selfWait("p08-100-years",
            pipe -> "returned " + pipe.consumerWaitFor(Duration.ofDays(36_525)));
        Bounded.Run milli = selfWait("p08-1-ms", pipe -> "returned " + pipe.consumerWaitFor(Duration.ofMillis(1)));
        long deadline = System.nanoTime() + QUICK.toNanos();
        List<String> outcomes = List.of("consumerWait: " + untimed.resultBy(deadline),
            "consumerWaitFor(100 years): " + century.resultBy(deadline),
            "consumerWaitFor(1 ms): " + milli.resultBy(deadline));
        String refused = "IllegalStateException 'would wait forever'";
        assertEquals(List.of("consumerWait: " + refused, "consumerWaitFor(100 years): " + refused,
                "consumerWaitFor(1 ms): " + refused), outcomes,
            "a unified thread waiting for a batch it has not committed itself can never be satisfied, whatever "
                + "its timeout");
    }

    private static Bounded.Run selfWait(String name, PipeCheck wait) {
        return Bounded.start(name, () -> {
            Pipeline pipe = soloUnified();
            try {
                return wait.check(pipe);
            } catch (IllegalStateException e) {
                return String.valueOf(e.getMessage()).contains("would wait forever")
                    ? "IllegalStateException 'would wait forever'" : "IllegalStateException: " + e.getMessage();
            }
        });
    }

    // ---------------------------------------------------------------------------------------------------------
    // 9. Absurd arguments: clamped patience; a closed arena named as such, not as an overlap

    @Test
    void p09_absurdArgumentsGetClearAnswers() {
        List<String> outcomes = new ArrayList<>();
        outcomes.add("detectDeadlocks(Long.MAX_VALUE s): " + Outcomes.thrown(() ->
            PipelineSharedState.builder(ThreadScope.BLOCK, 2).detectDeadlocks(Duration.ofSeconds(Long.MAX_VALUE))
                .build()));
        outcomes.add("detectDeadlocks(-1 ms): " + Outcomes.thrown(() ->
            PipelineSharedState.builder(ThreadScope.BLOCK, 2).detectDeadlocks(Duration.ofMillis(-1))));
        for (long size : new long[] {64, 1 << 20}) {
            for (boolean sourceClosed : new boolean[] {true, false}) {
                Arena arena = Arena.ofShared();
                MemorySegment closed = arena.allocate(size);
                arena.close();
                MemorySegment open = Arena.ofAuto().allocate(size);
                Barrier barrier = new Barrier(1);
                String outcome = Outcomes.thrown(() -> MemcpyAsync.memcpyAsync(sourceClosed ? open : closed,
                    sourceClosed ? closed : open, size, barrier));
                outcomes.add((sourceClosed ? "source" : "destination") + " arena closed, " + size + " B: " + outcome);
            }
        }
        String named = "IllegalArgumentException naming the closed segment";
        assertEquals(List.of("detectDeadlocks(Long.MAX_VALUE s): no exception",
                "detectDeadlocks(-1 ms): IllegalArgumentException",
                "source arena closed, 64 B: " + named, "destination arena closed, 64 B: " + named,
                "source arena closed, 1048576 B: " + named, "destination arena closed, 1048576 B: " + named),
            outcomes, "an absurd patience is clamped (a negative one rejected); a barrier copy with a closed arena "
                + "names the closed segment ('closed'), not an overlap");
    }

    // ---------------------------------------------------------------------------------------------------------
    // 10. Confined memory is rejected up front, whatever the size

    @Test
    void p10_confinedSegmentsAreRejectedWhateverTheSize() {
        CopyEngine engine = CopyEngine.builder().workers(1).name("p10-copy").build();
        List<String> outcomes = new ArrayList<>();
        try (Arena confined = Arena.ofConfined()) {
            try {
                for (long size : new long[] {64, 1 << 20}) {
                    MemorySegment src = confined.allocate(size);
                    MemorySegment dst = confined.allocate(size);
                    Pipeline pipe = Pipeline.make(engine);
                    pipe.producerAcquire();
                    outcomes.add("pipeline, " + size + " B: " + confinedOutcome(
                        () -> MemcpyAsync.memcpyAsync(dst, src, size, pipe)));
                    outcomes.add("barrier, " + size + " B: " + confinedOutcome(
                        () -> MemcpyAsync.memcpyAsync(dst, src, size, new Barrier(1))));
                }
            } finally {
                engine.close();         // before the arena closes: no worker may still touch its segments
            }
        }
        String rejected = "IllegalArgumentException saying to use Arena.ofShared() or ofAuto()";
        assertEquals(List.of("pipeline, 64 B: " + rejected, "barrier, 64 B: " + rejected,
                "pipeline, 1048576 B: " + rejected, "barrier, 1048576 B: " + rejected), outcomes,
            "memcpyAsync with a confined segment must be rejected at the call, whatever the size");
    }

    private static String confinedOutcome(Outcomes.Action copy) {
        try {
            copy.run();
            return "accepted";
        } catch (IllegalArgumentException e) {
            String m = String.valueOf(e.getMessage());
            return m.contains("Arena.ofShared()") && m.contains("ofAuto()")
                ? "IllegalArgumentException saying to use Arena.ofShared() or ofAuto()"
                : "IllegalArgumentException: " + m;
        } catch (Exception e) {
            return Bounded.describe(e);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // 11. Over-arrival is checked before it touches the barrier

    // ---------------------------------------------------------------------------------------------------------
    // 12. Timeouts of a few nanoseconds

    @Test
    void p12_nanosecondTimeoutsReturnFalse() {
        long[] nanos = {1, 100, 200, 1000};
        List<Bounded.Run> parityWaits = new ArrayList<>();
        for (long n : nanos) {
            parityWaits.add(Bounded.start("p12-parity-" + n, () -> {
                Barrier pending = new Barrier(2);
                return String.valueOf(pending.tryWaitParity(false, Duration.ofNanos(n)));
            }));
        }
        long deadline = System.nanoTime() + QUICK.toNanos();
        StringJoiner barrier = new StringJoiner(", ");
        for (int i = 0; i < nanos.length; i++) {
            barrier.add(nanos[i] + " ns: " + parityWaits.get(i).resultBy(deadline));
        }
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        CountDownLatch done = new CountDownLatch(1);
        String stage = Bounded.eachRank(2, SLOW, g -> {
            if (g.threadRank() == 0) {
                Pipeline pipe = Pipeline.make(g, state, PipelineRole.PRODUCER);
                done.await(10, TimeUnit.SECONDS);                  // commits nothing: stage 0 stays pending
                pipe.quit();
                return "idle producer";
            }
            Pipeline pipe = Pipeline.make(g, state, PipelineRole.CONSUMER);
            try {
                StringJoiner waits = new StringJoiner(", ");
                for (long n : nanos) {
                    waits.add(n + " ns: " + pipe.consumerWaitFor(Duration.ofNanos(n)));
                }
                return waits.toString();
            } finally {
                done.countDown();
            }
        });
        assertEquals(List.of("tryWaitParity: 1 ns: false, 100 ns: false, 200 ns: false, 1000 ns: false",
                "consumerWaitFor: rank 0: idle producer | rank 1: 1 ns: false, 100 ns: false, 200 ns: false, "
                    + "1000 ns: false"),
            List.of("tryWaitParity: " + barrier, "consumerWaitFor: " + stage),
            "a timeout of 1 ns .. 1 us on a pending phase or stage must return false (its deadline passes at once)");
    }

    // ---------------------------------------------------------------------------------------------------------
    // 13. A completion action that waits on its own barrier, or copies into it

    // ---------------------------------------------------------------------------------------------------------
    // 14. Arrival tokens are checked

    // ---------------------------------------------------------------------------------------------------------
    // 15. CopyEngine.close() from a copy's completion

    @Test
    void p15_engineCloseFromACompletionReturns() {
        CopyEngine engine = CopyEngine.builder().workers(1).name("p15-copy").build();
        String outcome = Bounded.outcome("p15", SLOW, () -> {
            CountDownLatch closed = new CountDownLatch(1);
            AtomicReference<String> result = new AtomicReference<>("completion not run");
            AtomicReference<Thread> worker = new AtomicReference<>();
            engine.copy(Arena.ofAuto().allocate(1 << 20), Arena.ofAuto().allocate(1 << 20), failure -> {
                worker.set(Thread.currentThread());
                try {
                    engine.close();
                    result.set("close returned");
                } catch (RuntimeException e) {
                    result.set("close threw " + Bounded.describe(e));
                } finally {
                    closed.countDown();
                }
            });
            if (!closed.await(QUICK.toMillis(), TimeUnit.MILLISECONDS)) {
                Thread w = worker.get();
                return w == null ? "the copy did not complete within " + QUICK.toMillis() + " ms"
                    : "close did not return within " + QUICK.toMillis() + " ms: the worker is " + w.getState()
                        + " in " + ThreadStates.frames(w, 3);
            }
            return result.get();
        });
        assertEquals("close returned", outcome, "CopyEngine.close() called from a copy's completion must not join "
            + "the worker that runs it");
    }

    // ---------------------------------------------------------------------------------------------------------
    // 16. A closed engine rejects copies of every size

    @Test
    void p16_closedEngineRejectsCopiesOfEverySize() {
        CopyEngine engine = CopyEngine.builder().workers(1).name("p16-copy").build();
        Pipeline threadScope = Pipeline.make(engine);
        Pipeline shared = Pipeline.make(Teams.soloGroup(),
            PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(engine).build());
        engine.close();
        List<String> outcomes = new ArrayList<>();
        for (long size : new long[] {64, 1 << 20}) {
            MemorySegment src = Arena.ofAuto().allocate(size);
            MemorySegment dst = Arena.ofAuto().allocate(size);
            outcomes.add("thread scope, " + size + " B: " + closedOutcome(threadScope, dst, src, size));
            outcomes.add("shared state, " + size + " B: " + closedOutcome(shared, dst, src, size));
        }
        String rejected = "IllegalStateException 'closed'";
        assertEquals(List.of("thread scope, 64 B: " + rejected, "shared state, 64 B: " + rejected,
                "thread scope, 1048576 B: " + rejected, "shared state, 1048576 B: " + rejected), outcomes,
            "a closed copy engine must reject copies of every size, inline-sized ones too");
    }

    private static String closedOutcome(Pipeline pipe, MemorySegment dst, MemorySegment src, long size) {
        pipe.producerAcquire();
        try {
            MemcpyAsync.memcpyAsync(dst, src, size, pipe);
            return "accepted";
        } catch (IllegalStateException e) {
            return String.valueOf(e.getMessage()).contains("closed") ? "IllegalStateException 'closed'"
                : "IllegalStateException: " + e.getMessage();
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Support
}
