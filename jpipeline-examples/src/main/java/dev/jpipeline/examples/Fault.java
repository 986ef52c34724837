package dev.jpipeline.examples;

import dev.jpipeline.simt.FindingKind;

/**
 * The mistakes that {@link Examples#faulty()} plants in the documentation examples, each a change of one or two
 * lines of one example (marked {@code // BUG} there). An example made with a fault runs the mistaken lines in
 * place of the documentation's; made without one (null), it is the documentation's code.
 */
enum Fault {

    /** 4.10.7 ({@link ProducerConsumer}): the consumers read the stage, then wait for it. */
    READ_BEFORE_WAIT("4.10.7 producer-consumer: stage read before consumer_wait", FindingKind.POISON_READ,
        "the consumers read the stage and only then call consumer_wait: on a GPU they read whatever the buffer "
            + "holds (a copy not yet landed, or the previous batch), wrong only when the copy is slow"),

    /** 4.10.1 ({@link PipelineCreation}): the thread-scope round trip waits with a prior one too large. */
    WAIT_PRIOR_TOO_LARGE("4.10.1 creating pipelines: wait_prior one too large",
        FindingKind.POISON_READ,
        "the thread-scope pipeline waits with pipeline_consumer_wait_prior<1>, which leaves the newest batch, the "
            + "one it reads next, in flight: on a GPU the thread reads its element before the copy fills it, "
            + "wrong only when the copy is slow"),

    /** 4.10.6 ({@link TrackingAsyncCopies}): no {@code __syncthreads} between the waits and the use. */
    NO_SYNCTHREADS("4.10.6 cuda::pipeline: no __syncthreads before the use", FindingKind.POISON_READ,
        "each thread's consumer_wait covers only its own copies, and the __syncthreads that makes the other "
            + "threads' copies visible is missing: on a GPU a thread reads an element that another thread's copy "
            + "has not filled yet"),

    /** The notes' role partition ({@link RolePartition}): the consumers release the stage, then read it. */
    READ_AFTER_RELEASE("role-partitioned pipeline: stage read after consumer_release", FindingKind.POISON_READ,
        "the consumers release the stage before they read it: on a GPU the producers may already refill it, "
            + "and a consumer reads the next batch, or half of it"),

    /** 4.10.6 ({@link TrackingAsyncCopies}): {@code __syncthreads} in both branches of an {@code if}. */
    DIVERGENT_SYNCTHREADS("4.10.6 cuda::pipeline: __syncthreads in both branches of an if",
        FindingKind.DIVERGENT_BARRIER,
        "even and odd threads reach __syncthreads at two different call sites: CUDA requires every thread of "
            + "the block to reach the same __syncthreads; a GPU may hang or let the block run on unsynchronized"),

    /** 4.10.6 primitives ({@link TrackingAsyncCopiesPrimitives}): the last thread returns before the barrier. */
    RETURN_BEFORE_SYNCTHREADS("4.10.6 primitives: a thread returns before __syncthreads",
        FindingKind.PARTIAL_BARRIER,
        "the block's last thread returns after its copies and never reaches the __syncthreads that the others "
            + "wait in: undefined in CUDA; a GPU may hang or release the barrier early"),

    /** 4.10.6 ({@link TrackingAsyncCopies}, one warp): {@code __syncwarp} masks that disagree. */
    SYNCWARP_MASKS_DISAGREE("4.10.6 cuda::pipeline: __syncwarp masks that disagree", FindingKind.WARP_MASK,
        "the block is one warp, so __syncthreads became __syncwarp, but lane 0 passes only the first half-warp "
            + "(0x0000ffff) and the others the full mask, so each waits for the other: lanes that disagree on the "
            + "mask hang on a GPU, or run on unsynchronized"),

    /** The blog's binary partitions ({@link BinaryPartitions}): unguarded roles, the failure not caught. */
    UNGUARDED_ROLES("binary partitions: unguarded roles, failure not caught", FindingKind.ROLE_MIXUP,
        "every thread runs both the producer and the consumer code of a role-partitioned pipeline: on a GPU the "
            + "block hangs (jpipeline fails the launch naming the rule, and nothing catches the failure here)"),

    /** The blog's binary partitions ({@link BinaryPartitions}): a producer clears its pair's output after commit. */
    CLEAR_AFTER_COMMIT("binary partitions: output cleared after producer_commit", FindingKind.DATA_RACE,
        "each producer clears the output of its pair in global memory after producer_commit, while the consumer "
            + "that waits for the batch writes the same words: nothing orders the two writes, so on a GPU the "
            + "result is lost only when the producer is slow; no poison shows it, and racecheck does not watch "
            + "global memory");

    /** The faulty example's name. */
    final String title;
    /** What checked execution should report. */
    final FindingKind expected;
    /** The mistake and what a GPU does with it. */
    final String bug;

    Fault(String title, FindingKind expected, String bug) {
        this.title = title;
        this.expected = expected;
        this.bug = bug;
    }

    /** The documentation example with this mistake planted, small enough for checked execution. */
    FaultyExample example() {
        Example broken = switch (this) {
            case READ_BEFORE_WAIT -> ProducerConsumer.small(this);
            case WAIT_PRIOR_TOO_LARGE -> PipelineCreation.small(this);
            case RETURN_BEFORE_SYNCTHREADS -> TrackingAsyncCopiesPrimitives.small(this);
            case NO_SYNCTHREADS, DIVERGENT_SYNCTHREADS, SYNCWARP_MASKS_DISAGREE -> TrackingAsyncCopies.small(this);
            case READ_AFTER_RELEASE -> RolePartition.small(this);
            case UNGUARDED_ROLES, CLEAR_AFTER_COMMIT -> BinaryPartitions.small(this);
        };
        return new FaultyVariant(this, broken);
    }
}
