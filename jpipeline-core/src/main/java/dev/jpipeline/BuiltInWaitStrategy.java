package dev.jpipeline;

/** The constants of {@link WaitStrategy}: named, so that they print and compare as their names. */
enum BuiltInWaitStrategy implements WaitStrategy {
    BUSY_SPIN {
        @Override
        public boolean idle(int attempt) {
            Thread.onSpinWait();
            return true;
        }
    },
    YIELDING {
        @Override
        public boolean idle(int attempt) {
            if (attempt < SPINS_BEFORE_YIELDING) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
            return true;
        }
    },
    ADAPTIVE {
        @Override
        public boolean idle(int attempt) {
            if (attempt < ADAPTIVE_SPINS) {
                Thread.onSpinWait();
                return true;
            }
            if (attempt < ADAPTIVE_SPINS + ADAPTIVE_YIELDS) {
                Thread.yield();
                return true;
            }
            return false;
        }
    },
    BLOCKING {
        @Override
        public boolean idle(int attempt) {
            return false;
        }
    };

    /** YIELDING spins this often before its first yield: a peer that is about to arrive costs no system call. */
    private static final int SPINS_BEFORE_YIELDING = 1 << 7;
    /** ADAPTIVE spins about 5-20 us (one onSpinWait is 10-40 ns), covering a cross-core hand-off many times. */
    private static final int ADAPTIVE_SPINS = 1 << 9;
    /** ...then yields this often, giving a descheduled peer the core, before it parks. */
    private static final int ADAPTIVE_YIELDS = 1 << 6;
}
