package dev.jpipeline.simt;

import dev.jpipeline.Group;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.internal.MakeRendezvous;
import dev.jpipeline.internal.ApiAccess;

/**
 * {@code Pipeline.make(ctx.block(), state, ...)} at a compiled thread (RegionCompiler.isMake): the collective make,
 * whose two group syncs are the block's {@code __syncthreads}, taken in steps so that the thread gives its stack up
 * at them as at a sync of its own.
 *
 * <pre>
 * The compiled call is block sync point k, whose frame keeps the call's arguments. The step calls make(..., ctx):
 *   no make in progress (kt.making null):  begin (the proposal is written)    -> null
 *   begun, not decided:                    decide (verdict, handle)            -> null
 *   decided:                               end; the pipeline, or the verdict's exception for every rank
 * null: the step returns k + 1, which Strand.stepCompiled passes as a __syncthreads (the thread arrives at the
 * block's barrier and is suspended until every thread has), and the thread resumes in front of the call, calling it
 * again. These are MakeRendezvous.make's steps with the compiled syncs between them, so the make means what it means
 * on strands: same proposals, same verdicts, same syncs (checked execution decides at them as at any sync).
 * An abort at either sync ends the make (Strand.awaitSync: abandon), as a sync that throws does on strands.
 * Pipeline.make itself, which waits with its stack, where the steps do not apply: a group other than the
 * thread's own block (a tile, the grid), a state of system scope (whose rendezvous lives in a mapped region), no
 * state, or a thread that is not compiled on its block's scheduler.
 * </pre>
 */
final class CompiledMake {

    private CompiledMake() {
    }

    /** {@code Pipeline.make(group, state)}: the pipeline, or null to sync first. */
    static Pipeline make(Group group, PipelineSharedState state, KernelContext ctx) {
        return make(group, state, ctx, maker -> maker.beginUnified(group), () -> Pipeline.make(group, state));
    }

    /** {@code Pipeline.make(group, state, producerCount)}: the pipeline, or null to sync first. */
    static Pipeline make(Group group, PipelineSharedState state, int producerCount, KernelContext ctx) {
        return make(group, state, ctx, maker -> maker.beginByCount(group, producerCount),
            () -> Pipeline.make(group, state, producerCount));
    }

    /** {@code Pipeline.make(group, state, role)}: the pipeline, or null to sync first. */
    static Pipeline make(Group group, PipelineSharedState state, PipelineRole role, KernelContext ctx) {
        return make(group, state, ctx, maker -> maker.beginByRole(group, role),
            () -> Pipeline.make(group, state, role));
    }

    /**
     * One step of a make: the next step of the make in progress, or the first ({@code begin}), or the whole make with
     * its stack ({@code withStack}) where the steps do not apply.
     */
    private static Pipeline make(Group group, PipelineSharedState state, KernelContext ctx,
                                 java.util.function.Function<MakeRendezvous, MakeRendezvous.Making> begin,
                                 java.util.function.Supplier<Pipeline> withStack) {
        MakeRendezvous.Making making = current(group, state, ctx);
        if (making != null) {
            return step(ctx, making);
        }
        MakeRendezvous maker = stepped(group, state, ctx);
        if (maker == null) {
            return withStack.get();
        }
        return begun(ctx, begin.apply(maker));
    }

    /** The make {@code ctx}'s thread has in progress, or null. */
    private static MakeRendezvous.Making current(Group group, PipelineSharedState state, KernelContext ctx) {
        KernelThread kt = ctx.thread();
        return kt.context == ctx ? kt.making : null;
    }

    /** The state's in-process rendezvous when this make can go in steps, else null. */
    private static MakeRendezvous stepped(Group group, PipelineSharedState state, KernelContext ctx) {
        KernelThread kt = ctx.thread();
        if (state == null || group != ctx.block() || kt.context != ctx) {
            return null;                // not the thread's own block, or not a thread compiled on its scheduler
        }
        return ApiAccess.maker(state) instanceof MakeRendezvous in ? in : null;
    }

    private static Pipeline begun(KernelContext ctx, MakeRendezvous.Making making) {
        ctx.thread().making = making;
        return null;                    // sync #1
    }

    private static Pipeline step(KernelContext ctx, MakeRendezvous.Making making) {
        if (!making.decided()) {
            making.decide();
            return null;                // sync #2
        }
        ctx.thread().making = null;
        making.end();
        return ApiAccess.wrap(making.handle());
    }

    /** {@code kt}'s make in progress, if any, is over: the launch was aborted at one of its syncs, or kt ended. */
    static void abandon(KernelThread kt) {
        MakeRendezvous.Making making = kt.making;
        if (making != null) {
            kt.making = null;
            making.end();
        }
    }
}
