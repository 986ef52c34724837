package dev.jpipeline.simt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class Dim3Test {

    @Test
    void linearRankIsXFastestAndInvertible() {
        Dim3 block = Dim3.of(4, 3, 2);
        assertEquals(24, block.volume());
        assertEquals(0, block.linear(new Dim3(0, 0, 0)));
        assertEquals(1, block.linear(new Dim3(1, 0, 0)));
        assertEquals(4, block.linear(new Dim3(0, 1, 0)));
        assertEquals(12, block.linear(new Dim3(0, 0, 1)));
        for (int rank = 0; rank < block.volume(); rank++) {
            assertEquals(rank, block.linear(block.index(rank)));
        }
    }

    @Test
    void extentsAreCheckedLikeALaunch() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Dim3.of(32, 0));
        assertTrue(e.getMessage().contains("every component >= 1"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new Dim3(-1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> Dim3.of(4).linear(new Dim3(4, 0, 0)));
        assertThrows(IllegalArgumentException.class, () -> Dim3.of(4).index(4));
        assertThrows(ArithmeticException.class, () -> Dim3.of(1 << 16, 1 << 16).volume());
        assertEquals(Dim3.of(7, 1, 1), Dim3.of(7));
    }
}
