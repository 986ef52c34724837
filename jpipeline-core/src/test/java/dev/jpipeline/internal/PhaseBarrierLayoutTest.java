package dev.jpipeline.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.openjdk.jol.info.ClassLayout;
import org.openjdk.jol.info.FieldLayout;

/** The stage barrier's hot fields have a cache line pair of padding on each side (false-sharing guard). */
class PhaseBarrierLayoutTest {

    private static final int PAD = 128;

    @Test
    void hotFieldsArePaddedOnBothSides() {
        ClassLayout layout = ClassLayout.parseClass(PhaseBarrier.class);
        long first = Long.MAX_VALUE;
        long last = 0;
        for (FieldLayout field : layout.fields()) {
            if (field.name().equals("state") || field.name().equals("waiters")) {
                first = Math.min(first, field.offset());
                last = Math.max(last, field.offset() + field.size());
            }
        }
        assertTrue(first >= PAD, "hot fields start at " + first + ":\n" + layout.toPrintable());
        long after = 0;
        for (FieldLayout field : layout.fields()) {
            if (field.name().startsWith("q")) {
                after = Math.max(after, field.offset() + field.size());
            }
        }
        assertTrue(after - last >= PAD, "padding after the hot fields: " + (after - last) + ":\n"
            + layout.toPrintable());
    }
}
