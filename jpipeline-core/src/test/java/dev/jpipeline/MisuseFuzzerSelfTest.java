package dev.jpipeline;

import static dev.jpipeline.FuzzOracles.unclear;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.FuzzOracles.UserCompletionException;
import dev.jpipeline.FuzzPrograms.Program;
import org.junit.jupiter.api.Test;

/** The misuse fuzzer's own soundness ({@link MisuseFuzzer}): its oracles and its program generator. */
class MisuseFuzzerSelfTest {

    /** The harness's own checks: the clarity oracle judges known examples right; programs replay exactly. */
    @Test
    void theClarityOracleJudgesKnownExamplesAndProgramsReplayExactly() {
        assertTrue(unclear(new IllegalArgumentException("memcpy_async of 9 bytes runs past the end of the source"))
            == null);
        assertTrue(unclear(new IllegalStateException("consumer_wait after quit: rank 1 (consumer) has left the "
            + "pipeline")) == null);
        assertTrue(unclear(new NullPointerException("dst")) == null);
        assertTrue(unclear(new UserCompletionException()) == null);
        assertTrue(unclear(new IllegalStateException("a copy into stage 1 failed",
            new java.io.EOFException("file ends before byte 9"))) == null);
        assertTrue(unclear(new IllegalStateException("a memcpyAsync tied to barrier phase 3 failed",
            new IllegalArgumentException("memcpy_async source segment is closed (its arena was closed)"))) == null);
        assertTrue(unclear(new AssertionError("a pipeline handle belongs to the thread that made it")) != null);
        assertTrue(unclear(new NullPointerException()) != null);
        assertTrue(unclear(new NullPointerException("Cannot invoke \"Object.hashCode()\" because \"x\" is null"))
            != null);
        assertTrue(unclear(new ArrayIndexOutOfBoundsException(3)) != null);
        assertTrue(unclear(new ClassCastException("a cannot be cast to b")) != null);
        assertTrue(unclear(new ArithmeticException("long overflow")) != null);
        assertTrue(unclear(new IllegalStateException("Already closed")) != null);
        assertTrue(unclear(new IllegalStateException("rank 2")) != null);
        assertTrue(unclear(new IllegalStateException("")) != null);
        assertTrue(unclear(new NumberFormatException("stage count must be a number")) != null);
        assertTrue(unclear(new RuntimeException("the pipeline must not be used")) != null);
        assertTrue(unclear(new IllegalStateException("a copy into stage 1 failed",
            new WrongThreadException("Attempted access outside owning thread"))) != null);
        for (int i = 0; i < 200; i++) {
            assertTrue(Program.generate(7, i).toString().equals(Program.generate(7, i).toString()),
                "program " + i + " is generated the same way twice");
        }
    }
}
