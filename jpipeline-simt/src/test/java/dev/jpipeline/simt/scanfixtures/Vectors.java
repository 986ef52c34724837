package dev.jpipeline.simt.scanfixtures;

/** User code of another class that kernels call (ResumptionScanTest): a record, statics, and an open class. */
public final class Vectors {

    private Vectors() {
    }

    /** A small value a kernel makes and reads. */
    public record Pair(long a, long b) {
        public long sum() {
            return a + b;
        }

        public Pair scaled(long k) {
            return new Pair(a * k, b * k);
        }
    }

    public static long dot(long[] x, long[] y) {
        long s = 0;
        for (int i = 0; i < x.length; i++) {
            s += x[i] * y[i];
        }
        return s;
    }

    public static void sleepy() throws InterruptedException {
        Thread.sleep(1);
    }

    /** Overridable: its code depends on the receiver's class. */
    public static class Open {
        public long value() {
            return 1;
        }
    }
}
