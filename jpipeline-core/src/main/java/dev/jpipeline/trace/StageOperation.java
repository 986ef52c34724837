package dev.jpipeline.trace;

/** The pipeline operations a {@link Tracer} records. */
public enum StageOperation {
    /** {@code producer_acquire}: the span is the wait for a free stage. */
    ACQUIRE,
    /** {@code producer_commit}: an instant. */
    COMMIT,
    /** A {@code memcpy_async} into a stage: from its submission until its last byte landed. */
    COPY,
    /** {@code consumer_wait} (or a timed wait that succeeded): the span is the wait for the stage. */
    WAIT,
    /** {@code consumer_release}: an instant. */
    RELEASE
}
