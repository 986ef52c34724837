package dev.jpipeline.simt;

/**
 * A grid or block extent, or a thread or block index: mirrors CUDA's {@code dim3} (and the {@code uint3} of
 * {@code threadIdx} / {@code blockIdx}).
 *
 * <p>As an extent every component is at least 1 ({@link #of(int, int, int)} checks it, as a kernel launch
 * does); as an index every component is at least 0. Linear numbering follows CUDA: x varies fastest, so the
 * thread rank within a block is {@code x + y * blockDim.x + z * blockDim.x * blockDim.y}.
 *
 * @param x the fastest-varying component
 * @param y the middle component
 * @param z the slowest-varying component
 */
public record Dim3(int x, int y, int z) {

    /**
     * Validates that no component is negative (a negative index or extent has no meaning in CUDA). Zero is
     * accepted, as an index component; use {@link #of(int, int, int)} for an extent.
     *
     * @param x the fastest-varying component, at least 0
     * @param y the middle component, at least 0
     * @param z the slowest-varying component, at least 0
     * @throws IllegalArgumentException when a component is negative
     */
    public Dim3 {
        if (x < 0 || y < 0 || z < 0) {
            throw new IllegalArgumentException("dim3 components must not be negative, got " + this);
        }
    }

    /**
     * {@code dim3(x)}: an extent of x × 1 × 1.
     *
     * @param x the number of points along x, at least 1
     * @return the extent {@code (x, 1, 1)}, never null
     * @throws IllegalArgumentException when {@code x} is below 1
     */
    public static Dim3 of(int x) {
        return of(x, 1, 1);
    }

    /**
     * {@code dim3(x, y)}: an extent of x × y × 1.
     *
     * @param x the number of points along x (fastest-varying), at least 1
     * @param y the number of points along y, at least 1
     * @return the extent {@code (x, y, 1)}, never null
     * @throws IllegalArgumentException when a component is below 1
     */
    public static Dim3 of(int x, int y) {
        return of(x, y, 1);
    }

    /**
     * {@code dim3(x, y, z)} used as an extent: every component must be at least 1.
     *
     * @param x the number of points along x (fastest-varying), at least 1
     * @param y the number of points along y, at least 1
     * @param z the number of points along z (slowest-varying), at least 1
     * @return the extent {@code (x, y, z)}, never null
     * @throws IllegalArgumentException when a component is below 1
     */
    public static Dim3 of(int x, int y, int z) {
        if (x < 1 || y < 1 || z < 1) {
            throw new IllegalArgumentException("a grid or block extent needs every component >= 1, got ("
                + x + ", " + y + ", " + z + ")");
        }
        return new Dim3(x, y, z);
    }

    /**
     * The number of points in this extent, {@code x * y * z}: for a block extent its thread count, for a grid
     * extent its block count.
     *
     * @return {@code x * y * z}; at least 1 for an extent made by {@link #of(int, int, int)}, 0 when a component
     *         is 0
     * @throws ArithmeticException when the product does not fit in an {@code int}
     */
    public int volume() {
        return Math.multiplyExact(Math.multiplyExact(x, y), z);
    }

    /**
     * The linear rank of {@code index} within this extent (x fastest), as CUDA numbers the threads of a block:
     * {@code index.x + x * (index.y + y * index.z)}.
     *
     * @param index a point of this extent, not null: every component below the matching component of this
     * @return the rank of {@code index}, in {@code 0..volume()-1}
     * @throws NullPointerException     when {@code index} is null
     * @throws IllegalArgumentException when {@code index} lies outside this extent
     */
    public int linear(Dim3 index) {
        if (index.x >= x || index.y >= y || index.z >= z) {
            throw new IllegalArgumentException("index " + index + " lies outside the extent " + this);
        }
        return index.x + x * (index.y + y * index.z);
    }

    /**
     * The index whose linear rank within this extent is {@code rank}: the inverse of {@link #linear(Dim3)}.
     *
     * @param rank a linear rank, in {@code 0..volume()-1}
     * @return the point of this extent with that rank, never null; every component at least 0 and below the
     *         matching component of this extent
     * @throws IllegalArgumentException when {@code rank} is outside {@code 0..volume()-1}
     * @throws ArithmeticException      when this extent's volume does not fit in an {@code int}
     */
    public Dim3 index(int rank) {
        if (rank < 0 || rank >= volume()) {
            throw new IllegalArgumentException("rank " + rank + " is outside 0.." + (volume() - 1) + " of " + this);
        }
        return new Dim3(rank % x, rank / x % y, rank / x / y);
    }

    /**
     * CUDA's usual notation for a {@code dim3}.
     *
     * @return {@code "(x, y, z)"}, for example {@code "(256, 1, 1)"}
     */
    @Override
    public String toString() {
        return "(" + x + ", " + y + ", " + z + ")";
    }
}
