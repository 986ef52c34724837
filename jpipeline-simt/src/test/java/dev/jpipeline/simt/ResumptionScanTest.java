package dev.jpipeline.simt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.Pipeline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.SerializedLambda;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The static scan that decides whether a kernel may run as a plain loop over its block's threads (issue 27). */
@Timeout(30)
class ResumptionScanTest {

    /** The switch as the build set it: the strands-only run sets it off, and these tests are of the scan itself. */
    private String switchAsSet;

    @BeforeEach
    void switchOn() {
        switchAsSet = System.getProperty(ResumptionScan.SWITCH);
        System.setProperty(ResumptionScan.SWITCH, "true");
    }

    @AfterEach
    void restoreSwitch() {
        if (switchAsSet == null) {
            System.clearProperty(ResumptionScan.SWITCH);
        } else {
            System.setProperty(ResumptionScan.SWITCH, switchAsSet);
        }
    }

    private static ResumptionScan.Verdict scan(KernelBody body) {
        return ResumptionScan.scan(body);
    }

    private static void assertPlain(KernelBody body) {
        ResumptionScan.Verdict verdict = scan(body);
        assertTrue(verdict.plain(), () -> "expected plain, got: " + verdict.reason());
        assertNull(verdict.reason());
    }

    /** Asserts not plain with a reason that contains every fragment; returns the reason. */
    private static String assertNotPlain(KernelBody body, String... fragments) {
        ResumptionScan.Verdict verdict = scan(body);
        assertFalse(verdict.plain(), "expected not plain");
        for (String fragment : fragments) {
            assertTrue(verdict.reason().contains(fragment),
                () -> "reason '" + verdict.reason() + "' lacks '" + fragment + "'");
        }
        return verdict.reason();
    }

