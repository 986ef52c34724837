package dev.jpipeline.cli;

import dev.jpipeline.WaitStrategy;
import java.util.Locale;

/** The {@code --wait} choices: how the pipeline's threads wait for stages. */
enum WaitOption {
    /** {@link WaitStrategy#BUSY_SPIN}. */
    SPIN(WaitStrategy.BUSY_SPIN),
    /** {@link WaitStrategy#YIELDING}. */
    YIELD(WaitStrategy.YIELDING),
    /** {@link WaitStrategy#ADAPTIVE}. */
    ADAPTIVE(WaitStrategy.ADAPTIVE),
    /** {@link WaitStrategy#BLOCKING}. */
    BLOCK(WaitStrategy.BLOCKING);

    private final WaitStrategy strategy;

    WaitOption(WaitStrategy strategy) {
        this.strategy = strategy;
    }

    /** The strategy this choice names. */
    WaitStrategy strategy() {
        return strategy;
    }

    /** The name on the command line. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
