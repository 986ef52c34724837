package dev.jpipeline;

/**
 * A byte count with an alignment promise: mirrors {@code cuda::aligned_size_t<Alignment>}.
 *
 * <p>The promise is that {@code bytes} is a multiple of {@code alignment} and that both the source and the
 * destination of the copy are {@code alignment}-aligned. CUDA asserts the first only in debug builds and
 * leaves a broken second promise undefined; jpipeline checks both and throws {@link IllegalArgumentException}.
 *
 * @param alignment a power of two, at least 1
 * @param bytes     a non-negative multiple of {@code alignment}
 */
public record AlignedSize(long alignment, long bytes) {

    /** Validates the record; see the class description for the rules. */
    public AlignedSize {
        if (alignment < 1 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("AlignedSize alignment must be a power of two, got " + alignment);
        }
        if (bytes < 0) {
            throw new IllegalArgumentException("AlignedSize bytes must not be negative, got " + bytes);
        }
        if (bytes % alignment != 0) {
            throw new IllegalArgumentException("AlignedSize bytes must be a multiple of the alignment: "
                + bytes + " is not a multiple of " + alignment);
        }
    }

    /**
     * {@code cuda::aligned_size_t<alignment>(bytes)}.
     *
     * @param alignment the alignment in bytes, a power of two
     * @param bytes     the size in bytes, a multiple of {@code alignment}
     * @return the aligned size
     * @throws IllegalArgumentException when the alignment is not a power of two or the size not a multiple of it
     */
    public static AlignedSize of(long alignment, long bytes) {
        return new AlignedSize(alignment, bytes);
    }
}
