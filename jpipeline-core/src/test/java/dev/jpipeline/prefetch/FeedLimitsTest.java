package dev.jpipeline.prefetch;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The feeds at their limits: the most stages in every form (one more refused), and chunks of one byte, which
 * deliver every byte in order.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)    // a hang fails
class FeedLimitsTest {

    @Test
    void theMostStagesWorkForEveryFormAndOneMoreIsRefused() {
        byte[] data = new byte[3000];
        new Random(11).nextBytes(data);
        int most = Prefetch.MAX_STAGES;
        try (Chunks chunks = Prefetch.from(new ByteArrayInputStream(data)).chunk(7).stages(most).open()) {
            long read = 0;
            for (MemorySegment c : chunks) {
                read += c.byteSize();
            }
            assertEquals(data.length, read);
        }
        assertEquals(data.length, Prefetch.from(new ByteArrayInputStream(data)).chunk(7).stages(most).parallel(1, 2)
            .reduce(0L, MemorySegment::byteSize, Long::sum));
        assertEquals(data.length, Prefetch.from(MemorySegment.ofArray(data)).chunk(7).stages(most).parallel(2, 2)
            .reduce(0L, MemorySegment::byteSize, Long::sum));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Prefetch.from(MemorySegment.ofArray(data)).stages(most + 1));
        assertTrue(e.getMessage().contains("1 to " + most + " stages"), e.getMessage());
    }

    @Test
    void chunksOfOneByteDeliverEveryByteInOrderInBothForms() {
        byte[] data = new byte[3000];
        new Random(9).nextBytes(data);
        for (InputStream in : List.of(new ByteArrayInputStream(data))) {
            try (Chunks chunks = Prefetch.from(in).chunk(1).stages(7).open()) {
                int at = 0;
                for (MemorySegment c : chunks) {
                    assertEquals(data[at++], c.get(JAVA_BYTE, 0));
                }
                assertEquals(data.length, at);
            }
        }
        long sum = Prefetch.from(MemorySegment.ofArray(data)).chunk(1).stages(3).parallel(1, 2)
            .reduce(0L, MemorySegment::byteSize, Long::sum);
        assertEquals(data.length, sum);
    }
}
