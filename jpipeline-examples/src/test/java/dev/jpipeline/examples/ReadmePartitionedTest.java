package dev.jpipeline.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The README's partitioned pipeline runs, and its consumers together sum every long exactly once. */
@Timeout(120)
class ReadmePartitionedTest {

    @Test
    void consumersSumEveryLongOnce() {
        long n = (long) ReadmePartitioned.BATCHES * ReadmePartitioned.BATCH;
        assertEquals(n * (n - 1) / 2, ReadmePartitioned.run());
    }
}
