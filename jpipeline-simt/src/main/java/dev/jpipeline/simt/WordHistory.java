package dev.jpipeline.simt;

import java.util.ArrayList;
import java.util.List;

/**
 * The accesses to one 4-byte word that a later access may race with (RaceDetector), in the manner of FastTrack:
 * the last plain write (or landed copy), the reads since it, and the atomics since it.
 *
 * <pre>
 * Invariants: every access kept is one that no access recorded after it is known to be ordered after, except that
 *  - a write keeps no read or atomic (each was ordered before it, or was reported);
 *  - a read drops the reads it is ordered after, and a read from an earlier block than the one running keeps at
 *    most one such read (blocks run one after another and nothing orders them: any one of them conflicts with a
 *    later write of another block as well as all of them do); atomics alike.
 * So each list holds at most one access per thread of the running block, plus one of earlier blocks. Confined to
 * the turn of a checked launch: plain fields.
 * </pre>
 */
final class WordHistory {

    /** What an access did. */
    enum Kind {
        READ("read", "reads"),
        WRITE("wrote", "writes"),
        ATOMIC("updated it atomically", "atomically updates"),
        COPY("wrote (a memcpy_async that landed)", "writes (a memcpy_async landing)"),
        COPY_READ("read (the source of a memcpy_async that landed)", "reads (the source of a memcpy_async landing)");

        final String past;
        final String present;

        Kind(String past, String present) {
            this.past = past;
            this.present = present;
        }

        boolean writes() {
            return this != READ && this != COPY_READ;
        }

        /** Whether a copy made the access (its issuer's, at the clock). */
        boolean byCopy() {
            return this == COPY || this == COPY_READ;
        }
    }

    /**
     * One access: by thread {@code rank} of block {@code block} (linear) in that thread's epoch {@code clock},
     * after it passed {@code barriers} of its block's {@code __syncthreads}, the thread's access number {@code seq}
     * of the launch, from {@code site} (the kernel frames, with lines), or null where the site was not recorded
     * (RaceDetector: it is on the run that names a race).
     */
    record Access(int block, int rank, int clock, int barriers, int seq, Kind kind, String site) {

        /**
         * Whether this access happens-before {@code a}, whose thread's clock is {@code c}: the same thread, or a
         * thread of the same block that {@code a}'s thread has synchronized with since (a __syncthreads passed
         * after this access, or a chain of releases and acquires, RaceDetector).
         */
        boolean happensBefore(Access a, VectorClock c) {
            return block == a.block && (rank == a.rank || barriers < a.barriers || clock <= c.get(rank));
        }
    }

    Access write;
    final List<Access> reads = new ArrayList<>(2);
    final List<Access> atomics = new ArrayList<>(2);

    /** Keeps {@code a} among {@code list}'s concurrent accesses (see the class comment). */
    static void keep(List<Access> list, Access a, VectorClock clock) {
        boolean earlierBlockKept = false;
        for (int i = list.size() - 1; i >= 0; i--) {
            Access old = list.get(i);
            boolean drop;
            if (old.block != a.block) {
                drop = earlierBlockKept;
                earlierBlockKept = true;
            } else {
                drop = old.happensBefore(a, clock);
            }
            if (drop) {
                list.remove(i);
            }
        }
        list.add(a);
    }
}
