package dev.jpipeline;

import java.time.Duration;
import java.time.Instant;

/**
 * The words of a misuse fuzzer program's scripts ({@link MisuseFuzzer}): the operations a rank performs
 * ({@link Step}), with their time arguments, segments, barrier tokens, file channels and copies.
 */
final class FuzzScripts {

    private FuzzScripts() {
    }

    enum Op {
        ACQUIRE, ACQUIRE_INTERRUPTIBLY, COMMIT, WAIT, WAIT_INTERRUPTIBLY, WAIT_FOR, WAIT_UNTIL, RELEASE, QUIT, CLOSE,
        QUERY, WAIT_PRIOR, COMMIT_BARRIER, MEMCPY, MEMCPY_FILE, FOREIGN, INTERRUPT, BOGUS_GROUP_MAKE,
        B_ARRIVE, B_ARRIVE_N, B_DROP, B_AWAIT_BAD, B_TRY_WAIT, B_TRY_WAIT_FOR, B_TRY_WAIT_UNTIL, B_TRY_PARITY,
        B_MEMCPY, B_QUERY
    }

    /** Time arguments: a Duration, or an Instant relative to the call. */
    enum Time {
        NULL, ZERO, NEG_NANO, NEG_SECOND, NANO, NANOS_150, MICRO, MILLI, MILLIS_15, CENTURY, ABSURD;

        Duration duration() {
            return switch (this) {
                case NULL -> null;
                case ZERO -> Duration.ZERO;
                case NEG_NANO -> Duration.ofNanos(-1);
                case NEG_SECOND -> Duration.ofSeconds(-1);
                case NANO -> Duration.ofNanos(1);
                case NANOS_150 -> Duration.ofNanos(150);
                case MICRO -> Duration.ofNanos(1_000);
                case MILLI -> Duration.ofMillis(1);
                case MILLIS_15 -> Duration.ofMillis(15);
                case CENTURY -> Duration.ofDays(36_525);
                case ABSURD -> Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);
            };
        }

        Instant instant() {
            return switch (this) {
                case NULL -> null;
                case NEG_NANO -> Instant.MIN;
                case ABSURD -> Instant.MAX;
                default -> Instant.now().plus(duration());
            };
        }

        /** Whether a wait with this limit must end soon. */
        boolean isShort() {
            return this != NULL && this != CENTURY && this != ABSURD;
        }

