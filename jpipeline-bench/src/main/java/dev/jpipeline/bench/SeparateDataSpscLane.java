package dev.jpipeline.bench;

/**
 * A JCTools hand-off lane shaped like a pipeline stage: the queue carries a slot number and the item travels in a
 * separate {@code long[]} of twice the queue's capacity, so that the consumer reads two cache lines one after the
 * other (the queue's slot, then the data), as a pipeline consumer reads its stage barrier and then its stage. Not
 * a way anyone uses JCTools: an anatomy of the gap between the queue and a pipeline.
 *
 * <p>Slot i of 2C (C the queue's capacity, rounded up to a power of two as the queue does) is written again only
 * after the offer of item i - 1 succeeded, so after item i - 1 - C was polled and item i - 2C was checked.
 */
final class SeparateDataSpscLane extends SpscLane {

    private final long[] data;

    SeparateDataSpscLane(int capacity, String name) {
        super(capacity, name);
        data = new long[2 * Integer.highestOneBit(2 * capacity - 1)];
    }

    @Override
    long item(Long slot) {
        return data[(int) (long) slot];
    }

    @Override
    void produce(long first) {
        long[] data = this.data;
        int mask = data.length - 1;
        Long[] boxes = BOXES;
        for (int i = 0; i < ITEMS; i++) {
            data[i & mask] = i;
            offer(boxes[i & mask]);
        }
    }
}
