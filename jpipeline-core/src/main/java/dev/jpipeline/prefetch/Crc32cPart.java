package dev.jpipeline.prefetch;

import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

/**
 * The CRC-32C of a part of a byte sequence, with the part's length, so that parts checksummed separately (by
 * several consumers, chunk by chunk) combine into the JDK's {@link CRC32C} of the whole:
 * {@code of(a).then(of(b)).equals(of(a + b))}. An associative combiner for {@link ParallelPrefetch#reduce}, with
 * {@link #EMPTY} its identity. No CUDA counterpart.
 *
 * <p>Appending n zero bytes to a CRC is a linear map over GF(2); the map for 2^k zero bytes is a 32 x 32 bit
 * matrix, squared once per bit of n (the method of zlib's {@code crc32_combine}). Castagnoli polynomial,
 * reflected: 0x82F63B78. The map of the last length used is kept (parts are mostly of one length), so combining
 * parts of a length seen last costs one matrix-vector product.
 *
 * @param value  the CRC-32C of the part, as {@link CRC32C#getValue()} gives it
 * @param length the part's length in bytes
 */
public record Crc32cPart(long value, long length) {

    /** The CRC-32C of no bytes: the identity of {@link #then}. */
    public static final Crc32cPart EMPTY = new Crc32cPart(0, 0);

    private static final long POLYNOMIAL = 0x82F63B78L;

    /** The zero-appending map of the last length combined: immutable, replaced whole. */
    private static volatile Zeros last = new Zeros(0, zeros(0));

    private record Zeros(long length, long[] operator) {
    }

    /**
     * A part's CRC.
     *
     * @throws IllegalArgumentException when {@code value} is not a 32-bit CRC or {@code length} is negative
     */
    public Crc32cPart {
        if (value < 0 || value > 0xFFFF_FFFFL || length < 0) {
            throw new IllegalArgumentException("a CRC-32C part needs a value in 0..0xFFFFFFFF and a length >= 0, got "
                + value + " over " + length + " bytes");
        }
    }

    /**
     * The CRC-32C of the bytes of {@code part}.
     *
     * @param part the bytes
     * @return their CRC and length
     */
    public static Crc32cPart of(MemorySegment part) {
        CRC32C crc = new CRC32C();
        crc.update(part.asByteBuffer());
        return new Crc32cPart(crc.getValue(), part.byteSize());
    }

    /**
     * The CRC of this part followed by {@code next}.
     *
     * @param next the part that follows this one
     * @return the CRC and length of both, in this order
     */
    public Crc32cPart then(Crc32cPart next) {
        return new Crc32cPart(combine(value, next.value, next.length), length + next.length);
    }

    /**
     * {@code crc(A + B)} from {@code crc(A)}, {@code crc(B)} and {@code |B|}, as {@link CRC32C#getValue()} values.
     *
     * @param crc1    the CRC-32C of A
     * @param crc2    the CRC-32C of B
     * @param length2 the length of B in bytes
     * @return the CRC-32C of A followed by B
     */
    public static long combine(long crc1, long crc2, long length2) {
        Zeros z = last;
        if (z.length != length2) {
            z = new Zeros(length2, zeros(length2));
            last = z;
        }
        return times(z.operator, crc1) ^ crc2;
    }

    /** The operator that appends {@code length} zero bytes to a CRC-32C. */
    private static long[] zeros(long length) {
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