        long nanos() {
            return isShort() ? Math.max(0, duration().toNanos()) : Long.MAX_VALUE;
        }
    }

    /** Where a segment comes from. */
    enum Seg {
        HEAP_BYTES, HEAP_LONGS, NATIVE, READ_ONLY, CONFINED_OWN, CONFINED_OTHER, CLOSED, CLOSE_AFTER, MISALIGNED,
        OVERLAP, NULL
    }

    /** Barrier tokens: the thread's own, or values that are no token of this barrier. */
    enum Token { OWN, NEXT, OTHER_BARRIER, PLAIN_PHASE, MINUS_ONE, BIT_40, LONG_MIN, LONG_MAX }

    enum Channel { GOOD, FAILING, NO_PROGRESS, NULL }

    /**
     * A copy: {@code bytes} (maybe invalid) between segments of kinds {@code dst}/{@code src} of lengths
     * {@code dstLen}/{@code srcLen}; {@code alignment} 0 for a plain byte count, else an AlignedSize.
     */
    record CopySpec(long bytes, Seg dst, long dstLen, Seg src, long srcLen, long overlapOffset, long alignment,
                    int groupForm, Channel channel, long position) {
        /** See {@link FuzzPrograms.Program#avoidingKnownBugs()}. */
        CopySpec avoidingKnownBugs(Op op) {
            Seg d = dst == Seg.CONFINED_OWN || dst == Seg.CONFINED_OTHER || dst == Seg.CLOSED ? Seg.NATIVE : dst;
            Seg s = src == Seg.CONFINED_OWN || src == Seg.CONFINED_OTHER || src == Seg.CLOSED ? Seg.NATIVE : src;
            if (channel != null && d == Seg.HEAP_LONGS) {
                d = Seg.HEAP_BYTES;                 // a file read into a long[] segment fails in the engine
            }
            Channel ch = channel == Channel.NO_PROGRESS ? Channel.FAILING : channel;     // #4 spins forever
            long b = bytes;
            long dl = dstLen;
            long sl = srcLen;
            if (op == Op.B_MEMCPY && bytes > 64 * 1024) {
                b = 64;                             // an over-arrival steals a barrier copy's pending arrival
                dl = Math.min(dl, 64);
                sl = Math.min(sl, 64);
            }
            return new CopySpec(b, d, dl, s, sl, overlapOffset, alignment, groupForm, ch, position);
        }

        @Override
        public String toString() {
            String size = alignment == 0 ? String.valueOf(bytes) : "AlignedSize(" + alignment + "," + bytes + ")";
            String form = groupForm == 0 ? "" : groupForm == 1 ? "group," : "bogusGroup,";
            if (channel != null) {
                return "(" + form + dst + "[" + dstLen + "] <- " + channel + "@" + position + ", " + size + ")";
            }
            return "(" + form + dst + "[" + dstLen + "] <- " + src + "[" + srcLen + "]"
                + (src == Seg.OVERLAP ? "+" + overlapOffset : "") + ", " + size + ")";
        }
    }

    record Step(Op op, Time time, long n, Token token, CopySpec copy, Op inner, int target) {
        /** See {@link FuzzPrograms.Program#avoidingKnownBugs()}. */
        Step avoidingKnownBugs(int barrierExpected) {
            Time t = time == Time.NANO || time == Time.NANOS_150 ? Time.MICRO    // #12 1-200 ns wait forever
                : time == Time.NULL ? Time.ZERO : time;                              // null limits not always checked
            return switch (op) {
                case FOREIGN -> new Step(Op.QUERY, null, 0, null, null, null, 0);    // #6 foreign handle: assert
                case B_AWAIT_BAD -> new Step(Op.B_QUERY, null, 0, null, null, null, 0);   // #14 tokens unchecked
                case B_ARRIVE_N -> n > barrierExpected ? new Step(Op.B_ARRIVE, null, 0, null, null, null, 0)
                    : this;                                                          // #11 overflow
                case MEMCPY, B_MEMCPY, MEMCPY_FILE -> new Step(op, t, n, token, copy.avoidingKnownBugs(op), inner,
                    target);
                default -> new Step(op, t, n, token, copy, inner, target);
            };
        }

        boolean mayBlock() {
            return switch (op) {
                case ACQUIRE, ACQUIRE_INTERRUPTIBLY, WAIT, WAIT_INTERRUPTIBLY, WAIT_FOR, WAIT_UNTIL, FOREIGN -> true;
                default -> false;
            };
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder(op.name());
            switch (op) {
                case WAIT_FOR, WAIT_UNTIL, B_TRY_PARITY -> b.append('(').append(time)
                    .append(op == Op.B_TRY_PARITY ? "," + (n == 1) : "").append(')');
                case WAIT_PRIOR, B_ARRIVE_N -> b.append('(').append(n).append(')');
                case COMMIT_BARRIER -> b.append(n == 0 ? "(barrier)" : "(null)");
                case B_AWAIT_BAD, B_TRY_WAIT -> b.append('(').append(token).append(')');
                case B_TRY_WAIT_FOR, B_TRY_WAIT_UNTIL -> b.append('(').append(token).append(',').append(time)
                    .append(')');
                case MEMCPY, MEMCPY_FILE, B_MEMCPY -> b.append(copy);
                case FOREIGN -> b.append("(rank+").append(target).append(": ").append(inner).append(')');
                default -> {
                }
            }
            return b.toString();
        }
    }
}
