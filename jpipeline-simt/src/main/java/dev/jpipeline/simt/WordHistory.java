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
        COPY("wrote (a memcpy_async that landed)", "writes (a memcpy_async landing)");

        final String past;
        final String present;

        Kind(String past, String present) {
            this.past = past;
            this.present = present;
        }

        boolean writes() {
            return this != READ;
        }
    }

    /**
     * One access: by thread {@code rank} of block {@code block} (linear) in that thread's epoch {@code clock}, the
     * thread's access number {@code seq} of the launch, from {@code site} (the kernel frames, with lines), or null
     * where the site was not recorded (RaceDetector: recorded for a copy, and on the replay that names a race).
     */
    record Access(int block, int rank, int clock, int seq, Kind kind, String site) {
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
                drop = old.rank == a.rank || old.clock <= clock.get(old.rank);
            }
            if (drop) {
                list.remove(i);
            }
        }
        list.add(a);
    }
}
