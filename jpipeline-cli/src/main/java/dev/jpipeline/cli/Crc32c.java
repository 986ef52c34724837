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

    static long combine(long crc1, long crc2, long length2) {
        if (length2 <= 0) {
            return crc1;
        }
        long[] even = new long[32];
        long[] odd = new long[32];
        odd[0] = POLYNOMIAL;                // the operator for one zero bit
        for (int n = 1; n < 32; n++) {
            odd[n] = 1L << (n - 1);
        }
        square(even, odd);                  // two zero bits
        square(odd, even);                  // four zero bits
        long crc = crc1;
        long remaining = length2;
        do {
            square(even, odd);              // first pass: one zero byte, then doubling
            if ((remaining & 1) != 0) {
                crc = times(even, crc);
            }
            remaining >>>= 1;
            if (remaining == 0) {
                break;
            }
            square(odd, even);
            if ((remaining & 1) != 0) {
                crc = times(odd, crc);
            }
            remaining >>>= 1;
        } while (remaining != 0);
        return crc ^ crc2;
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
