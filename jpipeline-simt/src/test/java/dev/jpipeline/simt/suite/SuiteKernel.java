package dev.jpipeline.simt.suite;

import dev.jpipeline.simt.Dim3;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * One kernel of the GPUVerify CUDA test suite, ported to the SIMT API: its path in GPUVerify's
 * {@code testsuite/CUDA}, its label, the launch the port makes and the run that checked execution explores.
 *
 * @param path                 the kernel's directory under GPUVerify's {@code testsuite/CUDA} (its name here)
 * @param label                GPUVerify's verdict
 * @param grid                 the grid the run launches (GPUVerify's, or reduced where huge: see the twin)
 * @param block                the block the run launches
 * @param readsUninitialized   whether the kernel reads shared memory that nothing wrote, which checked execution
 *                             reports as {@code POISON_READ} and GPUVerify does not check
 * @param run                  builds fresh inputs, launches the kernel once and returns what it wrote to global
 *                             memory (so that schedules can be compared)
 */
record SuiteKernel(String path, Label label, Dim3 grid, Dim3 block, boolean readsUninitialized,
                   Supplier<Object> run) {

    SuiteKernel {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(label, "label");
        Objects.requireNonNull(grid, "grid");
        Objects.requireNonNull(block, "block");
        Objects.requireNonNull(run, "run");
        if (readsUninitialized && label != Label.RACE_FREE) {
            throw new IllegalArgumentException(path + ": only a race-free kernel may expect an uninitialized read");
        }
    }

    static SuiteKernel racy(String path, Dim3 grid, Dim3 block, Supplier<Object> run) {
        return new SuiteKernel(path, Label.RACY, grid, block, false, run);
    }

    static SuiteKernel raceFree(String path, Dim3 grid, Dim3 block, Supplier<Object> run) {
        return new SuiteKernel(path, Label.RACE_FREE, grid, block, false, run);
    }

    /** A race-free kernel that reads shared memory nothing wrote (GPUVerify checks races, not initialization). */
    static SuiteKernel raceFreeReadingUninitialized(String path, Dim3 grid, Dim3 block, Supplier<Object> run) {
        return new SuiteKernel(path, Label.RACE_FREE, grid, block, true, run);
    }

    static SuiteKernel assumedRaceFree(String path, Dim3 grid, Dim3 block, Supplier<Object> run) {
        return new SuiteKernel(path, Label.ASSUMED_RACE_FREE, grid, block, false, run);
    }

    static SuiteKernel divergent(String path, Dim3 grid, Dim3 block, Supplier<Object> run) {
        return new SuiteKernel(path, Label.BARRIER_DIVERGENCE, grid, block, false, run);
    }

    /** The name of its CUDA twin in {@code oracle/gpuverify}: the path with {@code /} as {@code _}. */
    String twinName() {
        return path.replace('/', '_');
    }

    @Override
    public String toString() {
        return path;
    }
}
