package dev.jpipeline.simt;

/** Kernels declared in an interface, whose private helpers are called with invokeinterface (SyncInlinerTest). */
interface InterfaceKernels {

    private void store(KernelContext ctx, long[] out) {
        int n = ctx.blockDim().x();
        out[ctx.threadRank()] = ctx.threadRank() + 1;
        ctx.syncThreads();
        out[n + ctx.threadRank()] = out[(ctx.threadRank() + 1) % n];
    }

    private static void storeStatic(KernelContext ctx, long[] out) {
        int n = ctx.blockDim().x();
        out[ctx.threadRank()] = ctx.threadRank() + 1;
        ctx.syncThreads();
        out[n + ctx.threadRank()] = out[(ctx.threadRank() + 1) % n];
    }

    default KernelBody instanceHelper(long[] out) {
        return ctx -> store(ctx, out);
    }

    static KernelBody staticHelper(long[] out) {
        return ctx -> storeStatic(ctx, out);
    }
}