    /** The line number in this test's source of the only line that ends with {@code marker}. */
    private static int lineOf(String marker) throws Exception {
        List<String> lines = Files.readAllLines(Path.of("src/test/java/dev/jpipeline/simt/ResumptionScanTest.java"));
        int found = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).endsWith(marker)) {
                assertEquals(-1, found, "two lines end with " + marker);
                found = i + 1;
            }
        }
        assertTrue(found > 0, marker);
        return found;
    }

    // ---- plain kernels ----

    @Test
    void anEmptyLambdaIsPlain() {
        assertPlain(ctx -> { });
    }

    @Test
    void aVectorAddIntoAMemorySegmentIsPlain() {
        int n = 1000;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(ValueLayout.JAVA_FLOAT, n);
            MemorySegment b = arena.allocate(ValueLayout.JAVA_FLOAT, n);
            MemorySegment c = arena.allocate(ValueLayout.JAVA_FLOAT, n);
            KernelBody vectorAdd = ctx -> {
                long i = (long) ctx.blockIdx().x() * ctx.blockDim().x() + ctx.threadIdx().x();
                if (i < n) {
                    float sum = a.getAtIndex(ValueLayout.JAVA_FLOAT, i) + b.getAtIndex(ValueLayout.JAVA_FLOAT, i);
                    c.setAtIndex(ValueLayout.JAVA_FLOAT, i, Math.max(sum, Float.MIN_VALUE));
                }
                if (i > Integer.MAX_VALUE) {
                    throw new IllegalStateException("thread " + ctx.threadIdx() + " of " + i + " is out of range");
                }
            };
            assertPlain(vectorAdd);
        }
    }

    static void staticKernel(KernelContext ctx) {
        MemorySegment smem = ctx.dynamicShared();
        ctx.storeInt(smem, ctx.threadRank(), ctx.laneId() + ctx.warpId() + (int) ctx.globalRank());
        square(ctx.threadRank());
    }

    private static int square(int x) {
        return Math.multiplyExact(x, x);
    }

    @Test
    void aMethodReferenceToAStaticKernelMethodIsPlain() {
        assertPlain(ResumptionScanTest::staticKernel);
    }

    static final class PlainKernel implements KernelBody {
        private static final long serialVersionUID = 1L;
        private final int scale;

        PlainKernel(int scale) {
            this.scale = scale;
        }

        @Override
        public void run(KernelContext ctx) {
            int value = scaled(ctx.threadRank());
            if (value < 0) {
                throw new KernelCheckFailed(value);
            }
        }

        int scaled(int x) {  // overridable in form, but the class is final
            return x * scale;
        }
    }

    /** A user Throwable: its constructor is scanned like a helper. */
    static final class KernelCheckFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        KernelCheckFailed(int value) {
            super("value " + value);
        }
    }

    @Test
    void aKernelClassIsPlain() {
        assertPlain(new PlainKernel(3));
    }

    @Test
    void anAnonymousKernelClassIsPlain() {
        assertPlain(new KernelBody() {
            private static final long serialVersionUID = 1L;

            @Override
            public void run(KernelContext ctx) {
                ctx.threadIdx().x();
            }
        });
    }

    // ---- kernels that reach a resumption point ----

    private static void helperThatSyncs(KernelContext ctx) {
        ctx.threadRank();
        ctx.syncThreads();  // HELPER-SYNC
    }

    private static void outerHelper(KernelContext ctx) {
        helperThatSyncs(ctx);
    }

    @Test
    void aHelperOfTheSameClassThatSyncsIsNotPlain() throws Exception {
        assertNotPlain(ctx -> outerHelper(ctx), "calls KernelContext.syncThreads at ResumptionScanTest.java:"
            + lineOf("// HELPER-SYNC") + " (in ResumptionScanTest.helperThatSyncs)");
    }

    @Test
    void directSyncsAndGroupsAreNotPlain() {
        assertNotPlain(ctx -> ctx.syncThreads(), "KernelContext.syncThreads", "resumption point");
        assertNotPlain(ctx -> ctx.syncWarp(), "KernelContext.syncWarp");
        assertNotPlain(ctx -> ctx.syncWarp(0xffff), "KernelContext.syncWarp");
        assertNotPlain(ctx -> ctx.diverge(), "KernelContext.diverge");
        assertNotPlain(ctx -> ctx.block().sync(), "ThreadBlock.sync");
        assertPlain(ctx -> ctx.block().threadRank());
        assertNotPlain(ctx -> ((dev.jpipeline.Group) ctx.block()).sync(), "dev.jpipeline.Group.sync");
        java.util.function.Supplier<Integer> made = () -> 1;
        assertNotPlain(ctx -> ctx.shared("k", made), "KernelContext.shared", "init");
    }

    @Test
    void sharedWithALambdaInitMadeAtTheCallAndAStringKeyIsPlain() {
        assertPlain(ctx -> ctx.shared("k", () -> new long[4]));
        assertPlain(ctx -> ctx.sharedArray("cells", 64));
    }

    @Test
    void aPipelineOperationIsNotPlain() {
        assertNotPlain(ctx -> Pipeline.make().producerAcquire(), "dev.jpipeline.Pipeline.make",
            "may wait for other threads");
        assertNotPlain(ctx -> PipelinePrimitives.pipelineCommit(), "PipelinePrimitives.pipelineCommit");
    }

    @Test
    void anUnknownJdkCallIsNotPlain() throws Exception {
        assertNotPlain(ctx -> {
            try {
                Thread.sleep(1);  // SLEEP
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "calls an unknown method java.lang.Thread.sleep at ResumptionScanTest.java:" + lineOf("// SLEEP"));
        assertNotPlain(ctx -> System.out.println(ctx.threadRank()), "unknown method java.io.PrintStream.println");
    }

    @Test
    void aLambdaPassedToAJdkMethodIsNotPlain() {
        int[] data = new int[4];
        assertNotPlain(ctx -> Arrays.setAll(data, i -> i * ctx.threadRank()), "java.util.Arrays.setAll");
        // the nested lambda's own code is scanned too: a sync inside it is named even before the JDK call
        assertNotPlain(ctx -> {
            Runnable sync = () -> ctx.syncThreads();
            sync.run();
        }, "KernelContext.syncThreads", "a lambda in ResumptionScanTest");
    }

    @Test
    void aMonitorAndAnObjectsToStringAreNotPlain() {
        Object lock = new Object();
        assertNotPlain(ctx -> {
            synchronized (lock) {
                ctx.threadRank();
            }
        }, "monitor");
        assertNotPlain(ctx -> {
            throw new IllegalStateException("lock " + lock);
        }, "converts an object to a string", "toString");
        assertPlain(ctx -> {
            throw new IllegalStateException("thread " + ctx.threadIdx() + " of block " + ctx.blockIdx());
        });
        // the operand's type shows only on one branch: the other may be any object
        assertNotPlain(ctx -> {
            Object either = ctx.threadRank() == 0 ? lock : ctx.threadIdx();
            throw new IllegalStateException("either " + (ctx.threadRank() == 1 ? either : ctx.threadIdx()));
        }, "converts an object to a string");
    }

    private static int evenDepth(int n) {
        return n == 0 ? 0 : oddDepth(n - 1);
    }

    private static int oddDepth(int n) {
        return n == 0 ? 1 : evenDepth(n - 1);
    }

    private static void recurseThenSync(KernelContext ctx, int n) {
        if (n > 0) {
            recurseThenSync(ctx, n - 1);
        }
        evenDepth(n);
    }

    @Test
    void recursionBetweenHelpersTerminates() {
        assertPlain(ctx -> evenDepth(ctx.threadRank()));
        assertPlain(ctx -> recurseThenSync(ctx, ctx.threadRank()));
    }

    private static void chain0(KernelContext c) { chain1(c); }
    private static void chain1(KernelContext c) { chain2(c); }
    private static void chain2(KernelContext c) { chain3(c); }
    private static void chain3(KernelContext c) { chain4(c); }
    private static void chain4(KernelContext c) { chain5(c); }
    private static void chain5(KernelContext c) { chain6(c); }
    private static void chain6(KernelContext c) { chain7(c); }
    private static void chain7(KernelContext c) { chain8(c); }
    private static void chain8(KernelContext c) { chain9(c); }
    private static void chain9(KernelContext c) { chain10(c); }
    private static void chain10(KernelContext c) { chain11(c); }
    private static void chain11(KernelContext c) { chain12(c); }
    private static void chain12(KernelContext c) { chain13(c); }
    private static void chain13(KernelContext c) { chain14(c); }
    private static void chain14(KernelContext c) { chain15(c); }
    private static void chain15(KernelContext c) { chain16(c); }
    private static void chain16(KernelContext c) { chain17(c); }
    private static void chain17(KernelContext c) { c.threadRank(); }

    @Test
    void aTooDeepChainOfHelpersIsNotPlain() {
        assertNotPlain(ctx -> chain0(ctx), "deeper than " + ResumptionScan.MAX_DEPTH);
        assertPlain(ctx -> chain3(ctx));
    }

    static class OpenKernel implements KernelBody {
        private static final long serialVersionUID = 1L;

        @Override
        public void run(KernelContext ctx) {
            step(ctx);
        }

        void step(KernelContext ctx) {  // a subclass may override it with a sync
            ctx.threadRank();
        }
    }

    @Test
    void anOverridableHelperIsNotPlain() {
        assertNotPlain(new OpenKernel(), "overridable method ResumptionScanTest.OpenKernel.step", "static, private or final");
    }

    @Test
    void theSwitchOffMakesEveryKernelNotPlain() {
        KernelBody empty = ctx -> { };
        assertPlain(empty);
        String before = System.getProperty(ResumptionScan.SWITCH);
        System.setProperty(ResumptionScan.SWITCH, "false");
        try {
            assertNotPlain(empty, "compilation switched off (-Djpipeline.simt.compile=false)");
            assertNotPlain(new PlainKernel(1), "switched off");
        } finally {
            if (before == null) {
                System.clearProperty(ResumptionScan.SWITCH);
            } else {
                System.setProperty(ResumptionScan.SWITCH, before);
            }
        }
        assertPlain(empty);
    }

    @Test
    void aVerdictIsCachedPerKernelClass() {
        KernelBody first = null;
        ResumptionScan.Verdict verdict = null;
        for (int i = 0; i < 2; i++) {
            KernelBody body = ctx -> ctx.syncThreads();  // one capture site: one class
            if (first == null) {
                first = body;
                verdict = scan(body);
            } else {
                assertSame(first.getClass(), body.getClass());
                assertSame(verdict, scan(body));
            }
        }
    }

    @Test
    void serializationFindsTheSameLambdaAsReflection() throws Exception {
        MemorySegment captured = MemorySegment.ofArray(new int[4]);  // not serializable: the stream stops before it
        KernelBody body = ctx -> captured.setAtIndex(ValueLayout.JAVA_INT, ctx.threadRank(), 1);
        SerializedLambda byStream = ResumptionScan.serializedLambdaByStream(body);
        SerializedLambda byReflection = ResumptionScan.serializedLambda(body);
        assertEquals(byReflection.getImplClass(), byStream.getImplClass());
        assertEquals(byReflection.getImplMethodName(), byStream.getImplMethodName());
        assertEquals(byReflection.getImplMethodSignature(), byStream.getImplMethodSignature());
        assertSame(captured, byStream.getCapturedArg(0));
    }
}
