package dev.jpipeline.cli;

/**
 * Combining CRC-32C values of consecutive pieces: {@code combine(crc(A), crc(B), |B|) == crc(A + B)}. This is
 * what lets several consumers checksum their own parts of a stage and still produce the JDK's
 * {@link java.util.zip.CRC32C} of the whole stream.
 *
 * <p>Appending |B| zero bytes to A's CRC is a linear map over GF(2); the map for 2^k zero bytes is a 32 × 32 bit
 * matrix, squared once per bit of |B| (the method zlib's {@code crc32_combine} uses). Castagnoli polynomial,
 * reflected: 0x82F63B78.
 */
final class Crc32c {

    private static final long POLYNOMIAL = 0x82F63B78L;

    private Crc32c() {
    }

    /** {@code crc(A + B)} from {@code crc(A)}, {@code crc(B)} and {@code |B|}. */
    static long combine(long crc1, long crc2, long length2) {
        return times(zeros(length2), crc1) ^ crc2;
    }

    /**
     * The operator that appends {@code length} zero bytes to a CRC-32C: {@code combine(crc1, crc2, length)} is
     * {@code apply(zeros(length), crc1) ^ crc2}. Worth keeping when many pieces have the same length.
     */
    static long[] zeros(long length) {
        long[] result = new long[32];
        for (int n = 0; n < 32; n++) {
            result[n] = 1L << n;            // identity
        }
        long[] even = new long[32];
        long[] odd = new long[32];
        odd[0] = POLYNOMIAL;                // the operator for one zero bit
        for (int n = 1; n < 32; n++) {
            odd[n] = 1L << (n - 1);
        }
        square(even, odd);                  // two zero bits
        square(odd, even);                  // four zero bits
        long[] power = odd;
        long[] spare = even;
        for (long remaining = length; remaining != 0; remaining >>>= 1) {
            square(spare, power);           // first pass: one zero byte, then doubling
            long[] swap = power;
            power = spare;
            spare = swap;
            if ((remaining & 1) != 0) {
                for (int n = 0; n < 32; n++) {
                    result[n] = times(power, result[n]);
                }
            }
        }
        return result;
    }

    /** {@code operator} (from {@link #zeros}) applied to {@code crc}. */
    static long apply(long[] operator, long crc) {
        return times(operator, crc);
    }

    private static long times(long[] matrix, long vector) {
        long sum = 0;
        for (int i = 0; vector != 0; i++, vector >>>= 1) {
            if ((vector & 1) != 0) {
                sum ^= matrix[i];
            }
        }
        return sum;
    }

    private static void square(long[] result, long[] matrix) {
        for (int n = 0; n < 32; n++) {
            result[n] = times(matrix, matrix[n]);
        }
    }
}
