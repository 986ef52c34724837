package dev.jpipeline;

import org.junit.jupiter.api.Test;

/**
 * The misuse fuzzer ({@link MisuseFuzzer}) on {@link Barrier}: programs whose team shares a barrier (expected counts
 * sometimes invalid, completions that count, throw, copy into the barrier or wait on it) and misuses it: arrivals
 * and updates, drops, waits with values that are no token, timed token and parity waits, copies tied to it. Its
 * seed is printed; {@code -Djpipeline.test.seed=S} reruns it.
 */
class BarrierMisuseFuzzTest {

    @Test
    void randomMisuseOfABarrierNeverHangsAndAlwaysExplains() throws Exception {
        MisuseFuzzer.run(MisuseFuzzer.Component.BARRIER);
    }
}
