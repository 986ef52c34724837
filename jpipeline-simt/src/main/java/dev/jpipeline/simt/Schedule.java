package dev.jpipeline.simt;

import java.util.Objects;

/**
 * One schedule of checked execution: the seed that picks, at each scheduling point, which CUDA thread runs next
 * and when each asynchronous copy lands, and how many of those decisions the seed makes (the rest are made
 * round-robin, which a shrunk schedule uses to show how early a bug can be provoked). No CUDA counterpart: a GPU
 * offers no control over its schedule.
 *
 * <p>Its text form, {@code SEED} or {@code SEED/DECISIONS}, is what replay lines print and {@link #parse} reads.
 *
 * @param seed                the seed of the schedule's choices
 * @param randomizedDecisions how many decisions, from the first, the seed makes; {@link Integer#MAX_VALUE} for
 *                            all of them; at least 0
 */
public record Schedule(long seed, int randomizedDecisions) {

    /** Every decision of the schedule is made by its seed. */
    public static final int ALL = Integer.MAX_VALUE;

    /**
     * Checks the decision count.
     *
     * @throws IllegalArgumentException when {@code randomizedDecisions} is negative
     */
    public Schedule {
        if (randomizedDecisions < 0) {
            throw new IllegalArgumentException("a schedule's randomized decisions must be at least 0, got "
                + randomizedDecisions);
        }
    }

    /**
     * A schedule whose every decision its seed makes.
     *
     * @param seed the seed
     * @return {@code new Schedule(seed, ALL)}
     */
    public static Schedule of(long seed) {
        return new Schedule(seed, ALL);
    }

    /**
     * Reads a schedule's text form.
     *
     * @param text {@code SEED} or {@code SEED/DECISIONS}, decimal; not null
     * @return the schedule
     * @throws IllegalArgumentException when the text is not of that form (the message quotes it)
     */
    public static Schedule parse(String text) {
        Objects.requireNonNull(text, "text");
        int slash = text.indexOf('/');
        try {
            if (slash < 0) {
                return of(Long.parseLong(text.strip()));
            }
            return new Schedule(Long.parseLong(text.substring(0, slash).strip()),
                Integer.parseInt(text.substring(slash + 1).strip()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("a schedule is SEED or SEED/DECISIONS (decimal numbers), got '" + text
                + "'", e);
        }
    }

    @Override
    public String toString() {
        return randomizedDecisions == ALL ? Long.toString(seed) : seed + "/" + randomizedDecisions;
    }
}
